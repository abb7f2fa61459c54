package conformance

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	schema "github.com/coreruleset/ftw-tests-schema/v2/types"
)

// Outcomes of a test in one mode.
const (
	passed     = "passed"
	Failed     = "failed"     // no override explains it
	overridden = "overridden" // failed as an override of overrides.yaml says, with its reason
	notRun     = "not-run"    // the host died or the run was cut short before the test
)

// stageResult is what one stage of a test observed.
type stageResult struct {
	Status  int    `json:"status"`          // 0: no response
	Error   string `json:"error,omitempty"` // the exchange's error (no response, connection closed)
	IDs     []uint `json:"ids"`             // rule IDs logged between the markers
	Pass    bool   `json:"pass"`
	Why     string `json:"why,omitempty"` // why the stage failed
	Retried bool   `json:"retried,omitempty"`
	// Seconds is the stage's exchange, from connecting to the response
	// read or given up (both attempts of a retried stage), and HostCPU the
	// host process's CPU time meanwhile; MarkerSeconds is its markers',
	// each answered and its log line read. Runs recorded before them hold
	// none of them (0).
	Seconds       float64 `json:"seconds,omitempty"`
	HostCPU       float64 `json:"host_cpu_seconds,omitempty"`
	MarkerSeconds float64 `json:"marker_seconds,omitempty"`
}

// testResult is one test in one mode.
type testResult struct {
	ID       string        `json:"id"`
	RuleFile string        `json:"rule_file"`
	Outcome  string        `json:"outcome"`
	Why      string        `json:"why,omitempty"`      // the first failing stage's reason
	Override string        `json:"override,omitempty"` // the override entry's name, when one applies
	Stale    bool          `json:"stale,omitempty"`    // an override expects a failure, but the test passed
	Stages   []stageResult `json:"stages,omitempty"`
}

// target is a host in the crs-test configuration.
type target struct {
	Addr    string
	LogPath string
	// Exited reports whether the host's process has ended (nil: unknown).
	Exited func() bool
	// CPU reads the host process's CPU time so far (nil: unknown); it
	// tells a host evaluating a slow request from one holding it (busyWait).
	CPU func() (time.Duration, error)
	// Waiting reads the time the host's threads have waited for a CPU
	// so far (nil: unknown): busyWait counts it as work, so a host a
	// loaded machine starves is not taken for one holding a request.
	Waiting func() (time.Duration, error)
}

// options tunes a suite run.
type options struct {
	// Only, when set, runs only the tests whose ID it matches.
	Only *regexp.Regexp
	// MarkerWait bounds the wait for a marker's log line; 0 means 10s.
	MarkerWait time.Duration
	// Timeout bounds each exchange; 0 means 10s.
	Timeout time.Duration
	// BusyTimeout, when longer, bounds an exchange of the native hosts
	// while the host works: one still unanswered after Timeout goes on
	// while the host spent at least idleShare of the last Timeout on CPU
	// (busyWait). A loaded machine slows a host evaluating a large PL 4
	// request past Timeout without stopping it; a request the host holds
	// without evaluating it still ends after Timeout.
	BusyTimeout time.Duration
	// WasmTimeout, when longer, replaces Timeout for coraza-wasm: Coraza
	// compiled to WebAssembly under V8 takes seconds for a 64 KiB argument
	// at paranoia level 4, where the native modules take milliseconds.
	// The longer wait holds only while the host works: see busyWait.
	WasmTimeout time.Duration
	// WasmIdle is coraza-wasm's idle interval (busyWait); 0 waits the
	// whole WasmTimeout.
	WasmIdle time.Duration
	// idle, set with a raised Timeout, is the idle interval: an exchange
	// still unanswered ends as soon as the host spent less than idleShare
	// of the last interval on CPU (busyWait).
	idle time.Duration
	// engineVersions is each mode's engine version as meta.json records
	// it, known before the suite runs: a version-narrowed override
	// (Override.EngineVersions) is judged with it.
	engineVersions map[string]string
	// Progress, when set, is called after each test.
	Progress func(done, total int, r *testResult)
}

func (o options) withDefaults() options {
	if o.MarkerWait == 0 {
		o.MarkerWait = 10 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	return o
}

// errHostDied reports a host that stopped answering mid-suite.
var errHostDied = errors.New("host died mid-suite")

// runSuite sends every selected test of s to t and judges it. It returns
// the results so far and an ErrHostDied-wrapped error when the host stops
// answering (the remaining tests are NotRun), or ctx's error.
func runSuite(ctx context.Context, s *suite, t target, o options) ([]testResult, error) {
	o = o.withDefaults()
	tail, err := openTail(t.LogPath)
	if err != nil {
		return nil, err
	}
	defer tail.Close()
	var sel []test
	for _, tt := range s.Tests {
		if o.Only == nil || o.Only.MatchString(tt.ID) {
			sel = append(sel, tt)
		}
	}
	out := make([]testResult, 0, len(sel))
	var fatal error
	// marked: the last exchange was a marker whose line has been read, so it
	// is the next stage's start marker too. The suite is sent one request at
	// a time, as go-ftw sends it: every line logged after a marker's line and
	// before the next marker's line belongs to the one request between them.
	// (Concurrent tests against one host would interleave their lines in the
	// one log, and neither Envoy's nor nginx's log lines name the client
	// connection; the time goes to fewer and cheaper markers instead: one
	// marker between two stages, not go-ftw's two, and the marker rule turns
	// the engine off for the marker request itself, internal/crs.)
	marked := false
	for i, tt := range sel {
		r := testResult{ID: tt.ID, RuleFile: tt.RuleFile}
		if fatal != nil {
			r.Outcome, r.Why = notRun, fatal.Error()
			out = append(out, r)
			continue
		}
		r.Outcome = passed
		for si := range tt.Stages {
			st := &tt.Stages[si]
			sr, err := runStage(ctx, tail, t, o, fmt.Sprintf("%s-%d", tt.ID, si+1), st, marked)
			marked = err == nil
			if err == nil && !sr.Pass && st.Output.RetryOnce != nil && *st.Output.RetryOnce {
				first := sr
				sr, err = runStage(ctx, tail, t, o, fmt.Sprintf("%s-%d-retry", tt.ID, si+1), st, marked)
				sr.Retried = true
				sr.Seconds += first.Seconds
				sr.HostCPU += first.HostCPU
				sr.MarkerSeconds += first.MarkerSeconds
			}
			if err != nil {
				if ctx.Err() != nil {
					return out, ctx.Err() // the finished tests are kept; this one is NotRun
				}
				fatal = err
				r.Outcome, r.Why = notRun, err.Error()
				break
			}
			r.Stages = append(r.Stages, sr)
			if !sr.Pass && r.Outcome == passed {
				r.Outcome, r.Why = Failed, fmt.Sprintf("stage %d: %s", si+1, sr.Why)
			}
		}
		out = append(out, r)
		if o.Progress != nil {
			o.Progress(i+1, len(sel), &out[len(out)-1])
		}
	}
	if fatal != nil {
		return out, fatal
	}
	return out, nil
}

// runStage sends the start marker (unless marked: the previous stage's end
// marker is this one's start), the stage's request and the end marker, and
// judges the stage from the response and the lines logged between the
// markers. Its error means the host itself failed (a marker went
// unanswered or unlogged): the suite cannot go on.
func runStage(ctx context.Context, tail *logTail, t target, o options, stageID string, st *schema.Stage, marked bool) (stageResult, error) {
	var sr stageResult
	raw, method, err := request(&st.Input)
	if err != nil {
		sr.Why = "the test's request cannot be built: " + err.Error()
		return sr, nil
	}
	start, end := "wafbench-"+stageID+"-start", "wafbench-"+stageID+"-end"
	began := time.Now()
	if !marked {
		if err := mark(ctx, tail, t, o, start); err != nil {
			return sr, err
		}
	}
	cpu0, cpuErr := hostCPU(t)
	sent := time.Now()
	status, full, xerr := busyWait(ctx, t, o, func(ctx context.Context) (int, []byte, error) {
		return exchange(ctx, t.Addr, raw, method, o.Timeout)
	})
	answered := time.Now()
	sr.Status, sr.Seconds = status, seconds(answered.Sub(sent))
	if cpu1, err := hostCPU(t); err == nil && cpuErr == nil {
		sr.HostCPU = seconds(cpu1 - cpu0)
	}
	if xerr != nil {
		sr.Error = xerr.Error()
	}
	if err := mark(ctx, tail, t, o, end); err != nil {
		return sr, err
	}
	sr.MarkerSeconds = seconds(sent.Sub(began) + time.Since(answered))
	sr.IDs = iDs(tail.last)
	sr.Pass, sr.Why = judge(&st.Output, status, full, xerr, tail.last, sr.IDs)
	return sr, nil
}

// hostCPU is t.CPU(), or an error when the host's CPU is unknown.
func hostCPU(t target) (time.Duration, error) {
	if t.CPU == nil {
		return 0, errors.New("host CPU unknown")
	}
	return t.CPU()
}

// seconds is d in seconds to 0.1 ms, as a stage records it.
func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1e4) / 1e4 }

// mark sends a marker request and waits for its log line; tail.last holds
// the lines logged before it since the previous marker.
func mark(ctx context.Context, tail *logTail, t target, o options, marker string) error {
	// A marker waits for the host to finish what it was evaluating (a stage
	// whose exchange timed out may still be running): MarkerWait, not the
	// stage timeout, bounds it.
	status, _, err := exchange(ctx, t.Addr, markerRequest(marker), "GET", max(o.Timeout, o.MarkerWait))
	if err = statusOnly(err); err != nil {
		if t.Exited != nil && t.Exited() {
			return fmt.Errorf("%w: the process exited (marker %s: %v)", errHostDied, marker, err)
		}
		return fmt.Errorf("%w: marker request %s: %v", errHostDied, marker, err)
	}
	if status == 0 {
		return fmt.Errorf("%w: marker request %s answered nothing", errHostDied, marker)
	}
	lines, err := tail.until(ctx, marker, o.MarkerWait)
	if err != nil {
		return fmt.Errorf("%w: %v", errHostDied, err)
	}
	tail.last = lines
	return nil
}

// judge decides a stage in go-ftw's order — an expected error first, then
// the status, the response regex, the log regexes and the rule IDs — and is
// stricter than go-ftw 2.1.0's runner in two places: an `isolated` stage
// must log its expected ID and no other (go-ftw checks only that exactly one
// rule fired, and that check replaces the result of the ID check before
// it), and a test of several stages fails when any stage fails (runSuite;
// go-ftw keeps the last stage's result as the test's). A status whose body
// was cut short is an answer, not an error: its status is judged, its text
// is not matched.
func judge(out *schema.Output, status int, full []byte, xerr error, lines []string, ids []uint) (bool, string) {
	var cut *bodyError
	if errors.As(xerr, &cut) {
		xerr = nil
	}
	if out.ExpectError != nil && *out.ExpectError {
		if xerr != nil {
			return true, ""
		}
		return false, fmt.Sprintf("expected an error, got status %d", status)
	}
	if xerr != nil {
		return false, "no response: " + xerr.Error()
	}
	if out.Status != 0 && out.Status != status {
		return false, fmt.Sprintf("status %d, want %d", status, out.Status)
	}
	if out.ResponseContains != "" && cut != nil {
		return false, fmt.Sprintf("response_contains %q not judged: %v", out.ResponseContains, cut)
	}
	if out.ResponseContains != "" {
		ok, err := regexp.Match(out.ResponseContains, full)
		if err != nil {
			return false, "response_contains: " + err.Error()
		}
		if !ok {
			return false, fmt.Sprintf("response does not match %q", out.ResponseContains)
		}
	}
	lg := out.Log
	if lg.MatchRegex != "" {
		re, err := regexp.Compile(lg.MatchRegex)
		if err != nil {
			return false, "match_regex: " + err.Error()
		}
		if !slices.ContainsFunc(lines, re.MatchString) {
			return false, fmt.Sprintf("log does not match %q", lg.MatchRegex)
		}
	}
	var missing []uint
	for _, id := range lg.ExpectIds {
		if !slices.Contains(ids, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return false, fmt.Sprintf("expected ids %v not logged (logged %v)", missing, ids)
	}
	if out.Isolated && len(ids) != 1 {
		return false, fmt.Sprintf("isolated: logged %v, want only %v", ids, lg.ExpectIds)
	}
	if lg.NoMatchRegex != "" {
		re, err := regexp.Compile(lg.NoMatchRegex)
		if err != nil {
			return false, "no_match_regex: " + err.Error()
		}
		if slices.ContainsFunc(lines, re.MatchString) {
			return false, fmt.Sprintf("log matches %q", lg.NoMatchRegex)
		}
	}
	var unexpected []uint
	for _, id := range lg.NoExpectIds {
		if slices.Contains(ids, id) {
			unexpected = append(unexpected, id)
		}
	}
	if len(unexpected) > 0 {
		return false, fmt.Sprintf("ids %v logged, want none of them", unexpected)
	}
	return true, ""
}

// idleShare is the share of an interval a host must spend on CPU to count
// as working on the request it has not answered yet.
const idleShare = 0.05

// errHostIdle ends an exchange the host holds without working on it.
var errHostIdle = errors.New("host idle")

// busyWait runs exchange, and when o.idle is set (a raised timeout) checks
// the host's CPU time every o.idle: an exchange still unanswered after an
// interval in which the host spent less than idleShare of it on CPU ends
// then. A slow engine evaluating a request keeps a core busy and gets the
// whole raised timeout; a request the host holds without evaluating it (a
// CONNECT Envoy's codec neither forwards nor answers) costs o.idle, not
// the raised timeout. Ending it sooner than the base Timeout judges it as
// the base Timeout would: in the crs-test configuration nothing else
// answers a request the host holds idle (Envoy's own timers are 10 s and
// longer, the backend answers at once), so it would be unanswered then
// too. Without o.idle or t.CPU it is exchange itself.
func busyWait(ctx context.Context, t target, o options, exchange func(context.Context) (int, []byte, error)) (int, []byte, error) {
	if o.idle <= 0 || o.idle >= o.Timeout || t.CPU == nil {
		return exchange(ctx)
	}
	begin := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(o.idle)
		defer tick.Stop()
		last, err := hostWork(t)
		for err == nil {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var now time.Duration
			if now, err = hostWork(t); err == nil {
				if busy := now - last; busy < time.Duration(idleShare*float64(o.idle)) {
					cancel(fmt.Errorf("%w: no answer within %v, and the host spent %v of the last %v on CPU or waiting for one (it holds the request, it is not evaluating it)",
						errHostIdle, time.Since(begin).Round(time.Second), busy.Round(time.Millisecond), o.idle))
					return
				}
				last = now
			}
		}
	}()
	status, full, err := exchange(ctx)
	close(done)
	if cause := context.Cause(ctx); errors.Is(cause, errHostIdle) {
		err = cause
	}
	return status, full, err
}

// hostWork is the host's CPU time plus, when known, the time its threads
// waited for a CPU: what a host evaluating a request accumulates however
// busy the machine is, and an idle host does not.
func hostWork(t target) (time.Duration, error) {
	cpu, err := t.CPU()
	if err != nil || t.Waiting == nil {
		return cpu, err
	}
	wait, err := t.Waiting()
	return cpu + wait, err
}

// exchange writes raw on a fresh connection to addr while reading the
// response (a host may answer before it has read the body), and returns the
// status and the whole response as received. A host that closes the
// connection without a status line is an error (an outcome of the stage,
// not of the harness).
func exchange(ctx context.Context, addr string, raw []byte, method string, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	defer context.AfterFunc(ctx, func() { conn.Close() })() // a cancelled exchange ends at once
	go func() { conn.Write(raw) }()                         // a write the host stops reading ends with conn.Close
	var full bytes.Buffer
	br := bufio.NewReader(io.TeeReader(conn, &full))
	if strings.EqualFold(method, "HEAD") {
		method = "HEAD"
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		return 0, full.Bytes(), err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		// A status arrived but the body did not end as its framing says:
		// the status stands, and a stage that judges the response's text
		// fails on it (judge) instead of matching a truncated body.
		return resp.StatusCode, full.Bytes(), &bodyError{err}
	}
	return resp.StatusCode, full.Bytes(), nil
}

// bodyError is an exchange whose status line and headers arrived but whose
// body did not end as framed (the host closed early, reset, or the stage's
// timeout ended it).
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "response body cut short: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// statusOnly is err unless it is a bodyError: callers that judge only the
// status (markers, the logging proof) accept an answer whose body was cut.
func statusOnly(err error) error {
	var be *bodyError
	if errors.As(err, &be) {
		return nil
	}
	return err
}

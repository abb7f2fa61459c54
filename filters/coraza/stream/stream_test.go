package stream

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"wafbench/filters/coraza/engine"
	"wafbench/internal/crs"
)

// recorder is a FailCloser that records what Rescue asked of it.
type recorder struct {
	calls int
	err   error
	reply bool
}

func (r *recorder) FailClosed(err error, reply bool) { r.calls, r.err, r.reply = r.calls+1, err, reply }

type status uint32

const (
	statusContinue status = 0
	statusStop     status = 1
)

// hook behaves like an exported hook: it defers Rescue and returns
// statusContinue unless it panics.
func hook(r *recorder, reply bool, body func()) (st status) {
	defer Rescue(r, &st, statusStop, reply)
	body()
	return statusContinue
}

func TestRescue(t *testing.T) {
	for _, tc := range []struct {
		name      string
		body      func()
		reply     bool
		want      status
		wantCalls int
		wantErr   string
	}{
		{name: "no panic", body: func() {}, reply: true, want: statusContinue},
		{name: "panic string", body: func() { panic("boom") }, reply: true, want: statusStop, wantCalls: 1, wantErr: "panic: boom"},
		{name: "panic error", body: func() { panic(errors.New("engine exploded")) }, reply: true, want: statusStop, wantCalls: 1, wantErr: "panic: engine exploded"},
		{name: "nil map write", body: func() {
			var m map[string]int
			m["x"] = 1
		}, reply: true, want: statusStop, wantCalls: 1, wantErr: "assignment to entry in nil map"},
		{name: "after the response", body: func() { panic("late") }, reply: false, want: statusStop, wantCalls: 1, wantErr: "panic: late"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			got := hook(r, tc.reply, tc.body)
			if got != tc.want || r.calls != tc.wantCalls {
				t.Fatalf("got status %d, %d FailClosed calls; want %d, %d", got, r.calls, tc.want, tc.wantCalls)
			}
			if tc.wantCalls == 0 {
				return
			}
			if !strings.Contains(r.err.Error(), tc.wantErr) || !strings.Contains(r.err.Error(), "stream_test.go") {
				t.Errorf("error: got %q, want it to contain %q and the panicking frame", r.err, tc.wantErr)
			}
			if r.reply != tc.reply {
				t.Errorf("reply: got %v, want %v", r.reply, tc.reply)
			}
		})
	}
}

// host records what a stream asked of its proxy.
type host struct {
	counts  map[Counter]uint64
	replies []int
	reasons []Reason
	errs    []string
}

func (h *host) Inc(c Counter, v uint64) {
	if h.counts == nil {
		h.counts = map[Counter]uint64{}
	}
	h.counts[c] += v
}
func (h *host) Reply(status int, r Reason) {
	h.replies, h.reasons = append(h.replies, status), append(h.reasons, r)
}
func (h *host) LogError(msg string) { h.errs = append(h.errs, msg) }

var (
	crsOnce sync.Once
	crsWAF  *engine.WAF
	crsErr  error
)

// loadCRS loads the real CRS, exported once per test binary.
func loadCRS(t *testing.T) *engine.WAF {
	t.Helper()
	crsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wafbench-stream-crs-")
		if err != nil {
			crsErr = err
			return
		}
		m, err := crs.Export(dir, crs.Options{})
		if err != nil {
			crsErr = err
			return
		}
		crsWAF, crsErr = engine.New(engine.Config{RulesFile: m.MainConf, MaxBodyBytes: 64})
		os.RemoveAll(dir)
	})
	if crsErr != nil {
		t.Fatalf("load CRS: %v", crsErr)
	}
	return crsWAF
}

var reqHeaders = [][2]string{{":method", "GET"}, {":path", "/"}, {":authority", "bench.local"},
	{"user-agent", "wafbench/1.0"}, {"accept", "*/*"}}

func request(path, method string, extra ...[2]string) Request {
	hs := append([][2]string{}, reqHeaders...)
	hs[0][1], hs[1][1] = method, path
	return Request{Headers: append(hs, extra...), Client: "127.0.0.1:40000", Server: "127.0.0.1:8080"}
}

// TestStream drives the shared request logic with the real CRS and checks
// what each kind of request does to the proxy: forwarded or answered, with
// which status and reason, and which counters move.
func TestStream(t *testing.T) {
	w := loadCRS(t)
	json := [2]string{"content-type", "application/json"}
	for _, tc := range []struct {
		name        string
		req         Request
		body        []byte // nil: no body (end of stream with the headers)
		wantForward bool
		wantReply   int
		wantReason  Reason
		wantCounts  map[Counter]uint64
	}{
		{name: "benign get", req: request("/safe", "GET"), wantForward: true,
			wantCounts: map[Counter]uint64{requests: 1}},
		{name: "sqli query", req: request("/?id=1%27%20OR%20%271%27=%271", "GET"), wantReply: 403, wantReason: replyPhase2,
			wantCounts: map[Counter]uint64{requests: 1, blockedPhase2: 1}},
		{name: "benign json body", req: request("/api", "POST", json), body: []byte(`{"a":"b"}`), wantForward: true,
			wantCounts: map[Counter]uint64{requests: 1}},
		{name: "sqli json body", req: request("/api", "POST", json), body: []byte(`{"q":"1' OR '1'='1"}`), wantReply: 403,
			wantReason: replyPhase2, wantCounts: map[Counter]uint64{requests: 1, blockedPhase2: 1}},
		{name: "body over the limit", req: request("/api", "POST", json), body: []byte(strings.Repeat("a", 65)), wantReply: 413,
			wantReason: replyBodyTooLarge, wantCounts: map[Counter]uint64{requests: 1, bodyTooLarge: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &host{}
			s := New(&Filter{WAF: w}, h)
			s.Start()
			forward := s.RequestHeaders(tc.req, tc.body == nil)
			if tc.body != nil {
				if forward {
					t.Fatal("headers of a request with a body: forwarded before the body was inspected")
				}
				if !s.CheckBodySize(uint64(len(tc.body))) {
					forward = s.Body([][]byte{tc.body[:len(tc.body)/2], tc.body[len(tc.body)/2:]})
				}
			}
			s.Log()
			if forward != tc.wantForward {
				t.Errorf("forwarded: got %v, want %v", forward, tc.wantForward)
			}
			if tc.wantReply == 0 && len(h.replies) != 0 {
				t.Errorf("replies: got %v, want none", h.replies)
			}
			if tc.wantReply != 0 && (len(h.replies) != 1 || h.replies[0] != tc.wantReply || h.reasons[0] != tc.wantReason) {
				t.Errorf("replies: got %v %v, want [%d] [%s]", h.replies, h.reasons, tc.wantReply, tc.wantReason.Details())
			}
			for c := range NumCounters {
				if h.counts[c] != tc.wantCounts[c] {
					t.Errorf("%s: got %d, want %d", CounterNames[c], h.counts[c], tc.wantCounts[c])
				}
			}
			if s.Started() {
				t.Error("Log left the transaction open")
			}
		})
	}
}

// TestFailClosed checks that an engine failure is counted once and
// answered 500 once, however often the glue reports it.
func TestFailClosed(t *testing.T) {
	h := &host{}
	s := New(&Filter{WAF: loadCRS(t)}, h)
	s.Start()
	s.FailClosed(errors.New("boom"), true)
	s.FailClosed(errors.New("again"), true)
	if h.counts[engineErrors] != 1 || len(h.replies) != 1 || h.replies[0] != 500 || h.reasons[0] != replyEngineError {
		t.Errorf("got engine_errors %d, replies %v; want 1 and one 500", h.counts[engineErrors], h.replies)
	}
	if len(h.errs) != 2 || !strings.Contains(h.errs[0], "failing closed: boom") {
		t.Errorf("logged %q", h.errs)
	}
}

// TestStageTimers checks that the timers are defined and moved only when
// stage timers are on.
func TestStageTimers(t *testing.T) {
	for _, on := range []bool{false, true} {
		h := &host{}
		f := &Filter{WAF: loadCRS(t), Timers: on}
		s := New(f, h)
		s.Start()
		s.RequestHeaders(request("/safe", "GET"), true)
		s.Log()
		for c := FirstTimer; c < NumCounters; c++ {
			if f.Defined(c) != on {
				t.Errorf("timers %v: %s defined %v", on, CounterNames[c], f.Defined(c))
			}
			if c != bodyNs && (h.counts[c] > 0) != on {
				t.Errorf("timers %v: %s = %d", on, CounterNames[c], h.counts[c])
			}
		}
	}
}

// TestCounterNames pins the counter names of the shared contract.
func TestCounterNames(t *testing.T) {
	want := []string{"requests", "blocked_phase1", "blocked_phase2", "body_too_large", "engine_errors",
		"phase1_ns", "body_ns", "phase2_ns", "logging_ns"}
	for i, w := range want {
		if got := CounterNames[i]; got != "wafbench_coraza_"+w {
			t.Errorf("counter %d: got %q, want %q", i, got, "wafbench_coraza_"+w)
		}
	}
	if CounterNames[FirstTimer] != "wafbench_coraza_phase1_ns" {
		t.Errorf("first timer: got %q", CounterNames[FirstTimer])
	}
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    engine.Config
		wantErr string
	}{
		{
			name: "full",
			in:   `{"rules_file": "/abs/main.conf", "inspect_response": true, "max_body_bytes": 1048576}`,
			want: engine.Config{RulesFile: "/abs/main.conf", InspectResponse: true, MaxBodyBytes: 1 << 20},
		},
		{name: "defaults", in: `{"rules_file": "/abs/main.conf"}`, want: engine.Config{RulesFile: "/abs/main.conf"}},
		{name: "unknown field", in: `{"rules_file": "/a", "rule_file": "/b"}`, wantErr: "unknown field"},
		{name: "relative", in: `{"rules_file": "main.conf"}`, wantErr: "absolute"},
		{name: "missing", in: `{}`, wantErr: "rules_file"},
		{name: "not json", in: `rules_file=/a`, wantErr: "filter_config"},
		{name: "trailing", in: `{"rules_file": "/a"} {}`, wantErr: "trailing"},
		{name: "wasm files field", in: `{"rules_file": "/a", "files": {}}`, wantErr: "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseConfig(%s): got err %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseConfig(%s): got %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

//go:build wasip1

// Command coraza-wasm is wafbench's Coraza v3 filter as a proxy-wasm
// plugin (ABI v0.2.1) for Envoy's envoy.filters.http.wasm with the V8
// runtime. It runs the same engine and request logic as the native dynamic
// module (packages engine and stream under filters/coraza); only the host
// glue differs, here through wafbench's own binding (filters/proxywasm).
//
// Build (the Makefile target `wasm` in filters/coraza does this):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -tags no_fs_access \
//	    -o build/filters/coraza.wasm ./filters/coraza-wasm
//
// no_fs_access skips Coraza's start-up check that it can create files,
// which fails in a VM without a file system. The rule files arrive in the
// plugin configuration (see pluginConfig), not from disk.
package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"wafbench/filters/coraza/engine"
	"wafbench/filters/coraza/stream"
	pw "wafbench/filters/proxywasm"
	"wafbench/internal/rulefiles"
)

// buildName is the mode name of this build (preamble contract 3).
var buildName = "coraza-wasm"

func main() {}

func init() {
	pw.SetNewPlugin(func(uint32) pw.Plugin { return &plugin{} })
}

// pluginConfig is the plugin configuration: the native module's
// filter_config plus the rule files, by absolute path.
type pluginConfig struct {
	engine.Config
	Files rulefiles.Bundle `json:"files"`
}

// plugin is one plugin configuration: one WAF shared by its streams.
type plugin struct {
	f       stream.Filter
	metrics [stream.NumCounters]uint32
}

func logf(level pw.LogLevel, format string, args ...any) {
	pw.Log(level, fmt.Sprintf(format, args...))
}

// OnConfigure loads the WAF, defines the counters and logs the
// self-report. A failure fails the plugin configuration: Envoy reports
// the plugin as failed to load.
func (p *plugin) OnConfigure(size int) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			logf(pw.LogCritical, "wafbench_coraza: configuration panicked: %v", r)
			ok = false
		}
	}()
	if err := p.configure(size); err != nil {
		logf(pw.LogCritical, "wafbench_coraza: %v", err)
		return false
	}
	return true
}

func (p *plugin) configure(size int) error {
	raw, err := pw.PluginConfiguration(size)
	if err != nil {
		return fmt.Errorf("plugin configuration: %w", err)
	}
	var pc pluginConfig
	if err := decodeStrict(raw, &pc); err != nil {
		return err
	}
	if err := pc.Config.Validate(); err != nil {
		return err
	}
	if len(pc.Files) == 0 {
		return errors.New("filter_config: files: want the rule files (path → content), got none")
	}
	start := time.Now()
	// match_log lines go to Envoy's log through proxy_log at info.
	w, err := engine.NewLogged(pc.Config, pc.Files, func(line string) { pw.Log(pw.LogInfo, line) })
	if err != nil {
		return err
	}
	p.f = stream.Filter{WAF: w, Timers: os.Getenv(stream.StageTimersEnv) == "1"}
	for c := range stream.NumCounters {
		if !p.f.Defined(c) {
			continue
		}
		id, err := pw.DefineMetric(pw.MetricCounter, stream.CounterNames[c])
		if err != nil {
			return fmt.Errorf("define counter %s: %w", stream.CounterNames[c], err)
		}
		p.metrics[c] = id
	}
	line, err := stream.InfoLine(buildName, w)
	if err != nil {
		return err
	}
	pw.Log(pw.LogInfo, line)
	logf(pw.LogInfo, "wafbench_coraza filter: loaded %s (%d files) in %v (inspect_response=%v max_body_bytes=%d stage_timers=%v match_log=%v)",
		pc.RulesFile, len(pc.Files), time.Since(start).Round(time.Millisecond), pc.InspectResponse, w.Config().MaxBodyBytes, p.f.Timers, pc.MatchLog)
	return nil
}

// NewStream starts one request.
func (p *plugin) NewStream(uint32) pw.Stream {
	h := &httpStream{p: p}
	h.s = stream.New(&p.f, h)
	return h
}

// httpStream is one request: the proxy-wasm side of a stream.Stream.
type httpStream struct {
	p       *plugin
	s       *stream.Stream
	headers [][2]string
	panicAt string // test builds only: the callback that panics
}

// testPanic panics when the request asked for a panic in hook (test builds
// only; removed by the compiler in real builds).
func (h *httpStream) testPanic(hook string) {
	if testPanicHeader != "" && h.panicAt == hook {
		panic("wafbench_coraza: test panic in " + hook)
	}
}

// Inc implements stream.Host.
func (h *httpStream) Inc(c stream.Counter, v uint64) {
	_ = pw.IncrementMetric(h.p.metrics[c], int64(v))
}

// replyHeaders are the headers of every local reply.
var replyHeaders = [][2]string{{"content-type", "text/plain"}}

// Reply implements stream.Host.
func (h *httpStream) Reply(status int, r stream.Reason) {
	if err := pw.SendLocalResponse(status, r.Details(), []byte(stream.ReplyBody), replyHeaders, -1); err != nil {
		logf(pw.LogError, "wafbench_coraza: local reply %d: %v", status, err)
	}
}

// LogError implements stream.Host.
func (h *httpStream) LogError(msg string) { pw.Log(pw.LogError, msg) }

func action(cont bool) pw.Action {
	if cont {
		return pw.Continue
	}
	return pw.Pause
}

// property reads a string property; "" when the host has none.
func property(path ...string) string {
	b, err := pw.GetProperty(path...)
	if err != nil {
		return ""
	}
	return string(b)
}

// OnRequestHeaders runs phase 1 (and phase 2 for a request without body).
func (h *httpStream) OnRequestHeaders(_ int, endOfStream bool) (a pw.Action) {
	defer stream.Rescue(h.s, &a, pw.Pause, true)
	h.s.Start()
	hs, err := pw.GetHeaderMapPairs(h.headers, pw.MapHTTPRequestHeaders)
	if err != nil {
		h.s.FailClosed(fmt.Errorf("request headers: %w", err), true)
		return pw.Pause
	}
	h.headers = hs
	if testPanicHeader != "" {
		for _, kv := range hs {
			if kv[0] == testPanicHeader {
				h.panicAt = kv[1]
			}
		}
	}
	h.testPanic("headers")
	return action(h.s.RequestHeaders(stream.Request{
		Headers: hs,
		Client:  property("source", "address"),
		Server:  property("destination", "address"),
		Proto:   property("request", "protocol"),
	}, endOfStream))
}

// OnRequestBody lets the host buffer the body until the end of the stream,
// then feeds all of it to the engine and runs phase 2.
func (h *httpStream) OnRequestBody(bodySize int, endOfStream bool) (a pw.Action) {
	if h.s.Replied() || !h.s.Started() {
		return pw.Pause
	}
	if h.s.Passed() {
		return pw.Continue
	}
	defer stream.Rescue(h.s, &a, pw.Pause, true)
	if h.s.CheckBodySize(uint64(bodySize)) {
		return pw.Pause
	}
	if !endOfStream {
		return pw.Pause
	}
	return h.inspectBody(bodySize)
}

func (h *httpStream) inspectBody(bodySize int) pw.Action {
	h.testPanic("body")
	var body []byte
	if bodySize > 0 {
		var err error
		if body, err = pw.GetBufferBytes(pw.BufferHTTPRequestBody, 0, bodySize); err != nil {
			h.s.FailClosed(fmt.Errorf("request body: %w", err), true)
			return pw.Pause
		}
	}
	return action(h.s.Body([][]byte{body}))
}

// OnRequestTrailers ends a request whose body came before trailers: the
// whole body is buffered, inspect it.
func (h *httpStream) OnRequestTrailers(int) (a pw.Action) {
	if h.s.Replied() {
		return pw.Pause
	}
	if h.s.Passed() || !h.s.Started() {
		return pw.Continue
	}
	defer stream.Rescue(h.s, &a, pw.Pause, true)
	body, err := pw.GetBufferBytes(pw.BufferHTTPRequestBody, 0, h.p.f.MaxBodyBytes()+1)
	if err != nil && !isNotFound(err) {
		h.s.FailClosed(fmt.Errorf("request body: %w", err), true)
		return pw.Pause
	}
	if h.s.CheckBodySize(uint64(len(body))) {
		return pw.Pause
	}
	return action(h.s.Body([][]byte{body}))
}

func isNotFound(err error) bool {
	var e *pw.Error
	return errors.As(err, &e) && e.Status == pw.StatusNotFound
}

// OnResponseHeaders runs phase 3 when response inspection is on, and
// phase 4 unless it waits for the response body (then it holds the
// headers).
func (h *httpStream) OnResponseHeaders(_ int, endOfStream bool) (a pw.Action) {
	if !h.s.InspectsResponse() {
		return pw.Continue
	}
	defer stream.Rescue(h.s, &a, pw.Pause, true)
	hs, err := pw.GetHeaderMapPairs(nil, pw.MapHTTPResponseHeaders)
	if err != nil {
		h.s.FailClosed(fmt.Errorf("response headers: %w", err), true)
		return pw.Pause
	}
	status := 0
	var rest [][2]string
	for _, kv := range hs {
		switch {
		case kv[0] == ":status":
			status, _ = strconv.Atoi(kv[1])
		case len(kv[0]) > 0 && kv[0][0] == ':':
		default:
			rest = append(rest, kv)
		}
	}
	if status == 0 {
		status = http.StatusOK
	}
	return action(h.s.ResponseHeaders(status, rest, property("request", "protocol"), endOfStream))
}

// OnResponseBody lets the host buffer the response body while phase 4
// waits for it (to the end, or to the body limit), then feeds it to the
// engine and runs phase 4; otherwise it passes the body on.
func (h *httpStream) OnResponseBody(bodySize int, endOfStream bool) (a pw.Action) {
	if !h.s.WantsResponseBody() {
		return pw.Continue
	}
	defer stream.Rescue(h.s, &a, pw.Pause, true)
	if !endOfStream && bodySize < h.p.f.MaxBodyBytes() {
		return pw.Pause
	}
	return h.responseBody(bodySize)
}

func (h *httpStream) responseBody(bodySize int) pw.Action {
	var body []byte
	if bodySize > 0 {
		var err error
		if body, err = pw.GetBufferBytes(pw.BufferHTTPResponseBody, 0, bodySize); err != nil && !isNotFound(err) {
			h.s.FailClosed(fmt.Errorf("response body: %w", err), true)
			return pw.Pause
		}
	}
	return action(h.s.ResponseBody([][]byte{body}))
}

// OnResponseTrailers ends a response body that phase 4 waits for.
func (h *httpStream) OnResponseTrailers(int) (a pw.Action) {
	if !h.s.WantsResponseBody() {
		return pw.Continue
	}
	defer stream.Rescue(h.s, &a, pw.Pause, true)
	return h.responseBody(h.p.f.MaxBodyBytes())
}

// OnLog runs phase 5 at the end of the stream.
func (h *httpStream) OnLog() {
	var st struct{}
	defer stream.Rescue(h.s, &st, st, false)
	defer h.s.Close()
	h.testPanic("logging")
	h.s.Log()
}

// OnDelete releases the transaction if logging did not.
func (h *httpStream) OnDelete() {
	var st struct{}
	defer stream.Rescue(h.s, &st, st, false)
	h.s.Close()
}

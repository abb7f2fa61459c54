package waf

import (
	"fmt"
	"os"
	"time"

	"wafbench/filters/coraza/engine"
	"wafbench/filters/coraza/stream"
)

// corazaEngine runs the Coraza module's request logic (package stream)
// with this server as its host.
type corazaEngine struct {
	f    stream.Filter
	ctrs *counters
	info string
}

func openCoraza(config []byte, build string, timers bool) (Engine, error) {
	ec, err := stream.ParseConfig(config)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// match_log lines go to stderr with the module's prefix.
	w, err := engine.NewLogged(ec, nil, func(line string) {
		os.Stderr.WriteString("wafbench_coraza: " + line + "\n")
	})
	if err != nil {
		return nil, err
	}
	e := &corazaEngine{
		f:    stream.Filter{WAF: w, Timers: timers},
		ctrs: newCounters(stream.CounterNames[:], int(stream.FirstTimer), timers),
		info: selfReportLine("coraza", engine.Version(), build, w.Rules()),
	}
	fmt.Fprintf(os.Stderr, "wafbench_coraza: loaded %s in %v (inspect_response=%v max_body_bytes=%d stage_timers=%v match_log=%v)\n",
		ec.RulesFile, time.Since(start).Round(time.Millisecond), ec.InspectResponse, w.Config().MaxBodyBytes, timers, ec.MatchLog)
	return e, nil
}

func (e *corazaEngine) Name() string       { return "coraza" }
func (e *corazaEngine) SelfReport() string { return e.info }
func (e *corazaEngine) MaxBodyBytes() int  { return e.f.MaxBodyBytes() }
func (e *corazaEngine) Stats() []Stat      { return e.ctrs.stats() }
func (e *corazaEngine) Close()             {}

func (e *corazaEngine) NewStream() Stream {
	s := &corazaStream{e: e}
	s.s = stream.New(&e.f, s)
	return s
}

// corazaStream is one request; it is the stream's Host.
type corazaStream struct {
	e     *corazaEngine
	s     *stream.Stream
	proto string
	reply *Reply
}

// Inc implements stream.Host.
func (s *corazaStream) Inc(c stream.Counter, v uint64) { s.e.ctrs.add(int(c), v) }

// Reply implements stream.Host: the module's local reply.
func (s *corazaStream) Reply(status int, r stream.Reason) {
	s.reply = &Reply{Status: status, Body: stream.ReplyBody, Details: r.Details()}
}

// LogError implements stream.Host.
func (s *corazaStream) LogError(msg string) { os.Stderr.WriteString(msg + "\n") }

// run runs step as a module hook does: a panic fails the request closed
// (500, engine_errors) instead of reaching the server.
func (s *corazaStream) run(step func()) *Reply {
	var st struct{}
	func() {
		defer stream.Rescue(s.s, &st, st, true)
		step()
	}()
	return s.reply
}

func (s *corazaStream) RequestHeaders(req Request, endOfStream bool) *Reply {
	s.proto = req.Proto
	if s.proto == "" {
		s.proto = "HTTP/1.1"
	}
	return s.run(func() {
		s.s.Start()
		s.s.RequestHeaders(stream.Request{Headers: req.Headers, Client: req.Client, Server: req.Server, Proto: req.Proto}, endOfStream)
	})
}

func (s *corazaStream) RequestBody(body []byte) *Reply {
	return s.run(func() {
		if s.s.Replied() || !s.s.Started() || s.s.Passed() {
			return
		}
		if s.s.CheckBodySize(uint64(len(body))) {
			return
		}
		s.s.Body([][]byte{body})
	})
}

func (s *corazaStream) ResponseHeaders(status int, headers [][2]string) *Reply {
	if !s.s.InspectsResponse() {
		return nil
	}
	// The response body is not sent to this server: phase 4 runs at once.
	return s.run(func() { s.s.ResponseHeaders(status, headers, s.proto, true) })
}

func (s *corazaStream) Close() {
	if !s.s.Started() {
		return
	}
	var st struct{}
	defer stream.Rescue(s.s, &st, st, false)
	s.s.Log() // phase 5, then the transaction is released
}

package stream

import (
	"testing"

	"wafbench/filters/coraza/engine"
	"wafbench/tests/enginebench"
)

// nopHost is the cheapest Host: it keeps nothing, so a benchmark measures
// the stream logic and the engine, not the recording.
type nopHost struct{ replies int }

func (h *nopHost) Inc(Counter, uint64) {}
func (h *nopHost) Reply(int, Reason)   { h.replies++ }
func (h *nopHost) LogError(msg string) {}

// benchWorkloads are the profiles' workloads the stream benchmark runs,
// by benchmark name: benign ones (forwarded) and attacks (answered 403).
var benchWorkloads = []struct{ name, workload string }{
	{"Benign/headers", "headers"},
	{"Benign/json_4k", "json_4k"},
	{"Attack/sqli", "blocked_sqli"},
	{"Attack/xss", "blocked_xss"},
}

// runStream sends one request through a fresh Stream the way both Coraza
// filters do per Envoy stream: start, request headers, the body, phase 2,
// logging. It reports whether the request was forwarded.
func runStream(f *Filter, h *nopHost, r enginebench.Request) bool {
	s := New(f, h)
	s.Start()
	req := Request{Headers: r.Headers, Client: "127.0.0.1:40000", Server: "127.0.0.1:8080", Proto: "HTTP/1.1"}
	ok := s.RequestHeaders(req, len(r.Body) == 0)
	if !ok && !s.Replied() {
		ok = s.Body([][]byte{r.Body})
	}
	s.Log()
	return ok
}

// benchFilter loads the CRS entry point the modules load
// (build/crs/main.conf or $WAFBENCH_RULES) with cfg's other settings.
func benchFilter(b *testing.B, cfg engine.Config) *Filter {
	b.Helper()
	rules, err := enginebench.RulesFile()
	if err != nil {
		b.Fatal(err)
	}
	cfg.RulesFile = rules
	w, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return &Filter{WAF: w}
}

// BenchmarkStream measures one whole stream per op through the request
// logic the native module and the Wasm filter share, against the real CRS:
// the per-request cost of the filters' Go side, match_log off (the
// benchmark setting). Compare two commits with
//
//	go test -run '^$' -bench '^BenchmarkStream$' -count 10 ./filters/coraza/stream > new.txt
//	go tool benchstat old.txt new.txt
func BenchmarkStream(b *testing.B) {
	f := benchFilter(b, engine.Config{})
	reqs := benchRequests(b)
	for _, bw := range benchWorkloads {
		r := reqs[bw.workload]
		b.Run(bw.name, func(b *testing.B) {
			h := &nopHost{}
			if got := runStream(f, h, r); got != (r.Want == 200) {
				b.Fatalf("%s: forwarded %v, want status %d", bw.workload, got, r.Want)
			}
			b.ReportAllocs()
			for b.Loop() {
				runStream(f, h, r)
			}
		})
	}
}

// benchRequests are the profiles' workloads by name; every one that
// benchWorkloads names must exist.
func benchRequests(b *testing.B) map[string]enginebench.Request {
	b.Helper()
	all, err := enginebench.Requests()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]enginebench.Request{}
	for _, r := range all {
		out[r.Name] = r
	}
	for _, bw := range benchWorkloads {
		if _, ok := out[bw.workload]; !ok {
			b.Fatalf("profiles have no workload %q", bw.workload)
		}
	}
	return out
}

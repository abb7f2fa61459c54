package engine

import (
	"os"
	"slices"
	"syscall"
	"testing"

	"wafbench/tests/enginebench"
)

// benchCase is one workload as the Coraza module hands it to the engine:
// Envoy's header map mapped by MapHeaders, as the module does.
type benchCase struct {
	name string
	req  request
	want int
}

func seedCases(tb testing.TB) []benchCase {
	tb.Helper()
	reqs, err := enginebench.Requests()
	if err != nil {
		tb.Fatal(err)
	}
	return benchCases(reqs)
}

func benchCases(reqs []enginebench.Request) []benchCase {
	out := make([]benchCase, 0, len(reqs))
	for _, r := range reqs {
		rl, hs := MapHeaders(nil, r.Headers)
		out = append(out, benchCase{name: r.Name, req: request{Method: rl.Method, Path: rl.Path, Headers: hs, Body: r.Body}, want: r.Want})
	}
	return out
}

func TestSeedCases(t *testing.T) {
	byName := map[string]benchCase{}
	for _, c := range seedCases(t) {
		byName[c.name] = c
	}
	h, ok := byName["headers"]
	if !ok {
		t.Fatal("profiles have no headers workload")
	}
	want := [][2]string{{"user-agent", "wafbench/1.0"}, {"accept", "*/*"}, {"x-forwarded-proto", "http"}, {"Host", "bench.local"}}
	if h.req.Method != "GET" || h.req.Path != "/safe" || len(h.req.Body) != 0 || !slices.Equal(h.req.Headers, want) {
		t.Errorf("headers: got %s %s %q body %d bytes, want GET /safe %q no body", h.req.Method, h.req.Path, h.req.Headers, len(h.req.Body), want)
	}
}

// BenchmarkEngine measures one whole request per op against the CRS files
// the Envoy module loads (build/crs/main.conf or $WAFBENCH_RULES): new
// transaction, connection, URI, headers, phase 1, body, phase 2, logging and
// close, as the module does per stream. Names:
// BenchmarkEngine/coraza/<workload> for every workload of profiles/*.yaml.
// Run with GOMAXPROCS=1 on the Envoy CPU to charge GC work to that CPU as
// Envoy would (scripts/overhead.sh).
func BenchmarkEngine(b *testing.B) {
	rules, err := enginebench.RulesFile()
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(Config{RulesFile: rules})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range seedCases(b) {
		b.Run("coraza/"+bc.name, func(b *testing.B) {
			if got := w.evaluate(bc.req).Status; got != bc.want {
				b.Fatalf("status: got %d, want %d", got, bc.want)
			}
			b.ReportAllocs()
			thrash, err := enginebench.ThrashBuffer()
			if err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuNs()
			for b.Loop() {
				if thrash != nil {
					b.StopTimer()
					enginebench.Touch(thrash)
					b.StartTimer()
				}
				w.evaluate(bc.req)
			}
			if thrash == nil { // with a thrash buffer the process CPU holds its writes too
				reportCPU(b, cpu0)
			}
		})
	}
}

// TrainSuiteEnv names the profiles suite BenchmarkTrain runs ("train" when
// unset): the PGO training suite of filters/builds.yaml.
const TrainSuiteEnv = "WAFBENCH_TRAIN_SUITE"

// BenchmarkTrain is the source of the Go PGO profile
// (scripts/engines/coraza.sh): one op sends every workload of the training
// suite (profiles/train.yaml, never the seed workloads) through the engine
// once, as the module does per stream, after checking each verdict.
//
//	go test -run '^$' -bench '^BenchmarkTrain$' -cpuprofile train.pgo ./filters/coraza/engine
func BenchmarkTrain(b *testing.B) {
	suite := os.Getenv(TrainSuiteEnv)
	if suite == "" {
		suite = "train"
	}
	reqs, err := enginebench.SuiteRequests(suite)
	if err != nil {
		b.Fatal(err)
	}
	rules, err := enginebench.RulesFile()
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(Config{RulesFile: rules})
	if err != nil {
		b.Fatal(err)
	}
	cases := benchCases(reqs)
	for _, bc := range cases {
		if got := w.evaluate(bc.req).Status; got != bc.want {
			b.Fatalf("training workload %s: status %d, want %d", bc.name, got, bc.want)
		}
	}
	b.ReportAllocs()
	cpu0 := cpuNs()
	for b.Loop() {
		for _, bc := range cases {
			w.evaluate(bc.req)
		}
	}
	reportCPU(b, cpu0)
}

// cpuNs is the CPU time (user + system, every thread, so the garbage
// collector's too) the process has used so far.
func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the process CPU time per op since cpu0 as "cpu-ns/op":
// on a shared machine it moves less than wall time (ns/op), which includes
// waiting for a CPU.
func reportCPU(b *testing.B, cpu0 int64) {
	if b.N > 0 {
		b.ReportMetric(float64(cpuNs()-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

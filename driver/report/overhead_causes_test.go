package report

import (
	"strings"
	"testing"

	"wafbench/driver/account"
	"wafbench/driver/stats"
)

// TestParseEngineBenchCaches: results under "caches: cold N" lines are
// benchmarks of their own, "caches: hot" the same as no line.
func TestParseEngineBenchCaches(t *testing.T) {
	in := "allocator: tcmalloc\ncaches: hot\n" +
		"BenchmarkEngine/modsecurity/headers 10 500000 ns/op\n" +
		"caches: cold 2097152\n" +
		"BenchmarkEngine/modsecurity/headers 10 700000 ns/op\n" +
		"allocator: tcmalloc\n" +
		"BenchmarkEngine/modsecurity/headers 10 600000 ns/op\n"
	ebs, cfg, err := parseEngineBench(strings.NewReader(in), engineBenchFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(ebs) != 2 || ebs[0].Caches != "" || ebs[0].NsPerOp.Median != 500000 ||
		ebs[1].Caches != "cold 2097152" || ebs[1].NsPerOp.N != 2 || ebs[1].NsPerOp.Median != 650000 {
		t.Errorf("got %+v, want hot 500000 and cold (2 values, median 650000)", ebs)
	}
	if len(cfg) != 0 {
		t.Errorf("config = %q, want none (caches is a field)", cfg)
	}
}

// TestOverheadCauses: a mode adding 1000 µs over passthrough, of which
// Envoy's extra work is 100, glue 10, kernel 10, the runtime and
// unattributed 30 and the engine's work 850, against an engine alone of
// 500 µs hot and 800 µs cold, is overhead 2.00, 1.80 net of Envoy, 1.70 net
// of Envoy and glue, and 1.06 of the cold engine; a workload without a
// benchmark and passthrough have no row.
func TestOverheadCauses(t *testing.T) {
	parts := func(envoy, engine, regex, alloc, module, abi, kernel, helpers, runtime, unattr float64) [account.NParts][]float64 {
		var p [account.NParts][]float64
		for i, v := range []float64{envoy, engine, regex, alloc, module, abi, kernel, helpers, runtime, unattr} {
			p[i] = []float64{v, v}
		}
		return p
	}
	pass := &accountRow{Mode: "passthrough", Workload: "headers", Conns: 16, Repeats: []int{1, 2}, CPU: []float64{50, 50},
		Parts: parts(50, 0, 0, 0, 0, 0, 0, 0, 0, 0)}
	ms := &accountRow{Mode: "modsecurity", Workload: "headers", Conns: 16, Repeats: []int{1, 2}, CPU: []float64{1050, 1050},
		Parts: parts(150, 500, 100, 150, 6, 4, 10, 100, 0, 30)}
	other := &accountRow{Mode: "modsecurity", Workload: "json_4k", Conns: 1, Repeats: []int{1, 2}, CPU: []float64{900, 900},
		Parts: parts(100, 800, 0, 0, 0, 0, 0, 0, 0, 0)}
	passJSON := &accountRow{Mode: "passthrough", Workload: "json_4k", Conns: 1, Repeats: []int{1, 2}, CPU: []float64{100, 100},
		Parts: parts(100, 0, 0, 0, 0, 0, 0, 0, 0, 0)}
	ov := &overhead{Engines: []engineBench{
		{Engine: "modsecurity", Workload: "headers", Allocator: "glibc", NsPerOp: stats.Median([]float64{650000})},
		{Engine: "modsecurity", Workload: "headers", Allocator: "tcmalloc", NsPerOp: stats.Median([]float64{500000})},
		{Engine: "modsecurity", Workload: "headers", Allocator: "tcmalloc", Caches: "cold 2097152", NsPerOp: stats.Median([]float64{800000})},
	}}
	m := &md{}
	writeOverheadCauses(m, &figures{Overhead: ov, Account: []*accountRow{pass, ms, other, passJSON}})
	got := m.b.String()
	want := "| modsecurity | headers/c16 | 500.0 | 800.0 (cold 2097152) | 1000 ±0 | 100 ±0 | 10 ±0 | 10 ±0 | 30 ±0 | 850 ±0 | 2.00 ±0.00 | 1.80 ±0.00 | 1.70 ±0.00 | 1.06 ±0.00 |"
	if !strings.Contains(got, want) {
		t.Errorf("missing %q in\n%s", want, got)
	}
	if strings.Contains(got, "json_4k") || strings.Contains(got, "| passthrough |") {
		t.Errorf("a row without an engine benchmark, or passthrough's:\n%s", got)
	}
}

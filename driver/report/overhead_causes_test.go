package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/account"
	"wafbench/driver/result"
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
// Envoy's extra work is 100, glue 10 and the WAF's own work 890, against an
// engine alone of 500 µs hot and 800 µs cold, is overhead 2.00, 1.80 net of
// Envoy, 1.78 net of Envoy and glue, and 1.11 of the cold engine; the part
// table sets each part against the profiled benchmarks; a workload without
// a benchmark and passthrough have no row.
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
		{Engine: "modsecurity", Workload: "headers", Allocator: "tcmalloc", NsPerOp: stats.Median([]float64{500000}),
			Parts: partsOf(300, 50, 100, 50)},
		{Engine: "modsecurity", Workload: "headers", Allocator: "tcmalloc", Caches: "cold 2097152", NsPerOp: stats.Median([]float64{800000}),
			Parts: partsOf(450, 80, 170, 100)},
	}}
	m := &md{}
	writeOverheadCauses(m, &figures{Overhead: ov, Account: []*accountRow{pass, ms, other, passJSON}})
	got := m.b.String()
	for _, want := range []string{
		"| modsecurity | headers/c16 | 500.0 | 800.0 (cold 2097152) | 1000 ±0 | 100 ±0 | 10 ±0 | 890 ±0 | 2.00 ±0.00 | 1.80 ±0.00 | 1.78 ±0.00 | 1.11 ±0.00 |",
		"| mode | workload | part | inside Envoy | alone, hot | alone, cold 2097152 | Δ |",
		"| modsecurity | headers/c16 | engine | 500 ±0 | 300 | 450 | +50 |",
		"| modsecurity | headers/c16 | alloc | 150 ±0 | 100 | 170 | -20 |",
		"| modsecurity | headers/c16 | **all** | 890 ±0 | 500 | 800 | +90 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "json_4k") || strings.Contains(got, "| passthrough |") {
		t.Errorf("a row without an engine benchmark, or passthrough's:\n%s", got)
	}
}

// partsOf is a benchmark's µs per op by part: engine, regex, alloc,
// helpers.
func partsOf(engine, regex, alloc, helpers float64) []float64 {
	p := make([]float64, account.NParts)
	p[account.Engine], p[account.Regex], p[account.Alloc], p[account.HookOther] = engine, regex, alloc, helpers
	return p
}

// TestBenchParts reads a benchmark's folded profile by the name
// scripts/overhead.sh gives it (gzipped by keep or not) and splits its time
// per op; a benchmark without one has no parts.
func TestBenchParts(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "perf"), 0o755); err != nil {
		t.Fatal(err)
	}
	folded := "bench;[unknown];modsecurity::RuleWithOperator::evaluate 3000000\nbench;[unknown];tc_malloc;tcmalloc::ThreadCache::FetchFromCentralCache 1000000\n"
	if err := os.WriteFile(filepath.Join(dir, "perf", "engine-modsecurity-headers-tcmalloc-cold2097152.folded"), []byte(folded), 0o644); err != nil {
		t.Fatal(err)
	}
	eb := &engineBench{Engine: "modsecurity", Workload: "headers", Allocator: "tcmalloc", Caches: "cold 2097152", NsPerOp: stats.Median([]float64{800000})}
	parts, err := benchParts(dir, eb)
	if err != nil || len(parts) != int(account.NParts) || parts[account.Engine] != 600 || parts[account.Alloc] != 200 {
		t.Errorf("got %v %v, want engine 600 µs, alloc 200 µs", parts, err)
	}
	eb.Caches = ""
	if parts, err := benchParts(dir, eb); parts != nil || err != nil {
		t.Errorf("no profile: got %v %v, want none", parts, err)
	}
}

// A kept run keeps what "Where the overhead goes" reads: the engine
// benchmarks' folded stacks are not by-products (a kept overhead run once
// lost its part-by-part table to the archive).
func TestBenchProfileNotByproduct(t *testing.T) {
	for _, eb := range []engineBench{
		{Engine: "modsecurity", Workload: "headers", Allocator: "tcmalloc"},
		{Engine: "coraza", Workload: "json_4k", Allocator: "go", Caches: "cold 262144"},
	} {
		rel := filepath.ToSlash(benchProfile(&eb))
		for _, name := range []string{rel, rel + ".gz"} {
			if kind := Byproduct(name); kind != "" {
				t.Errorf("%s is a by-product (%s); the report reads it", name, kind)
			}
		}
	}
}

// TestReadAccountEnvoyOnly: the cost account is of Envoy; a reference
// host's profile (Caddy) is left out, not read as an Envoy without hooks.
func TestReadAccountEnvoyOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "perf"), 0o755); err != nil {
		t.Fatal(err)
	}
	recs := make([]result.Record, 2)
	for i, mode := range []string{"passthrough", "ref-caddy-coraza"} {
		recs[i].Mode, recs[i].Workload, recs[i].Conns, recs[i].Repeat = mode, "headers", 1, 1
		recs[i].PerfFile = fmt.Sprintf("perf/t%02d-%s-headers-c1.data", i+1, mode)
		recs[i].CPU.UsPerRequest = 100
		folded := "wrk:worker_0;start_thread;[envoy] 1000\n"
		if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(recs[i].PerfFile, ".data")+".folded"), []byte(folded), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := readAccount(dir, recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Mode != "passthrough" {
		t.Errorf("account rows %v, want passthrough's alone", rows)
	}
}

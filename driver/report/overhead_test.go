package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// engineBenchFixture is a small fixed engine-bench.txt: both engines, a
// GOMAXPROCS suffix on Coraza, a workload the synthetic run lacks
// (blocked_sqli) and a benchmark that is not BenchmarkEngine.
const engineBenchFixture = "testdata/engine-bench.txt"

func TestParseEngineBench(t *testing.T) {
	f, err := os.Open(engineBenchFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ebs, cfg, err := parseEngineBench(f, engineBenchFile)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name   string
		n      int
		median float64
	}
	var got []row
	for _, e := range ebs {
		got = append(got, row{e.Engine + "/" + e.Workload, e.NsPerOp.N, math.Round(e.NsPerOp.Median)})
	}
	want := []row{
		{"modsecurity/blocked_sqli", 2, 908000},
		{"modsecurity/headers", 5, 781000},
		{"modsecurity/json_4k", 3, 1500000},
		{"coraza/headers", 3, 400000},
		{"coraza/json_4k", 1, 800000},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if ebs[3].Allocs != 2057 {
		t.Errorf("coraza/headers allocs/op = %v, want 2057", ebs[3].Allocs)
	}
	wantCfg := []string{"goos: linux", "goarch: amd64", "pkg: wafbench/filters/modsecurity/bench",
		"cpu: Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", "pkg: wafbench/filters/coraza/engine"}
	if strings.Join(cfg, "|") != strings.Join(wantCfg, "|") {
		t.Errorf("config = %q, want %q", cfg, wantCfg)
	}
}

// TestParseEngineBenchAllocator: results under different "allocator: …"
// lines are separate benchmarks; the line is a field, not configuration.
func TestParseEngineBenchAllocator(t *testing.T) {
	in := "goos: linux\nallocator: glibc\n" +
		"BenchmarkEngine/modsecurity/headers 10 900000 ns/op\n" +
		"BenchmarkEngine/modsecurity/headers 10 1000000 ns/op\n" +
		"allocator: tcmalloc\n" +
		"BenchmarkEngine/modsecurity/headers 10 700000 ns/op\n" +
		"BenchmarkEngine/coraza/headers 10 500000 ns/op\n"
	ebs, cfg, err := parseEngineBench(strings.NewReader(in), engineBenchFile)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ebs {
		got = append(got, fmt.Sprintf("%s/%s/%s n=%d %.0f", e.Engine, e.Workload, e.Allocator, e.NsPerOp.N, e.NsPerOp.Median))
	}
	want := []string{"modsecurity/headers/glibc n=2 950000", "modsecurity/headers/tcmalloc n=1 700000",
		"coraza/headers/tcmalloc n=1 500000"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if strings.Join(cfg, "|") != "goos: linux" {
		t.Errorf("config = %q, want only goos", cfg)
	}
}

func TestParseEngineBenchErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no ns/op", "BenchmarkEngine/coraza/headers 100 5 B/op\n", "has no ns/op"},
		{"syntax", "BenchmarkEngine/coraza/headers 100 fast ns/op\n", engineBenchFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseEngineBench(strings.NewReader(tc.in), engineBenchFile)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// section returns the "## title" section of a Markdown document, up to the
// next "## " heading.
func sectionOf(doc, title string) string {
	i := strings.Index(doc, "## "+title+"\n")
	if i < 0 {
		return ""
	}
	rest := doc[i:]
	if j := strings.Index(rest[3:], "\n## "); j >= 0 {
		return rest[:j+4]
	}
	return rest
}

// TestBuildOverhead builds the synthetic run with the fixed engine-bench.txt
// and compares only the new section of report.md and summary.json with
// their golden files (-update rewrites them).
func TestBuildOverhead(t *testing.T) {
	plain := copyRun(t)
	if err := Build(plain, nil); err != nil {
		t.Fatal(err)
	}
	dir := copyRun(t)
	if err := os.WriteFile(filepath.Join(dir, engineBenchFile), readFile(t, engineBenchFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}

	md := string(readFile(t, filepath.Join(dir, ReportFile)))
	sec := sectionOf(md, "Integration overhead")
	if sec == "" {
		t.Fatal("report.md has no Integration overhead section")
	}
	var sum struct {
		Overhead json.RawMessage `json:"integration_overhead"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, SummaryFile)), &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Overhead) == 0 {
		t.Fatal("summary.json has no integration_overhead")
	}
	var ov bytes.Buffer
	if err := json.Indent(&ov, sum.Overhead, "", "  "); err != nil {
		t.Fatal(err)
	}
	ov.WriteByte('\n')
	for _, g := range []struct {
		name string
		got  []byte
	}{{"overhead.md.golden", []byte(sec)}, {"overhead.json.golden", ov.Bytes()}} {
		path := filepath.Join(goldenDir, g.name)
		if *update {
			if err := os.WriteFile(path, g.got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := readFile(t, path); !bytes.Equal(g.got, want) {
			t.Errorf("integration overhead section differs from %s; inspect and run go test ./driver/report -update", path)
		}
	}

	// Spot checks that do not depend on the golden files: modsecurity
	// headers/c16 (861.0 − 26.2) / 781.0 µs meets the goal, coraza headers
	// (529.7 − 26.2) / 400.0 does not.
	for _, want := range []string{
		"| modsecurity | headers/c16 | unrecorded | 1150 | 21000 | 781.0 (5) | 860.9 (5) | 26.2 (5) | 834.7 | 53.7 | 1.069 |",
		"| coraza | headers/c16 | unrecorded | 1850 | 21000 | 400.0 (3) | 529.7 (5) | 26.2 (5) | 503.5 | 103.5 | 1.259 |",
		"| Engine/modsecurity/blocked_sqli | unrecorded | 2 | 908.0 |",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("overhead section lacks %q:\n%s", want, sec)
		}
	}
	if strings.Contains(sec, "| modsecurity | blocked_sqli") {
		t.Error("overhead row for a workload the run does not have")
	}

	// Everything else is as without engine-bench.txt.
	pmd := string(readFile(t, filepath.Join(plain, ReportFile)))
	if strings.Contains(pmd, "Integration overhead") {
		t.Error("report.md without engine-bench.txt has an Integration overhead section")
	}
	if strings.Replace(md, sec, "", 1) != pmd {
		t.Error("report.md with engine-bench.txt differs outside the Integration overhead section")
	}
	psum := readFile(t, filepath.Join(plain, SummaryFile))
	if bytes.Contains(psum, []byte("integration_overhead")) {
		t.Error("summary.json without engine-bench.txt has integration_overhead")
	}
	for _, name := range []string{BenchFile} {
		if !bytes.Equal(readFile(t, filepath.Join(plain, name)), readFile(t, filepath.Join(dir, name))) {
			t.Errorf("%s depends on engine-bench.txt", name)
		}
	}
}

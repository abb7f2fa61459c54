package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"wafbench/driver/merge"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

var update = flag.Bool("update", false, "rewrite golden files and the synthetic run in testdata")

const goldenDir = "testdata/golden"

// copyRun copies the committed synthetic run's raw files into a temp dir.
func copyRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{result.MetaFile, result.RawFile} {
		b, err := os.ReadFile(filepath.Join(syntheticRunDir, name))
		if err != nil {
			t.Fatalf("%v (run go test ./driver/report -update to create it)", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSyntheticRunCommitted(t *testing.T) {
	dir := t.TempDir()
	if err := writeSyntheticRun(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{result.MetaFile, result.RawFile} {
		got := readFile(t, filepath.Join(dir, name))
		path := filepath.Join(syntheticRunDir, name)
		if *update {
			if err := os.MkdirAll(syntheticRunDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := readFile(t, path); !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output; run go test ./driver/report -update", path)
		}
	}
}

func TestBuildGolden(t *testing.T) {
	dir := copyRun(t)
	rawBefore := readFile(t, filepath.Join(dir, result.RawFile))
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	first := map[string][]byte{}
	for _, name := range []string{ReportFile, SummaryFile, BenchFile} {
		got := readFile(t, filepath.Join(dir, name))
		first[name] = got
		golden := filepath.Join(goldenDir, name+".golden")
		if *update {
			if err := os.MkdirAll(goldenDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := readFile(t, golden); !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s; inspect and run go test ./driver/report -update", name, golden)
		}
	}
	if !bytes.Equal(rawBefore, readFile(t, filepath.Join(dir, result.RawFile))) {
		t.Error("Build modified raw.jsonl")
	}
	charts, err := filepath.Glob(filepath.Join(dir, ChartsDir, "*.svg"))
	if err != nil || len(charts) != 5 {
		t.Errorf("charts = %v (%v), want throughput, cpu, 2 latency, per_second", charts, err)
	}
	// Rebuilding gives the same bytes.
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	for name, b := range first {
		if !bytes.Equal(b, readFile(t, filepath.Join(dir, name))) {
			t.Errorf("second Build changed %s", name)
		}
	}
}

func TestBenchTxtParses(t *testing.T) {
	dir := copyRun(t)
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, BenchFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := benchfmt.NewReader(f, BenchFile)
	n := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		case *benchfmt.Result:
			n++
			if got := rec.GetConfig("envoy"); got != "1.40.0" {
				t.Errorf("envoy config = %q", got)
			}
			if _, ok := rec.Value(unitReqPerS); !ok {
				t.Errorf("%s: no %s value", rec.Name, unitReqPerS)
			}
		}
	}
	if n != 30 {
		t.Errorf("%d results, want 30 (3 modes × 2 workloads × 5 repeats)", n)
	}
	if got := r.Units().GetBetter(unitCPU); got != -1 {
		t.Errorf("better(%s) = %d, want -1", unitCPU, got)
	}
}

func TestBuildInterrupted(t *testing.T) {
	dir := copyRun(t)
	recs, _, err := result.ReadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	cut := recs[0]
	cut.Trial, cut.Repeat, cut.Mode, cut.Interrupted = 16, 6, "coraza", true
	failed := recs[1]
	failed.Trial, failed.Repeat, failed.Mode, failed.Error = 17, 6, "modsecurity", "envoy exited: signal: killed"
	for _, r := range []*result.Record{&cut, &failed} {
		if err := result.Append(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	md := string(readFile(t, filepath.Join(dir, ReportFile)))
	for _, want := range []string{
		"| 16 | 6 | coraza | headers/c16 | interrupted |",
		"| 17 | 6 | modsecurity | json_4k/c1 | error: envoy exited: signal: killed |",
		"30 valid records, 2 excluded.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	all, _, _ := result.ReadRecords(dir)
	s := stats.Summarize(all)
	if g := s.Group(stats.Key{Mode: "coraza", Workload: "headers", Conns: 16}); g.N != 5 {
		t.Errorf("coraza headers n = %d, want 5 (interrupted record excluded)", g.N)
	}
	if bench := string(readFile(t, filepath.Join(dir, BenchFile))); strings.Count(bench, "BenchmarkWAF/") != 30 {
		t.Errorf("bench.txt has %d lines, want 30", strings.Count(bench, "BenchmarkWAF/"))
	}
}

func TestMergeMismatchedEnv(t *testing.T) {
	a, b := copyRun(t), copyRun(t)
	mb, _ := result.ReadMeta(b)
	mb.Name = "other"
	mb.EnvoySHA256 = fakeHash("envoy 1.39.0")
	mb.CPUModel = "AMD EPYC 7763 64-Core Processor"
	mod := mb.Modules["coraza"]
	mod.SHA256 = fakeHash("coraza module v2")
	mb.Modules["coraza"] = mod
	if err := result.WriteMeta(b, mb); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "merged")
	err := mergeRuns([]string{a, b}, out, merge.Options{})
	if err == nil {
		t.Fatal("Merge of mismatched runs succeeded without force")
	}
	wants := []string{
		"envoy_sha256 differs: run synthetic " + fakeHash("envoy 1.40.0")[:16] + "…, run other " + fakeHash("envoy 1.39.0")[:16] + "…",
		"modules.coraza.sha256 differs: run synthetic",
		"cpu_model differs: run synthetic Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz, run other AMD EPYC 7763 64-Core Processor",
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "crs.sha256") {
		t.Errorf("error names an equal field:\n%v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Error("refused Merge created the output directory")
	}
	if err := mergeRuns([]string{a, b}, out, merge.Options{Force: true}); err != nil {
		t.Fatalf("Merge with force: %v", err)
	}
	md := string(readFile(t, filepath.Join(out, ReportFile)))
	for _, w := range wants {
		if !strings.Contains(md, "- Pooled despite an environment difference: "+w) {
			t.Errorf("report.md limitations lack %q", w)
		}
	}
}

func TestTable(t *testing.T) {
	recs, _, err := result.ReadRecords(syntheticRunDir)
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[:2]
	recs[1].Interrupted = true
	recs[1].Errors = map[string]int64{"status": 3, "timeout": 1}
	var buf bytes.Buffer
	if err := Table(&buf, recs); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"  trial  repeat         mode  workload  conns  req/s  CPU µs/req  p50 ms  p99 ms  errors  note\n" +
		"      1       1  passthrough   headers     16  21000        26.2   0.701   2.026       0\n" +
		"      1       1  passthrough   json_4k      1   9000        61.1   0.102   0.282       4  interrupted\n"
	if got := buf.String(); got != want {
		t.Errorf("Table:\n%s\nwant:\n%s", got, want)
	}
}

package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"wafbench/driver/result"
)

// FuzzBuild appends arbitrary bytes — one or more records, or garbage — to
// the synthetic run's raw.jsonl and builds its report: Build may refuse the
// input with an error, but it must never panic, whatever the records hold.
// The valid records before the fuzzed ones (the synthetic run's first two
// repeats) carry the report past parsing into statistics, charts and
// Markdown.
func FuzzBuild(f *testing.F) {
	meta, err := os.ReadFile(filepath.Join(syntheticRunDir, result.MetaFile))
	if err != nil {
		f.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(syntheticRunDir, result.RawFile))
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	// Two repeats of every mode and workload: enough for every section of
	// the report, small enough for many executions a second.
	raw = bytes.Join(lines[:12], nil)
	f.Add([]byte{})
	f.Add(lines[0][:len(lines[0])/2]) // torn
	for _, absurd := range []string{"0", "-1", "1e300", "-1e300", "5e-324", "1e12", "9007199254740993", "1.7976931348623157e308"} {
		for _, field := range []string{`"req_per_s":`, `"p99_us":`, `"p50_us":`, `"us_per_request":`, `"per_second":[`, `"conns":`,
			`"duration_s":`, `"rss_end_kib":`, `"requests":`, `"rate_achieved_per_s":`} {
			for _, l := range [][]byte{lines[0], lines[len(lines)-2]} {
				f.Add(bytes.Replace(l, []byte(field), []byte(field+absurd+`,"x":`), 1))
			}
		}
	}
	f.Add([]byte(`{"trial":99,"repeat":9,"mode":"coraza","workload":"headers","conns":16,"req_per_s":1e300,"per_second":[1,0,1e15],"latency":{"p50_us":1e-300,"p99_us":1e300}}` + "\n"))
	f.Add([]byte(`{"trial":99,"repeat":1,"mode":"zzz","workload":"new","conns":1,"req_per_s":5,"per_second":[5],"envoy_cpu":{"us_per_request":0}}` + "\n"))
	f.Fuzz(func(t *testing.T, extra []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, result.MetaFile), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, result.RawFile), append(raw[:len(raw):len(raw)], extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = Build(dir, nil) // errors are fine; a panic fails the test
	})
}

package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerdicts reads the CPU comparisons against passthrough from a
// summary.json and prints one row per workload, one column per mode; other
// metrics and other denominators are left out.
func TestVerdicts(t *testing.T) {
	dir := t.TempDir()
	summary := `{"schema": "wafbench.summary/v1", "comparisons": [
 {"workload": "headers", "conns": 1, "numerator": "modsecurity", "denominator": "passthrough", "metric": "cpu_us_per_req", "geomean_ratio": 9.317, "paired_t_ci_lo": 8.449, "paired_t_ci_hi": 10.28, "verdict": "higher"},
 {"workload": "headers", "conns": 1, "numerator": "coraza", "denominator": "passthrough", "metric": "cpu_us_per_req", "geomean_ratio": 1.04, "paired_t_ci_lo": 0.97, "paired_t_ci_hi": 1.11, "verdict": "not established", "reason": "Holm p=0.2 ≥ 0.05"},
 {"workload": "headers", "conns": 1, "numerator": "modsecurity", "denominator": "coraza", "metric": "cpu_us_per_req", "geomean_ratio": 8.9, "paired_t_ci_lo": 8, "paired_t_ci_hi": 9, "verdict": "higher"},
 {"workload": "headers", "conns": 1, "numerator": "modsecurity", "denominator": "passthrough", "metric": "req_per_s", "geomean_ratio": 0.2, "paired_t_ci_lo": 0.1, "paired_t_ci_hi": 0.3, "verdict": "slower"},
 {"workload": "json_4k", "conns": 16, "numerator": "modsecurity", "denominator": "passthrough", "metric": "cpu_us_per_req", "geomean_ratio": 0.5, "paired_t_ci_lo": null, "paired_t_ci_hi": null, "verdict": "not established"},
 {"workload": "json_4k", "conns": 16, "numerator": "coraza", "denominator": "passthrough", "metric": "cpu_us_per_req", "geomean_ratio": 0.25, "paired_t_ci_lo": 0.2, "paired_t_ci_hi": 0.3, "verdict": "lower"}
]}`
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	vs, err := readVerdicts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeVerdicts(&buf, vs)
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		"Envoy CPU per request ÷ passthrough: geo-mean of paired ratios [95% CI, paired t], verdict by Holm-adjusted paired t at α 0.05",
		"workload     modsecurity                              coraza",
		"headers@1    9.32 [8.45, 10.28] established: higher   1.04 [0.97, 1.11] not established (Holm p=0.2 ≥ 0.05)",
		"json_4k@16   0.50 [no interval] not established       0.25 [0.20, 0.30] established: lower",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i := range want {
		if strings.TrimRight(got[i], " ") != want[i] {
			t.Errorf("line %d:\ngot  %q\nwant %q", i, got[i], want[i])
		}
	}

	buf.Reset()
	writeVerdicts(&buf, nil)
	if buf.Len() != 0 {
		t.Errorf("no verdicts: got %q, want nothing", buf.String())
	}
	if _, err := readVerdicts(t.TempDir()); err == nil {
		t.Errorf("a directory without summary.json: got no error")
	}
}

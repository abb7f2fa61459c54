package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadgenRaw is a comparison of two pairs at 16 connections: wafbench
// does 90% of wrk's req/s and uses 1.1× its CPU per request.
const loadgenRaw = `{"kind": "header", "command": "scripts/vs-wrk.sh 2 16 4 /safe", "started_utc": "2026-12-01T00:00:00Z", "pairs": 2, "conns": [16], "seconds": 4, "path": "/safe", "wrk": "wrk debian/4.1.0", "envoy_cpus": "0", "client_cpus": "1", "cpu_method": "user+sys", "startup_method": {"wrk": "wrk -v", "wafbench": "one request"}, "notes": ["shared machine"]}
{"kind": "window", "tool": "wrk", "conns": 16, "pair": 1, "position": 1, "seconds": 4, "requests": 40000, "errors": 0, "req_per_s": 10000, "client_cpu_s": 0.4, "startup_cpu_s": 0.004, "startup_requests": 0, "p50_us": 1500, "p90_us": 2000, "p99_us": 3000}
{"kind": "window", "tool": "wafbench", "conns": 16, "pair": 1, "position": 2, "seconds": 4, "requests": 36000, "errors": 0, "req_per_s": 9000, "client_cpu_s": 0.396, "startup_cpu_s": 0.012, "startup_requests": 1, "p50_us": 1600, "p90_us": 2100, "p99_us": 3300}
{"kind": "window", "tool": "wafbench", "conns": 16, "pair": 2, "position": 1, "seconds": 4, "requests": 36000, "errors": 0, "req_per_s": 9000, "client_cpu_s": 0.396, "startup_cpu_s": 0.012, "startup_requests": 1, "p50_us": 1600, "p90_us": 2100, "p99_us": 3300}
{"kind": "window", "tool": "wrk", "conns": 16, "pair": 2, "position": 2, "seconds": 4, "requests": 40000, "errors": 0, "req_per_s": 10000, "client_cpu_s": 0.4, "startup_cpu_s": 0.004, "startup_requests": 0, "p50_us": 1500, "p90_us": 2000, "p99_us": null}
`

// loadgenSection reads the run in dir's LoadgenFile and writes its section.
func loadgenSection(dir string) (string, error) {
	lg, err := readLoadgen(dir)
	if err != nil {
		return "", err
	}
	m := &md{}
	writeLoadgenSection(m, &figures{Loadgen: lg})
	return m.b.String(), nil
}

func TestLoadgenSection(t *testing.T) {
	dir := t.TempDir()
	if got, err := loadgenSection(dir); err != nil || got != "" {
		t.Fatalf("a run without %s: got %q, %v; want nothing", loadgenFile, got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, loadgenFile), []byte(loadgenRaw), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := loadgenSection(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Load engine vs wrk", "`scripts/vs-wrk.sh 2 16 4 /safe`", "Note: shared machine", "- Start-up run, wrk: wrk -v.",
		"### 16 connections",
		// 10 µs/req each: 0.4 s / 40000 and 0.396 s / 36000 → 11 µs; net:
		// (0.396−0.012)/35999 ÷ (0.4−0.004)/40000 = 1.0775 (1.077).
		"| 1 | wrk | 10000 | 9000 | 0.900 | 10.00 | 11.00 | 1.100 | 4.0 | 12.0 | 1.077 | 1.50 / 3.00 | 1.60 / 3.30 | 0 / 0 |",
		"| 2 | wafbench | 10000 | 9000 | 0.900 | 10.00 | 11.00 | 1.100 | 4.0 | 12.0 | 1.077 | 1.50 / – | 1.60 / 3.30 | 0 / 0 |",
		"| median |  |  |  | 0.900 |  |  | 1.100 |  |  | 1.077 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	for name, raw := range map[string]string{
		"no header":    `{"kind": "window", "tool": "wrk"}` + "\n",
		"unknown tool": `{"kind": "header"}` + "\n" + `{"kind": "window", "tool": "ab"}` + "\n",
		"torn line":    `{"kind": "header"}` + "\n" + `{"kind": "wind`,
	} {
		if err := os.WriteFile(filepath.Join(dir, loadgenFile), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadgenSection(dir); err == nil || !strings.Contains(err.Error(), loadgenFile) {
			t.Errorf("%s: got %v, want an error naming %s", name, err, loadgenFile)
		}
	}
}

// TestLoadgenSectionH2load: a comparison with h2load over HTTP/2 names the
// tool, its version and the protocol; wrk windows are then foreign.
func TestLoadgenSectionH2load(t *testing.T) {
	dir := t.TempDir()
	raw := `{"kind": "header", "command": "scripts/vs-h2load.sh 1 16 3 /safe h2-tls 1", "started_utc": "2026-12-02T00:00:00Z", "pairs": 1, "conns": [16], "seconds": 3, "path": "/safe", "reference": "h2load", "reference_version": "h2load nghttp2/1.52.0", "downstream": "h2-tls", "streams": 1, "envoy_cpus": "0", "client_cpus": "1", "cpu_method": "user+sys", "startup_method": {"h2load": "h2load -n1", "wafbench": "one request"}}
{"kind": "window", "tool": "h2load", "conns": 16, "pair": 1, "position": 1, "seconds": 3, "requests": 30000, "errors": 0, "req_per_s": 10000, "client_cpu_s": 0.3, "startup_cpu_s": 0.003, "startup_requests": 1, "p50_us": null, "p90_us": null, "p99_us": null}
{"kind": "window", "tool": "wafbench", "conns": 16, "pair": 1, "position": 2, "seconds": 3, "requests": 30000, "errors": 0, "req_per_s": 10000, "client_cpu_s": 0.27, "startup_cpu_s": 0.012, "startup_requests": 1, "p50_us": 1600, "p90_us": 2100, "p99_us": 3300}
`
	if err := os.WriteFile(filepath.Join(dir, loadgenFile), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := loadgenSection(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Load engine vs h2load", "and h2load (h2load nghttp2/1.52.0)", "GET /safe over h2-tls with 1 stream per connection",
		"Ratios are wafbench ÷ h2load", "h2load reports no percentiles", "- Start-up run, h2load: h2load -n1.",
		"| pair | first | h2load req/s |",
		"| 1 | h2load | 10000 | 10000 | 1.000 | 10.00 | 9.00 | 0.900 | 3.0 | 12.0 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	bad := strings.Replace(raw, `"tool": "h2load"`, `"tool": "wrk"`, 1)
	if err := os.WriteFile(filepath.Join(dir, loadgenFile), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadgenSection(dir); err == nil || !strings.Contains(err.Error(), "want h2load or wafbench") {
		t.Errorf("a wrk window in an h2load comparison: got %v", err)
	}
}

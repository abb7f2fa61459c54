//go:build modsecurity_engine

package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workload is one request shape of the benchmark suite.
type workload struct {
	name    string
	method  string
	uri     string
	headers string
	body    string
}

const browserHeaders = "Host: localhost\nUser-Agent: wafbench/1.0\nAccept: */*\n"

func workloads() []workload {
	// json_4k: {"message":"ccc…"} of exactly 4096 bytes.
	const prefix, suffix = `{"message":"`, `"}`
	json4k := prefix + strings.Repeat("c", 4096-len(prefix)-len(suffix)) + suffix
	return []workload{
		{name: "headers", method: "GET", uri: "/safe", headers: browserHeaders},
		{name: "json_4k", method: "POST", uri: "/json",
			headers: browserHeaders + "Content-Type: application/json\n", body: json4k},
	}
}

func TestWorkloadShapes(t *testing.T) {
	for _, w := range workloads() {
		if w.name == "json_4k" && len(w.body) != 4096 {
			t.Errorf("json_4k: body is %d bytes, want 4096", len(w.body))
		}
	}
}

// TestEvaluate checks the cgo path against the small rules file of the unit tests.
func TestEvaluate(t *testing.T) {
	e, err := NewEngine(filepath.Join("..", "testdata", "rules.conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tests := []struct {
		name                       string
		method, uri, headers, body string
		want                       int
	}{
		{"benign", "GET", "/safe", browserHeaders, "", 200},
		{"phase1_block", "GET", "/safe", browserHeaders + "X-WAF-Benchmark: phase1-block\n", "", 403},
		{"sqli", "POST", "/attack", browserHeaders + "Content-Type: application/x-www-form-urlencoded\n",
			"user=1234+OR+1%3D1", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Evaluate([]byte(tt.method), []byte(tt.uri), []byte(tt.headers), []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
	if _, err := NewEngine("/nonexistent/wafbench.conf"); err == nil {
		t.Error("NewEngine(missing file): got nil error")
	}
}

// BenchmarkEngine measures one full request per op (phases 1, 2, logging).
func BenchmarkEngine(b *testing.B) {
	path := os.Getenv("WAFBENCH_RULES")
	if path == "" {
		b.Skip("WAFBENCH_RULES is not set: point it at a ModSecurity rules file, e.g. " +
			"`wafbench crs export` writes build/crs/main.conf (CRS 4.25); " +
			"filters/modsecurity/testdata/rules.conf is a small non-CRS set")
	}
	if _, err := os.Stat(path); err != nil {
		b.Skipf("WAFBENCH_RULES=%s: %v (create it with `wafbench crs export`)", path, err)
	}
	e, err := NewEngine(path)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, w := range workloads() {
		method, uri, headers, body := []byte(w.method), []byte(w.uri), []byte(w.headers), []byte(w.body)
		b.Run("modsecurity/"+w.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for i := 0; i < b.N; i++ {
				st, err := e.Evaluate(method, uri, headers, body)
				if err != nil {
					b.Fatal(err)
				}
				if st != 200 {
					b.Fatalf("%s: status %d, want 200", w.name, st)
				}
			}
		})
	}
}

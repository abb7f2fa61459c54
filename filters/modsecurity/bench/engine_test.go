//go:build integration && modsecurity_engine

package bench

import (
	"path/filepath"
	"strings"
	"testing"

	"wafbench/tests/enginebench"
)

// browserHeaders are the base headers of profiles/seed.yaml, for the small
// tests against testdata/rules.conf.
const browserHeaders = "Host: bench.local\nUser-Agent: wafbench/1.0\nAccept: */*\n"

// workload is one request as the ModSecurity module hands it to
// libmodsecurity: Host (from :authority) first, then every other header of
// Envoy's map, as "name: value" lines for the C API.
type workload struct {
	name, method, uri, headers string
	body                       []byte
	want                       int
}

func workloads(tb testing.TB) []workload {
	tb.Helper()
	reqs, err := enginebench.Requests()
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]workload, 0, len(reqs))
	for _, r := range reqs {
		var hs strings.Builder
		hs.WriteString("Host: " + r.Header(":authority") + "\n")
		for _, h := range r.Headers {
			if !strings.HasPrefix(h[0], ":") {
				hs.WriteString(h[0] + ": " + h[1] + "\n")
			}
		}
		out = append(out, workload{name: r.Name, method: r.Header(":method"), uri: r.Header(":path"),
			headers: hs.String(), body: r.Body, want: r.Want})
	}
	return out
}

func TestWorkloads(t *testing.T) {
	byName := map[string]workload{}
	for _, w := range workloads(t) {
		byName[w.name] = w
	}
	h := byName["headers"]
	wantHeaders := "Host: bench.local\nuser-agent: wafbench/1.0\naccept: */*\nx-forwarded-proto: http\n"
	if h.method != "GET" || h.uri != "/safe" || h.headers != wantHeaders || h.body != nil {
		t.Errorf("headers: got %s %s %q body %d bytes, want GET /safe %q no body", h.method, h.uri, h.headers, len(h.body), wantHeaders)
	}
	if j := byName["json_4k"]; !strings.Contains(j.headers, "content-type: application/json\ncontent-length: 4096\n") {
		t.Errorf("json_4k: headers %q lack content-type and content-length", j.headers)
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

// BenchmarkEngine measures one whole request per op against the CRS files
// the Envoy module loads (build/crs/main.conf or $WAFBENCH_RULES): new
// transaction, connection, URI, headers, phase 1, body, phase 2, logging and
// transaction free, as the module does per stream, plus one cgo call and
// the C API's header-line parsing. Names:
// BenchmarkEngine/modsecurity/<workload> for every workload of
// profiles/*.yaml.
func BenchmarkEngine(b *testing.B) {
	rules, err := enginebench.RulesFile()
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewEngine(rules)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, w := range workloads(b) {
		method, uri, headers := []byte(w.method), []byte(w.uri), []byte(w.headers)
		b.Run("modsecurity/"+w.name, func(b *testing.B) {
			st, err := e.Evaluate(method, uri, headers, w.body)
			if err != nil {
				b.Fatal(err)
			}
			if st != w.want {
				b.Fatalf("status: got %d, want %d", st, w.want)
			}
			b.ReportAllocs()
			thrash, err := enginebench.ThrashBuffer()
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if thrash != nil {
					b.StopTimer()
					enginebench.Touch(thrash)
					b.StartTimer()
				}
				e.Evaluate(method, uri, headers, w.body)
			}
		})
	}
}

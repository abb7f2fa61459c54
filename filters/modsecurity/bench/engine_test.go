//go:build modsecurity_engine

package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"wafbench/driver/profile"
)

// rulesEnv names the rules file the engine benchmark loads; default
// <repo>/build/crs/main.conf, the file the Envoy modules load.
const rulesEnv = "WAFBENCH_RULES"

// browserHeaders are the base headers of profiles/seed.yaml, for the small
// tests against testdata/rules.conf.
const browserHeaders = "Host: bench.local\nUser-Agent: wafbench/1.0\nAccept: */*\n"

// repoRoot is the repository root, seen from this package's directory
// (go test runs in it).
func repoRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// benchRules returns the path of the CRS entry point both modules load in
// Envoy; it fails, saying how to create it, when the file is missing.
func benchRules(tb testing.TB) string {
	tb.Helper()
	path := os.Getenv(rulesEnv)
	if path == "" {
		path = filepath.Join(repoRoot(tb), "build", "crs", "main.conf")
	}
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("engine benchmark rules: %v; run `make crs` (writes build/crs/main.conf) or set %s", err, rulesEnv)
	}
	return path
}

// workload is one request of profiles/*.yaml as the ModSecurity module hands
// it to libmodsecurity inside Envoy.
type workload struct {
	name    string
	method  string
	uri     string
	headers string // "name: value\n" lines, in the order the module adds them
	body    []byte
	want    int // status the workload expects in a WAF mode
}

// workloads builds the engine requests from the profile files the driver
// runs, so the benchmark cannot drift from the load.
//
// Inside Envoy the module sees the request after the HTTP/1.1 codec and the
// connection manager: header names lower-cased, Host as :authority (the
// module adds it first, as "Host"), Content-Length when the driver sent a
// body (it always does then) and x-forwarded-proto added by the connection
// manager before the filter chain (request-id generation is off in our
// bootstrap).
func workloads(tb testing.TB) []workload {
	tb.Helper()
	set, err := profile.LoadDir(filepath.Join(repoRoot(tb), "profiles"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []workload
	for _, name := range set.WorkloadNames() {
		w := set.Workloads[name]
		body := w.BodyBytes()
		var host string
		var rest strings.Builder
		for _, h := range set.HeaderPairs(w) {
			if strings.EqualFold(h[0], "host") {
				host = "Host: " + h[1] + "\n"
				continue
			}
			rest.WriteString(strings.ToLower(h[0]) + ": " + h[1] + "\n")
		}
		if body != nil {
			rest.WriteString("content-length: " + strconv.Itoa(len(body)) + "\n")
		}
		rest.WriteString("x-forwarded-proto: http\n")
		out = append(out, workload{name: name, method: w.Method, uri: w.FullPath(), headers: host + rest.String(),
			body: body, want: w.Expected("modsecurity")})
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
	j := byName["json_4k"]
	if len(j.body) != 4096 || !strings.HasPrefix(string(j.body), `{"message":"ccc`) || !strings.HasSuffix(string(j.body), `cc"}`) {
		t.Errorf("json_4k: body %d bytes %.20q…, want 4096 bytes {\"message\":\"ccc…\"}", len(j.body), j.body)
	}
	if !strings.Contains(j.headers, "content-type: application/json\ncontent-length: 4096\n") {
		t.Errorf("json_4k: headers %q lack content-type and content-length", j.headers)
	}
	if s := byName["blocked_sqli"]; s.want != 403 {
		t.Errorf("blocked_sqli: expected status %d, want 403", s.want)
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
	e, err := NewEngine(benchRules(b))
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
			for b.Loop() {
				e.Evaluate(method, uri, headers, w.body)
			}
		})
	}
}

package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"wafbench/driver/profile"
)

// rulesEnv names the rules file the engine benchmark loads; default
// <repo>/build/crs/main.conf, the file the Envoy modules load.
const rulesEnv = "WAFBENCH_RULES"

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

// benchRules returns the absolute path of the CRS entry point both modules
// load in Envoy; it fails the benchmark, saying how to create it, when the
// file is missing.
func benchRules(tb testing.TB) string {
	tb.Helper()
	path := os.Getenv(rulesEnv)
	if path == "" {
		path = filepath.Join(repoRoot(tb), "build", "crs", "main.conf")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		tb.Fatalf("engine benchmark rules: %v; run `make crs` (writes build/crs/main.conf) or set %s", err, rulesEnv)
	}
	return abs
}

// benchCase is one workload of profiles/*.yaml as the Coraza module hands it
// to the engine inside Envoy.
type benchCase struct {
	name string
	req  Request
	want int // status the workload expects in a WAF mode
}

// seedCases builds the engine requests from the profile files the driver
// runs, so the benchmark cannot drift from the load.
//
// Inside Envoy the module sees the request after the HTTP/1.1 codec and the
// connection manager: header names lower-cased, Host as :authority,
// Content-Length when the driver sent a body (it always does then), and
// x-forwarded-proto added by the connection manager before the filter chain
// (request-id generation is off in our bootstrap). The module maps that
// list with MapHeaders; so does this function.
func seedCases(tb testing.TB) []benchCase {
	tb.Helper()
	set, err := profile.LoadDir(filepath.Join(repoRoot(tb), "profiles"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []benchCase
	for _, name := range set.WorkloadNames() {
		w := set.Workloads[name]
		path, body := w.FullPath(), w.BodyBytes()
		envoy := [][2]string{{":authority", ""}, {":path", path}, {":method", w.Method}, {":scheme", "http"}}
		for _, h := range set.HeaderPairs(w) {
			if strings.EqualFold(h[0], "host") {
				envoy[0][1] = h[1]
				continue
			}
			envoy = append(envoy, [2]string{strings.ToLower(h[0]), h[1]})
		}
		if body != nil {
			envoy = append(envoy, [2]string{"content-length", strconv.Itoa(len(body))})
		}
		envoy = append(envoy, [2]string{"x-forwarded-proto", "http"})
		rl, hs := MapHeaders(nil, envoy)
		out = append(out, benchCase{
			name: name,
			req:  Request{Method: rl.Method, Path: rl.Path, Headers: hs, Body: body},
			want: w.Expected("coraza"),
		})
	}
	return out
}

func TestSeedCases(t *testing.T) {
	byName := map[string]benchCase{}
	for _, c := range seedCases(t) {
		byName[c.name] = c
	}
	h, ok := byName["headers"]
	if !ok {
		t.Fatal("profiles have no headers workload")
	}
	want := [][2]string{{"user-agent", "wafbench/1.0"}, {"accept", "*/*"}, {"x-forwarded-proto", "http"}, {"Host", "bench.local"}}
	if h.req.Method != "GET" || h.req.Path != "/safe" || len(h.req.Body) != 0 || !slices.Equal(h.req.Headers, want) {
		t.Errorf("headers: got %s %s %q body %d bytes, want GET /safe %q no body", h.req.Method, h.req.Path, h.req.Headers, len(h.req.Body), want)
	}
	j := byName["json_4k"]
	if len(j.req.Body) != 4096 || !strings.HasPrefix(string(j.req.Body), `{"message":"ccc`) || !strings.HasSuffix(string(j.req.Body), `cc"}`) {
		t.Errorf("json_4k: body %d bytes %.20q…, want 4096 bytes {\"message\":\"ccc…\"}", len(j.req.Body), j.req.Body)
	}
	if s := byName["blocked_sqli"]; s.want != 403 {
		t.Errorf("blocked_sqli: want status %d, expected 403", s.want)
	}
}

// BenchmarkEngine measures one whole request per op against the CRS files
// the Envoy module loads (build/crs/main.conf or $WAFBENCH_RULES): new
// transaction, connection, URI, headers, phase 1, body, phase 2, logging and
// close, as the module does per stream. Names:
// BenchmarkEngine/coraza/<workload> for every workload of profiles/*.yaml.
// Run with GOMAXPROCS=1 on the Envoy CPU to charge GC work to that CPU as
// Envoy would (scripts/overhead.sh).
func BenchmarkEngine(b *testing.B) {
	w, err := New(Config{RulesFile: benchRules(b)})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range seedCases(b) {
		b.Run("coraza/"+bc.name, func(b *testing.B) {
			if got := w.Evaluate(bc.req).Status; got != bc.want {
				b.Fatalf("status: got %d, want %d", got, bc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				w.Evaluate(bc.req)
			}
		})
	}
}

// Package enginebench gives the in-process engine benchmarks of both WAF
// modules the same inputs: the workloads of profiles/*.yaml as a module sees
// them inside Envoy, and the CRS entry point the modules load.
package enginebench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"wafbench/driver/envoy"
	"wafbench/driver/profile"
)

// rulesEnv names the rules file the benchmarks load instead of the default
// <repo>/build/crs/main.conf.
const rulesEnv = "WAFBENCH_RULES"

// Request is one workload as the filter receives it from Envoy.
type Request struct {
	Name string
	// Headers is Envoy's header map after the HTTP/1.1 codec and the
	// connection manager: pseudo-headers first (:authority carries Host),
	// names lower-cased, content-length whenever the driver sent a body,
	// and the x-forwarded-proto the connection manager adds (request IDs are
	// off in our bootstrap).
	Headers [][2]string
	Body    []byte
	Want    int // status the workload expects in a WAF mode
}

// Header returns the value of the (pseudo-)header name, or "".
func (r Request) Header(name string) string {
	for _, h := range r.Headers {
		if h[0] == name {
			return h[1]
		}
	}
	return ""
}

// Requests builds every workload of the repository's profiles, so that the
// benchmarks cannot drift from what the driver sends. Workloads whose
// verdict is an outcome to measure (measure_verdict: the adversarial
// inputs, where a limit may turn an attack into a pass or a 400),
// workloads without a request of their own (mixes, replays) and slow-client
// workloads (their verdict is the proxy's: a timeout's 408, or the engine's
// on a request sent slowly, which in process is the same request at once)
// are left out: a benchmark checks each request's verdict against its
// expectation.
func Requests() ([]Request, error) {
	set, err := loadSet()
	if err != nil {
		return nil, err
	}
	var out []Request
	for _, name := range set.WorkloadNames() {
		w := set.Workloads[name]
		if w.MeasureVerdict || w.IsMix() || w.Replay != nil || w.Slow != nil {
			continue
		}
		out = append(out, request(set, w))
	}
	return out, nil
}

// SuiteRequests builds the workloads of one suite of the repository's
// profiles (e.g. "train", the PGO training suite), each once, in the
// suite's order.
func SuiteRequests(suite string) ([]Request, error) {
	set, err := loadSet()
	if err != nil {
		return nil, err
	}
	su, ok := set.Suites[suite]
	if !ok {
		return nil, fmt.Errorf("profiles: unknown suite %q (known: %s)", suite, strings.Join(set.SuiteNames(), ", "))
	}
	var out []Request
	seen := map[string]bool{}
	for _, k := range su.Workloads {
		name, _, _ := strings.Cut(k, "@")
		w, ok := set.Workloads[name]
		if !ok {
			return nil, fmt.Errorf("profiles: suite %s: unknown workload %q", suite, name)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, request(set, w))
		}
	}
	return out, nil
}

func loadSet() (*profile.Set, error) {
	root, err := envoy.RepoRoot()
	if err != nil {
		return nil, err
	}
	return profile.LoadDir(filepath.Join(root, "profiles"))
}

// request is workload w as the filter receives it.
func request(set *profile.Set, w *profile.Workload) Request {
	body := w.BodyBytes()
	hs := [][2]string{{":authority", ""}, {":path", w.FullPath()}, {":method", w.Method}, {":scheme", "http"}}
	for _, h := range set.HeaderPairs(w) {
		if strings.EqualFold(h[0], "host") {
			hs[0][1] = h[1]
			continue
		}
		hs = append(hs, [2]string{strings.ToLower(h[0]), h[1]})
	}
	if body != nil {
		hs = append(hs, [2]string{"content-length", strconv.Itoa(len(body))})
	}
	hs = append(hs, [2]string{"x-forwarded-proto", "http"})
	return Request{Name: w.Name, Headers: hs, Body: body, Want: w.Expected("waf")}
}

// RulesFile is the absolute path of the CRS entry point the modules load
// ($WAFBENCH_RULES, else <repo>/build/crs/main.conf); the error says how to
// create it.
func RulesFile() (string, error) {
	path := os.Getenv(rulesEnv)
	if path == "" {
		root, err := envoy.RepoRoot()
		if err != nil {
			return "", err
		}
		path = filepath.Join(root, "build", "crs", "main.conf")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("engine benchmark rules: %v; run `make crs` (writes build/crs/main.conf) or set %s", err, rulesEnv)
	}
	return abs, nil
}

// ThrashEnv names the size in bytes of a buffer the engine benchmarks
// (BenchmarkEngine of both modules) write one byte of every cache line of
// between requests, untimed (unset or 0: none), so that each request starts
// with caches holding other work, as inside Envoy, whose own request work
// runs between two of the engine's, rather than the engine's own data from
// the previous request. The size sets how much is evicted: about the
// second-level cache's is what Envoy's HTTP work between requests touches.
const ThrashEnv = "WAFBENCH_THRASH_BYTES"

// ThrashBuffer is the buffer ThrashEnv asks for; nil when it is unset or 0.
func ThrashBuffer() ([]byte, error) {
	v := os.Getenv(ThrashEnv)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%s: want a byte count, got %q", ThrashEnv, v)
	}
	if n == 0 {
		return nil, nil
	}
	return make([]byte, n), nil
}

// Touch writes one byte per 64-byte cache line of buf.
func Touch(buf []byte) {
	for i := 0; i < len(buf); i += 64 {
		buf[i]++
	}
}

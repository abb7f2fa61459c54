//go:build integration && modsecurity_engine

package waf

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/internal/crs"
)

// Both engines, as this server runs them, over the real CRS export: the
// same verdicts on the same requests and the same counters moving (the
// ModSecurity engine is linked from build/filters, make -C
// filters/modsecurity).
func TestEnginesAgreeOnCRS(t *testing.T) {
	man, err := crs.Export(filepath.Join(t.TempDir(), "crs"), crs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := []byte(fmt.Sprintf(`{"rules_file":%q,"inspect_response":false,"max_body_bytes":4096}`, man.MainConf))
	base := [][2]string{{":authority", "example.test"}, {"user-agent", "wafbench-test/1.0"}, {"accept", "text/html"}}
	hdrs := func(method, path string, extra ...[2]string) [][2]string {
		return append(append([][2]string{{":method", method}, {":path", path}}, base...), extra...)
	}
	form := [2]string{"content-type", "application/x-www-form-urlencoded"}
	cases := []struct {
		name    string
		headers [][2]string
		body    string // "" means no body
		want    int    // 0: passes
	}{
		{"benign GET", hdrs("GET", "/index.html?page=2"), "", 0},
		{"benign POST", hdrs("POST", "/search", form), "q=blue+shoes", 0},
		{"SQLi query", hdrs("GET", "/items?id=1%27%20OR%20%271%27%3D%271"), "", 403},
		{"SQLi body", hdrs("POST", "/login", form), "user=admin&pass=x%27%20OR%201%3D1--%20", 403},
		{"XSS body", hdrs("POST", "/comment", form), "text=%3Cscript%3Ealert(1)%3C%2Fscript%3E", 403},
		{"phase-1 header", hdrs("GET", "/", [2]string{"x-waf-benchmark", "phase1-block"}), "", 403},
		{"body too large", hdrs("POST", "/upload", form), "a=" + strings.Repeat("x", 4096), 413},
	}
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) {
			eng, err := Open(engine, cfg, engine)
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			for _, c := range cases {
				st := eng.NewStream()
				r := st.RequestHeaders(Request{Headers: c.headers, Client: "127.0.0.1:40000", Server: "127.0.0.1:10000"}, c.body == "")
				if r == nil && c.body != "" {
					r = st.RequestBody([]byte(c.body))
				}
				st.Close()
				got := 0
				if r != nil {
					got = r.Status
				}
				if got != c.want {
					t.Errorf("%s: status %d, want %d (reply %+v)", c.name, got, c.want, r)
				}
			}
			stats := map[string]uint64{}
			for _, s := range eng.Stats() {
				stats[strings.TrimPrefix(s.Name, "wafbench_"+engine+"_")] = s.Value
			}
			want := map[string]uint64{"requests": 7, "blocked_phase1": 1, "blocked_phase2": 3, "body_too_large": 1, "engine_errors": 0}
			if fmt.Sprint(stats) != fmt.Sprint(want) {
				t.Errorf("counters %v, want %v", stats, want)
			}
		})
	}
}

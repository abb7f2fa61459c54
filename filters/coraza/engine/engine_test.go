package engine

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"wafbench/internal/crs"
)

var (
	crsOnce sync.Once
	crsWAF  *WAF
	crsErr  error
	crsDir  string
)

// loadCRS exports the real CRS once per test binary and loads it.
func loadCRS(tb testing.TB) *WAF {
	tb.Helper()
	crsOnce.Do(func() {
		crsDir, crsErr = tmpDir()
		if crsErr != nil {
			return
		}
		var m *crs.Manifest
		m, crsErr = crs.Export(crsDir, crs.Options{})
		if crsErr != nil {
			return
		}
		crsWAF, crsErr = New(Config{RulesFile: m.MainConf})
	})
	if crsErr != nil {
		tb.Fatalf("load CRS: %v", crsErr)
	}
	return crsWAF
}

// benignHeaders are what CRS needs to keep a benign request's score at 0.
var benignHeaders = [][2]string{
	{"Host", "localhost"},
	{"User-Agent", "wafbench/1.0"},
	{"Accept", "*/*"},
}

func withHeaders(extra ...[2]string) [][2]string {
	return append(append([][2]string{}, benignHeaders...), extra...)
}

// json4k is {"message":"ccc…"} of exactly n bytes.
func jsonBody(n int) []byte {
	const pre, post = `{"message":"`, `"}`
	return []byte(pre + strings.Repeat("c", n-len(pre)-len(post)) + post)
}

func TestEvaluateCRS(t *testing.T) {
	w := loadCRS(t)
	for _, tc := range []struct {
		name string
		req  request
		want Verdict
	}{
		{
			name: "benign GET",
			req:  request{Method: "GET", Path: "/safe", Headers: withHeaders()},
			want: Verdict{Status: 200},
		},
		{
			name: "clean query",
			req:  request{Method: "GET", Path: "/search?q=" + strings.Repeat("normal-value-", 32), Headers: withHeaders()},
			want: Verdict{Status: 200},
		},
		{
			name: "form 1k",
			req: request{Method: "POST", Path: "/form", Body: []byte("value=" + strings.Repeat("b", 1018)),
				Headers: withHeaders([2]string{"Content-Type", "application/x-www-form-urlencoded"})},
			want: Verdict{Status: 200},
		},
		{
			name: "json 4k",
			req: request{Method: "POST", Path: "/json", Body: jsonBody(4096),
				Headers: withHeaders([2]string{"Content-Type", "application/json"})},
			want: Verdict{Status: 200},
		},
		{
			name: "json 64k",
			req: request{Method: "POST", Path: "/json", Body: jsonBody(64 << 10),
				Headers: withHeaders([2]string{"Content-Type", "application/json"})},
			want: Verdict{Status: 200},
		},
		{
			name: "sqli form",
			req: request{Method: "POST", Path: "/attack", Body: []byte("user=1234+OR+1%3D1"),
				Headers: withHeaders([2]string{"Content-Type", "application/x-www-form-urlencoded"})},
			want: Verdict{Status: 403, RuleID: 949110, Phase: 2},
		},
		{
			name: "xss query",
			req:  request{Method: "GET", Path: "/search?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E", Headers: withHeaders()},
			want: Verdict{Status: 403, RuleID: 949110, Phase: 2},
		},
		{
			name: "phase-1 header",
			req:  request{Method: "GET", Path: "/safe", Headers: withHeaders([2]string{"X-WAF-Benchmark", "phase1-block"})},
			want: Verdict{Status: 403, RuleID: 100001, Phase: 1},
		},
		{
			name: "body over limit",
			req: request{Method: "POST", Path: "/json", Body: jsonBody(defaultMaxBodyBytes + 10),
				Headers: withHeaders([2]string{"Content-Type", "application/json"})},
			want: Verdict{Status: 413, Phase: 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.evaluate(tc.req); got != tc.want {
				t.Errorf("Evaluate: got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTxChunkedBody(t *testing.T) {
	w := loadCRS(t)
	tx := w.NewTx()
	defer tx.Close()
	tx.ProcessConnection("127.0.0.1", 5555, "127.0.0.1", 8080)
	tx.ProcessURI("/attack", "POST", "HTTP/1.1")
	for _, h := range withHeaders([2]string{"Content-Type", "application/x-www-form-urlencoded"}) {
		tx.AddHeader(h[0], h[1])
	}
	if v := tx.ProcessRequestHeaders(); v != nil {
		t.Fatalf("phase 1: got %+v, want nil", v)
	}
	for _, c := range []string{"user=1234", "+OR+1", "%3D1"} {
		if v, err := tx.WriteBody([]byte(c)); v != nil || err != nil {
			t.Fatalf("WriteBody(%q): got %+v, %v", c, v, err)
		}
	}
	v := tx.ProcessRequestBody()
	if v == nil || v.Status != 403 || v.Phase != 2 {
		t.Errorf("phase 2: got %+v, want 403 in phase 2", v)
	}
	// The verdict is sticky.
	if again := tx.ProcessRequestBody(); again != v {
		t.Errorf("second ProcessRequestBody: got %+v, want %+v", again, v)
	}
	tx.ProcessLogging()
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // substring of the error; "" means valid
	}{
		{"ok", Config{RulesFile: "/x/main.conf"}, ""},
		{"empty", Config{}, "rules_file"},
		{"relative", Config{RulesFile: "main.conf"}, "absolute"},
		{"negative body", Config{RulesFile: "/x", MaxBodyBytes: -1}, "max_body_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate: got %v, want error containing %q", err, tc.want)
			}
		})
	}
	if _, err := New(Config{RulesFile: "/nonexistent/main.conf"}); err == nil {
		t.Error("New with missing rules file: got nil error")
	}
}

func TestJSONBodySize(t *testing.T) {
	if got := len(jsonBody(4096)); got != 4096 {
		t.Fatalf("jsonBody(4096): got %d bytes", got)
	}
	if !bytes.HasPrefix(jsonBody(4096), []byte(`{"message":"ccc`)) {
		t.Fatal("jsonBody shape")
	}
}

func TestInspectResponse(t *testing.T) {
	w := loadCRS(t)
	rw, err := New(Config{RulesFile: w.Config().RulesFile, InspectResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		w    *WAF
	}{{"off", w}, {"on", rw}} {
		t.Run(tc.name, func(t *testing.T) {
			tx := tc.w.NewTx()
			defer tx.Close()
			tx.ProcessURI("/safe", "GET", "HTTP/1.1")
			for _, h := range benignHeaders {
				tx.AddHeader(h[0], h[1])
			}
			if v := tx.ProcessRequestHeaders(); v != nil {
				t.Fatalf("phase 1: %+v", v)
			}
			if v := tx.ProcessRequestBody(); v != nil {
				t.Fatalf("phase 2: %+v", v)
			}
			tx.AddResponseHeader("Content-Type", "text/plain")
			if v := tx.processResponse(200, "HTTP/1.1"); v != nil {
				t.Errorf("ProcessResponse: got %+v, want nil", v)
			}
			if err := tx.Err(); err != nil {
				t.Errorf("Err: %v", err)
			}
		})
	}
}

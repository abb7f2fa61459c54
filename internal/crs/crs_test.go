package crs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/corazawaf/coraza/v3"
	"github.com/corazawaf/coraza/v3/experimental"
)

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestExport(t *testing.T) {
	dir := t.TempDir()
	m, err := Export(dir, Options{})
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	t.Run("rule files", func(t *testing.T) {
		matches, _ := filepath.Glob(filepath.Join(dir, rulesDir, "*.conf"))
		if got, want := len(matches), WantRuleFiles; got != want {
			t.Errorf("rule .conf files on disk: got %d, want %d", got, want)
		}
		if got, want := m.RuleFiles, WantRuleFiles; got != want {
			t.Errorf("Manifest.RuleFiles: got %d, want %d", got, want)
		}
		data, _ := filepath.Glob(filepath.Join(dir, rulesDir, "*.data"))
		if len(data) == 0 {
			t.Error("no .data files exported")
		}
	})
	t.Run("adaptation", func(t *testing.T) {
		if got, want := len(m.Adaptations), 2; got != want {
			t.Fatalf("adaptations: got %d, want %d", got, want)
		}
		for i, want := range []string{"rules/REQUEST-949-BLOCKING-EVALUATION.conf", "rules/RESPONSE-959-BLOCKING-EVALUATION.conf"} {
			a := m.Adaptations[i]
			if a.File != want {
				t.Errorf("adaptation %d file: got %q, want %q", i, a.File, want)
			}
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(a.File)))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(b), "\n")
			if got := lines[a.Line-1]; got != a.After || !strings.HasSuffix(got, `SecRule TX:EARLY_BLOCKING "@eq 1" "t:none"`) {
				t.Errorf("%s:%d: got %q, want %q", a.File, a.Line, got, a.After)
			}
			if strings.Contains(string(b), `"@eq 1"`+"\n") {
				t.Errorf("%s still has an action-less EARLY_BLOCKING chain rule", a.File)
			}
		}
	})
	t.Run("main.conf", func(t *testing.T) {
		b, err := os.ReadFile(m.MainConf)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("@")) {
			t.Errorf("main.conf contains '@':\n%s", b)
		}
		var inc []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if p, ok := strings.CutPrefix(l, "Include "); ok {
				if !filepath.IsAbs(p) {
					t.Errorf("Include path not absolute: %q", p)
				}
				inc = append(inc, p)
			}
		}
		if got, want := len(inc), 3+WantRuleFiles; got != want {
			t.Errorf("Include lines: got %d, want %d", got, want)
		}
		if !strings.HasSuffix(inc[0], CommonFile) || !strings.HasSuffix(inc[1], setupFile) {
			t.Errorf("Include order: got %q, %q first; want %s then %s", inc[0], inc[1], CommonFile, setupFile)
		}
		// The phase-1 block follows CRS initialization (see phase1Conf).
		if !strings.HasSuffix(inc[2], "REQUEST-901-INITIALIZATION.conf") || !strings.HasSuffix(inc[3], phase1File) {
			t.Errorf("Include order: got %q, %q; want REQUEST-901-INITIALIZATION.conf then %s", inc[2], inc[3], phase1File)
		}
	})
	t.Run("common conf", func(t *testing.T) {
		b, _ := os.ReadFile(filepath.Join(dir, CommonFile))
		for _, want := range []string{
			"SecRuleEngine On\n", "SecRequestBodyLimit 1048577\n", "SecRequestBodyNoFilesLimit 1048577\n",
			"SecRequestBodyLimitAction Reject\n", "SecRequestBodyJsonDepthLimit 1024\n", "SecArgumentsLimit 1001\n",
			"SecResponseBodyAccess Off\n", "SecAuditEngine Off\n", "setvar:tx.blocking_paranoia_level=1",
			"ctl:requestBodyProcessor=XML", "ctl:requestBodyProcessor=JSON", `SecRule REQBODY_ERROR "!@eq 0"`,
			`SecRule MULTIPART_STRICT_ERROR "!@eq 0"`, `SecRule MULTIPART_UNMATCHED_BOUNDARY "@eq 1"`,
			`SecRule &ARGS "@gt 1000"`, `SecRule INBOUND_DATA_ERROR "@eq 1"`, `SecRule TX:/^MSC_/ "!@streq 0"`,
		} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s lacks %q", CommonFile, want)
			}
		}
		// The manifest lists every line of the file, in order, and nothing else.
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		var settings []string
		for _, st := range m.Settings {
			settings = append(settings, st.Line)
			if st.Name == "" || st.Why == "" {
				t.Errorf("setting %q: want a name and a reason", st.Line)
			}
		}
		if got, want := strings.Join(settings, "\n"), strings.Join(lines, "\n"); got != want {
			t.Errorf("manifest settings:\n%s\nwant the lines of %s:\n%s", got, CommonFile, want)
		}
		p1, _ := os.ReadFile(filepath.Join(dir, phase1File))
		if !bytes.Contains(p1, []byte(`"@streq phase1-block" "id:100001,phase:1,deny,status:403,`)) {
			t.Errorf("%s lacks the phase-1 deny: %s", phase1File, p1)
		}
	})
	t.Run("manifest file", func(t *testing.T) {
		got, err := ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.SHA256 != m.SHA256 || got.Version != version || len(got.Files) != len(m.Files) {
			t.Errorf("manifest.json: got %+v, want %+v", got, m)
		}
	})
}

func TestExportIdempotent(t *testing.T) {
	dir := t.TempDir()
	m1, err := Export(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := readAll(t, dir)
	m2, err := Export(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	second := readAll(t, dir)
	if m1.SHA256 != m2.SHA256 || m1.MainConfSHA256 != m2.MainConfSHA256 {
		t.Errorf("manifest hash changed: %s/%s -> %s/%s", m1.SHA256, m1.MainConfSHA256, m2.SHA256, m2.MainConfSHA256)
	}
	if len(first) != len(second) {
		t.Fatalf("file count changed: %d -> %d", len(first), len(second))
	}
	for n, b := range first {
		if !bytes.Equal(b, second[n]) {
			t.Errorf("%s changed between exports", n)
		}
	}
	// The rule hash does not depend on the directory.
	m3, err := Export(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m3.SHA256 != m1.SHA256 {
		t.Errorf("SHA256 depends on dir: got %s, want %s", m3.SHA256, m1.SHA256)
	}
}

func TestExportRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		dir  string
		opts Options
	}{
		"at sign":  {dir: filepath.Join(t.TempDir(), "x@y"), opts: Options{}},
		"paranoia": {dir: t.TempDir(), opts: Options{ParanoiaLevel: 5}},
		"max args": {dir: t.TempDir(), opts: Options{MaxArguments: -1}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Export(tc.dir, tc.opts); err == nil {
				t.Error("Export: got nil error, want one")
			}
		})
	}
}

func TestCorazaLoadsMainConf(t *testing.T) {
	m, err := Export(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	waf, err := coraza.NewWAF(coraza.NewWAFConfig().WithDirectivesFromFile(m.MainConf))
	if err != nil {
		t.Fatalf("coraza.NewWAF(%s): %v", m.MainConf, err)
	}
	if rc, ok := waf.(experimental.WAFWithRules); ok {
		t.Logf("coraza loaded %d rules from %s", rc.RulesCount(), m.MainConf)
		// Coraza counts a chain as one rule and skips SecMarker; libmodsecurity
		// 3.0.9 reports 847 (836 CRS + 11 wafbench) for the same files.
		if got, want := rc.RulesCount(), 667; got != want {
			t.Errorf("coraza rule count: got %d, want %d", got, want)
		}
	}
	tx := waf.NewTransaction()
	defer tx.Close()
	tx.AddRequestHeader("X-WAF-Benchmark", "phase1-block")
	tx.ProcessURI("/safe", "GET", "HTTP/1.1")
	if it := tx.ProcessRequestHeaders(); it == nil || it.Status != 403 || it.RuleID != 100001 {
		t.Errorf("phase-1 block header: got %+v, want status 403 by rule 100001", it)
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	m, err := Export(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Files(dir)
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	if len(got) == 0 || got[0] != m.MainConf {
		t.Fatalf("Files: got %q first, want %s", got, m.MainConf)
	}
	seen := map[string]bool{}
	for _, f := range got {
		if seen[f] {
			t.Errorf("Files lists %s twice", f)
		}
		seen[f] = true
		if _, err := os.Stat(f); err != nil {
			t.Errorf("Files lists %s: %v", f, err)
		}
	}
	rel := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	for _, want := range []string{
		CommonFile, setupFile, phase1File, "rules/REQUEST-901-INITIALIZATION.conf",
		"rules/RESPONSE-980-CORRELATION.conf",                        // the last rule file
		"rules/lfi-os-files.data", "rules/scanners-user-agents.data", // named by @pmFromFile
	} {
		if !seen[rel(want)] {
			t.Errorf("Files lacks %s", want)
		}
	}
	// Every exported .conf is loaded; a .data file no rule names is not read.
	confs, _ := filepath.Glob(filepath.Join(dir, rulesDir, "*.conf"))
	for _, c := range confs {
		if !seen[c] {
			t.Errorf("Files lacks %s", c)
		}
	}
	if seen[rel("rules/unix-shell-aliases.data")] {
		t.Errorf("Files lists rules/unix-shell-aliases.data, which no rule names")
	}
	if got, want := len(got), 1+3+WantRuleFiles+19; got != want {
		t.Errorf("Files: %d files, want %d (main.conf, 3 wafbench/setup files, %d rule files, 19 data files)", got, want, WantRuleFiles)
	}

	t.Run("missing include", func(t *testing.T) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, mainFile), []byte("# comment\nInclude "+filepath.Join(d, "nope.conf")+"\n"), 0o644)
		if _, err := Files(d); err == nil || !strings.Contains(err.Error(), "nope.conf") {
			t.Errorf("Files with a missing include: got %v, want an error naming nope.conf", err)
		}
	})
	t.Run("relative data file", func(t *testing.T) {
		d := t.TempDir()
		os.MkdirAll(filepath.Join(d, "r"), 0o755)
		os.WriteFile(filepath.Join(d, mainFile), []byte("Include r/*.conf\n"), 0o644)
		os.WriteFile(filepath.Join(d, "r", "a.conf"), []byte("SecRule ARGS \"@pmFromFile a.data\" \"id:1,deny\"\n# SecRule ARGS \"@pmf gone.data\" \"id:2\"\n"), 0o644)
		os.WriteFile(filepath.Join(d, "r", "a.data"), []byte("x\n"), 0o644)
		got, err := Files(d)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{filepath.Join(d, mainFile), filepath.Join(d, "r", "a.conf"), filepath.Join(d, "r", "a.data")}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("Files: got %q, want %q", got, want)
		}
	})
}

// TestCorazaEnforcesCommonConf checks, in process, the verdicts of the
// common configuration's own rules in Coraza. libmodsecurity gives the same
// verdicts through Envoy (tests/e2e TestParity).
func TestCorazaEnforcesCommonConf(t *testing.T) {
	m, err := Export(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	waf, err := coraza.NewWAF(coraza.NewWAFConfig().WithDirectivesFromFile(m.MainConf))
	if err != nil {
		t.Fatal(err)
	}
	fields := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "f%d=v&", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, ct, body string
		wantStatus     int // 0: no interruption
		wantRule       int
	}{
		{"1000 form fields", "application/x-www-form-urlencoded", fields(999) + "last=v", 0, 0},
		{"1001 form fields then sqli", "application/x-www-form-urlencoded", fields(1000) + "user=1234+OR+1%3D1", 400, 200007},
		{"json", "application/json", `{"a":1}`, 0, 0},
		{"+json", "application/cloudevents+json", `{"a":1}`, 403, 949110}, // CRS 920420 allows no +json type
		{"malformed json", "application/json", `{"a":`, 400, 200002},
		{"xml", "application/xml", `<a><b>1</b></a>`, 0, 0},
		{"soap xml", "application/soap+xml; charset=utf-8", `<a/>`, 0, 0},
		{"mismatched xml", "text/xml", `<a><b>1</c></a>`, 400, 200002},
		{"multipart without final boundary", "multipart/form-data; boundary=xx", "--xx\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n", 400, 200003}, // Go: unexpected EOF, a strict error only
		{"multipart duplicate name", "multipart/form-data; boundary=xx", "--xx\r\nContent-Disposition: form-data; name=\"a\"; name=\"b\"\r\n\r\nv\r\n--xx--\r\n", 400, 200003},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := waf.NewTransaction()
			defer tx.Close()
			tx.ProcessURI("/form", "POST", "HTTP/1.1")
			for _, h := range [][2]string{{"Host", "bench.local"}, {"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"},
				{"Content-Type", tc.ct}, {"Content-Length", strconv.Itoa(len(tc.body))}} {
				tx.AddRequestHeader(h[0], h[1])
			}
			if it := tx.ProcessRequestHeaders(); it != nil {
				t.Fatalf("phase 1: got %+v, want no interruption", it)
			}
			if it, _, err := tx.WriteRequestBody([]byte(tc.body)); it != nil || err != nil {
				t.Fatalf("write body: got %+v, %v", it, err)
			}
			it, err := tx.ProcessRequestBody()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantStatus == 0 && it != nil:
				t.Errorf("got %+v, want no interruption", it)
			case tc.wantStatus != 0 && (it == nil || it.Status != tc.wantStatus || it.RuleID != tc.wantRule):
				t.Errorf("got %+v, want status %d by rule %d", it, tc.wantStatus, tc.wantRule)
			}
		})
	}
}

// TestRules reads the facts a crs replay's selection rests on from the
// rule files: paranoia tag, anomaly severity, chained rules joined, and
// the crs-test-only variables a rule reads.
func TestRules(t *testing.T) {
	rs, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id       int
		file     string
		paranoia int
		score    string
	}{
		{942100, "REQUEST-942-APPLICATION-ATTACK-SQLI.conf", 1, "critical"},
		{942130, "REQUEST-942-APPLICATION-ATTACK-SQLI.conf", 2, "critical"},
		{920350, "REQUEST-920-PROTOCOL-ENFORCEMENT.conf", 1, "warning"},
		{949110, "REQUEST-949-BLOCKING-EVALUATION.conf", 0, ""},
	}
	for _, tt := range tests {
		r, ok := rs[tt.id]
		if !ok || r.File != tt.file || r.Paranoia != tt.paranoia || r.Score != tt.score {
			t.Errorf("rule %d: got %+v (found %v), want file %s, paranoia %d, score %q", tt.id, r, ok, tt.file, tt.paranoia, tt.score)
		}
	}
	// 920370's chain: the guard on tx.arg_length and the ARGS check.
	if r := rs[920370]; !strings.Contains(r.Text, "TX:ARG_LENGTH") || !strings.Contains(r.Text, "%{tx.arg_length}") {
		t.Errorf("rule 920370: want its chain joined, got %q", r.Text)
	}
	conf := conformanceVarActions()
	for _, v := range ConformanceOnlyVars() {
		if !strings.Contains(conf, "setvar:tx."+v+"=") {
			t.Errorf("%s: not set by rule 900005 (%s)", v, conf)
		}
	}
}

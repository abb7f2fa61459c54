package crs

import (
	"bytes"
	"os"
	"path/filepath"
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
		matches, _ := filepath.Glob(filepath.Join(dir, RulesDir, "*.conf"))
		if got, want := len(matches), WantRuleFiles; got != want {
			t.Errorf("rule .conf files on disk: got %d, want %d", got, want)
		}
		if got, want := m.RuleFiles, WantRuleFiles; got != want {
			t.Errorf("Manifest.RuleFiles: got %d, want %d", got, want)
		}
		data, _ := filepath.Glob(filepath.Join(dir, RulesDir, "*.data"))
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
		if !strings.HasSuffix(inc[0], CommonFile) || !strings.HasSuffix(inc[1], SetupFile) {
			t.Errorf("Include order: got %q, %q first; want %s then %s", inc[0], inc[1], CommonFile, SetupFile)
		}
		// The phase-1 block follows CRS initialization (see phase1Conf).
		if !strings.HasSuffix(inc[2], "REQUEST-901-INITIALIZATION.conf") || !strings.HasSuffix(inc[3], Phase1File) {
			t.Errorf("Include order: got %q, %q; want REQUEST-901-INITIALIZATION.conf then %s", inc[2], inc[3], Phase1File)
		}
	})
	t.Run("common conf", func(t *testing.T) {
		b, _ := os.ReadFile(filepath.Join(dir, CommonFile))
		for _, want := range []string{
			"SecRuleEngine On\n", "SecRequestBodyLimit 1048576\n", "SecRequestBodyLimitAction Reject\n",
			"SecRequestBodyJsonDepthLimit 1024\n", "SecArgumentsLimit 1000\n", "SecResponseBodyAccess Off\n",
			"SecAuditEngine Off\n", "id:200001,", "setvar:tx.blocking_paranoia_level=1",
		} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s lacks %q", CommonFile, want)
			}
		}
		p1, _ := os.ReadFile(filepath.Join(dir, Phase1File))
		if !bytes.Contains(p1, []byte(`"@streq phase1-block" "id:100001,phase:1,deny,status:403,`)) {
			t.Errorf("%s lacks the phase-1 deny: %s", Phase1File, p1)
		}
	})
	t.Run("manifest file", func(t *testing.T) {
		got, err := ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.SHA256 != m.SHA256 || got.Version != Version || len(got.Files) != len(m.Files) {
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
		// 3.0.9 reports 839 (836 CRS + 3 wafbench) for the same files.
		if got, want := rc.RulesCount(), 659; got != want {
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

package rulefiles_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"wafbench/internal/crs"
	"wafbench/internal/rulefiles"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWalk(t *testing.T) {
	dir := t.TempDir()
	main := write(t, dir, "main.conf", "# comment\nInclude rules/*.conf\nInclude \"extra.conf\"\nSecRule ARGS \"@pmFromFile words.data\" \\\n  \"id:1,deny\"\n")
	write(t, dir, "words.data", "a\n")
	write(t, dir, "rules/b.conf", "SecAction \"id:3,pass\"\n")
	write(t, dir, "rules/a.conf", "Include ../extra.conf\n")
	write(t, dir, "extra.conf", "SecAction \"id:2,pass\"\n")
	var lines []string
	files, err := rulefiles.Walk(main, func(l rulefiles.Line) error {
		lines = append(lines, filepath.Base(l.File)+":"+itoa(l.N)+" "+l.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		got = append(got, rel)
	}
	want := []string{"main.conf", "rules/a.conf", "extra.conf", "rules/b.conf", "words.data"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files = %v, want %v", got, want)
	}
	if last := lines[len(lines)-1]; last != `main.conf:4 SecRule ARGS "@pmFromFile words.data"    "id:1,deny"` {
		t.Errorf("continued line = %q", last)
	}
	write(t, dir, "rules/c.conf", "Include missing.conf\n")
	if _, err := rulefiles.Walk(main, nil); err == nil || !strings.Contains(err.Error(), "missing.conf") {
		t.Errorf("missing include: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCheckNoScripts(t *testing.T) {
	tests := []struct {
		name, rules, wantErr string
	}{
		{"plain", `SecRule ARGS "@rx exec" "id:1,deny,msg:'exec is a word here'"`, ""},
		{"script", "SecRuleScript /opt/x.lua \"id:1\"", "SecRuleScript (Lua) is not allowed"},
		{"remote", "SecRemoteRules key https://example.invalid/rules", "SecRemoteRules is not allowed"},
		{"inspectFile", `SecRule FILES_TMPNAMES "@inspectFile /bin/check" "id:1,deny"`, "@inspectFile is not allowed"},
		{"exec", `SecRule ARGS "@rx x" "id:1,pass,exec:/opt/x.lua"`, "action exec: is not allowed"},
		{"exec quoted", `SecAction "id:1,pass, 'exec:/opt/x.lua'"`, "action exec: is not allowed"},
		{"exec continued", "SecRule ARGS \"@rx x\" \\\n \"id:1,pass,\\\n EXEC:/opt/x.lua\"", "main.conf:1: action exec:"},
		{"included", "Include other.conf", "other.conf:2: SecRuleScript"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "other.conf", "SecAction \"id:9,pass\"\nSecRuleScript /x.lua\n")
			err := rulefiles.CheckNoScripts(write(t, dir, "main.conf", tt.rules+"\n"))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// The real CRS export passes the check, and Walk finds what crs.Files does.
func TestCRSPasses(t *testing.T) {
	man, err := crs.Export(filepath.Join(t.TempDir(), "crs"), crs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rulefiles.CheckNoScripts(man.MainConf); err != nil {
		t.Fatalf("CRS refused: %v", err)
	}
	files, err := rulefiles.Walk(man.MainConf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < crs.WantRuleFiles+2 {
		t.Errorf("Walk found %d files, want more than the %d rule files", len(files), crs.WantRuleFiles)
	}
}

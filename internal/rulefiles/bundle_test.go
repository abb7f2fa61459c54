package rulefiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBundleWalk checks that walking a bundle visits the same files and
// lines as walking the directory it was read from.
func TestBundleWalk(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.conf", "Include rules/*.conf\nSecAction \"id:1,pass\"\n")
	write("rules/a.conf", "SecRule ARGS \"@pmFromFile words.data\" \"id:2,deny\"\n")
	write("rules/b.conf", "SecRule ARGS \"@rx x\" \\\n  \"id:3,deny\"\n")
	write("rules/words.data", "evil\n")
	main := filepath.Join(dir, "main.conf")

	var fromDisk, fromBundle []Line
	wantFiles, err := Walk(main, func(l Line) error { fromDisk = append(fromDisk, l); return nil })
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadBundle(main)
	if err != nil {
		t.Fatal(err)
	}
	gotFiles, err := walkFS(b, main, func(l Line) error { fromBundle = append(fromBundle, l); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotFiles, wantFiles) {
		t.Errorf("files: got %q, want %q", gotFiles, wantFiles)
	}
	if !slices.Equal(fromBundle, fromDisk) {
		t.Errorf("lines: got %+v, want %+v", fromBundle, fromDisk)
	}
	if len(b) != 4 {
		t.Errorf("bundle: got %d files, want 4", len(b))
	}
	if got, err := b.ReadFile(filepath.Join(dir, "rules/words.data")); err != nil || string(got) != "evil\n" {
		t.Errorf("ReadFile: got %q, %v", got, err)
	}
	if _, err := b.Open(filepath.Join(dir, "nope.conf")); err == nil {
		t.Error("Open of a missing file: got no error")
	}

	write("bad.conf", "SecRuleScript /x.lua\n")
	bad, err := ReadBundle(filepath.Join(dir, "bad.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckNoScriptsFS(bad, filepath.Join(dir, "bad.conf")); err == nil || !strings.Contains(err.Error(), "SecRuleScript") {
		t.Errorf("CheckNoScriptsFS: got %v, want the SecRuleScript refusal", err)
	}
}

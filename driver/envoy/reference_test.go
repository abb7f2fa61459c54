package envoy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReferencesMatchGenerator wants every envoy/<mode>.yaml byte for byte
// what References generates, and no other .yaml file in envoy/.
func TestReferencesMatchGenerator(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ReferenceDir)
	const hint = "run `go generate ./driver/envoy` (wafbench envoy-config --out envoy) and commit envoy/"
	var want []string
	for _, r := range References {
		want = append(want, r.File)
		t.Run(r.File, func(t *testing.T) {
			gen, err := r.YAML()
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, r.File))
			if err != nil {
				t.Fatalf("%v; %s", err, hint)
			}
			if !bytes.Equal(got, gen) {
				t.Errorf("%s/%s differs from the generator; %s", ReferenceDir, r.File, hint)
			}
		})
	}
	have, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range have {
		if !slices.Contains(want, filepath.Base(p)) {
			t.Errorf("%s/%s: no mode generates it; %s", ReferenceDir, filepath.Base(p), hint)
		}
	}
}

// TestReferenceTable: one reference per Envoy mode, and no path of this
// machine in any of them (they hold RepoPlaceholder instead).
func TestReferenceTable(t *testing.T) {
	seen := map[Mode]bool{}
	for _, r := range References {
		if r.File != string(r.Config.Mode)+".yaml" {
			t.Errorf("reference of mode %s is in %s, want %s.yaml", r.Config.Mode, r.File, r.Config.Mode)
		}
		seen[r.Config.Mode] = true
		y, err := r.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if wd, _ := os.Getwd(); strings.Contains(string(y), wd) || strings.Contains(string(y), os.TempDir()+"/") {
			t.Errorf("%s names a path of this machine", r.File)
		}
		if r.Config.Mode.IsWAF() && !r.Config.Mode.IsExternal() && !bytes.Contains(y, []byte(RepoPlaceholder+"/build/")) { // an external mode names the server's socket, not a file of the checkout
			t.Errorf("%s: no path under %s", r.File, RepoPlaceholder)
		}
	}
	for _, m := range Modes {
		if !seen[m] {
			t.Errorf("mode %s has no reference configuration", m)
		}
	}
}

// TestWriteReferences writes the references into a directory holding a
// stale mode's file and a README: the stale file goes, the README stays.
func TestWriteReferences(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"gone.yaml": "x: 1\n", "README.md": "keep\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteReferences(dir, ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"README.md"}
	for _, r := range References {
		want = append(want, r.File)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("files after WriteReferences: got %q, want %q", got, want)
	}
	if err := WriteReferences(filepath.Join(dir, "README.md", "x"), ""); err == nil {
		t.Error("WriteReferences into a path below a file: no error")
	}
}

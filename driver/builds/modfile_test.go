package builds

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestModfilesCompileTraining checks that every go-module build's module
// file still provides what the PGO training compiles with it: the engine
// package and its tests (BenchmarkTrain loads the repository's profiles,
// so it imports much of the driver). A module file is a copy of go.mod
// with one engine version changed; a dependency added to go.mod and
// imported by the driver is missing from it until added there too, and
// only `wafbench pgo` would say so.
func TestModfilesCompileTraining(t *testing.T) {
	root := repoRoot(t)
	s, err := Load(filepath.Join(root, "filters", "builds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, b := range s.Builds {
		mod := b.modfile()
		if mod == "" || mod == "go.mod" {
			continue
		}
		key := mod + " " + strings.Join(b.Tags, ",")
		if seen[key] {
			continue
		}
		seen[key] = true
		args := []string{"list", "-modfile=" + mod, "-tags=" + strings.Join(b.Tags, ","), "-test", "-deps", "-e", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", "./filters/coraza/engine"}
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if msg := strings.TrimSpace(string(out)); err != nil || msg != "" {
			t.Errorf("%s (build %s): go %s: %v\n%s", mod, b.Mode(), strings.Join(args, " "), err, msg)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no go-module build with a module file of its own in filters/builds.yaml")
	}
}

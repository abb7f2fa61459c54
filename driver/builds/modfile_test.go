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
		// The package errors go to stdout (-e with the format above);
		// stderr carries the go command's own chatter, such as
		// "go: downloading …" on a machine whose module cache lacks a
		// version only this module file names, so it counts only when
		// the command fails.
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if msg := strings.TrimSpace(string(out)); err != nil || msg != "" {
			t.Errorf("%s (build %s): go %s: %v\n%s\n%s", mod, b.Mode(), strings.Join(args, " "), err, msg, strings.TrimSpace(stderr.String()))
		}
	}
	if len(seen) == 0 {
		t.Fatal("no go-module build with a module file of its own in filters/builds.yaml")
	}
}

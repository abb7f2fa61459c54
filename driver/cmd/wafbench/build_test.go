package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildBadInput: an unknown build or a malformed builds file is one line,
// exit status 2, naming the problem (and, for a build, the known ones).
func TestBuildBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "builds.yaml")
	if err := os.WriteFile(bad, []byte("builds:\n  - engine: naxsi\n    default: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown build", []string{"build", "modsecurity@nope"}, `unknown build "modsecurity@nope"; known builds: modsecurity, modsecurity@3.0.14-o2`},
		{"unknown pgo build", []string{"pgo", "coraza@nope"}, `unknown build "coraza@nope"`},
		{"pgo of a build without pgo", []string{"pgo", "coraza@re2"}, "build coraza@re2 has no pgo field"},
		{"bad builds file", []string{"build", "--builds", bad, "--list"}, `build #1 (naxsi): engine: unknown engine "naxsi"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if code := exitCode(err, &stderr); code != 2 {
				t.Fatalf("exit status: got %d, want 2 (err %v)", code, err)
			}
			got := strings.TrimSpace(stderr.String())
			if !strings.Contains(got, tt.want) || strings.Count(got, "\n") > 0 {
				t.Errorf("stderr: got %q, want one line containing %q", got, tt.want)
			}
		})
	}
}

// TestBuildList lists every build of the repository's builds.yaml with its
// directory, and builds nothing.
func TestBuildList(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"build", "--list"}, &stdout, &stderr); err != nil {
		t.Fatalf("build --list: %v\n%s", err, stderr.String())
	}
	rows := map[string]string{}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 3 {
			rows[f[0]] = f[1]
		}
	}
	for mode, dir := range map[string]string{
		"modsecurity":            "build/engines/modsecurity",
		"modsecurity@3.0.14-pgo": "build/engines/modsecurity-3.0.14-pgo",
		"coraza@re2":             "build/engines/coraza-re2",
	} {
		if got := rows[mode]; got != dir {
			t.Errorf("build --list: %s: got directory %q, want %q\n%s", mode, got, dir, stdout.String())
		}
	}
	if !strings.Contains(stdout.String(), "[instrumented: training only]") {
		t.Errorf("build --list does not mark the instrumented build:\n%s", stdout.String())
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpstreamBadInput: an unknown --upstream is bad input: one line naming
// it, exit status 2, no run directory.
func TestUpstreamBadInput(t *testing.T) {
	for _, kind := range []string{"httpbin", "nginx", "Go-HTTPBin"} {
		t.Run(kind, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"run", "--upstream", kind, "--modes", "passthrough", "--results", results}, &stdout, &stderr)
			var msg bytes.Buffer
			if got := exitCode(err, &msg); got != 2 {
				t.Fatalf("exit status: got %d, want 2 (err %v)", got, err)
			}
			want := `--upstream: unknown upstream "` + kind + `" (want wafbench or go-httpbin)`
			if line := msg.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, want) {
				t.Errorf("message: got %q, want one line containing %q", line, want)
			}
			if _, err := os.Stat(results); !os.IsNotExist(err) {
				t.Errorf("results directory %s was created on bad input", results)
			}
		})
	}
}

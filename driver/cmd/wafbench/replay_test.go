package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayBadFile checks that a workload replaying a bad file makes run
// fail as bad input — exit 2, one line naming the file, entry and field —
// before any run directory is created.
func TestReplayBadFile(t *testing.T) {
	for _, tc := range []struct {
		name, format, file, data, want string
	}{
		{"har", "har", "bad.har", `{"log":{"entries":[{"request":{"method":"GET","url":"http://a/"}},{"request":{"method":"GET","url":"/x"}}]}}`,
			`workload r: replay: bad.har: entry 2: request.url: want an absolute http(s) URL, got "/x"`},
		{"vegeta", "vegeta", "bad.txt", "GET http://a/\nNo-colon-here\n", `workload r: replay: bad.txt:2: target 1: header: want "Name: value"`},
		{"missing", "har", "none.har", "", "workload r: replay: open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.data != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			prof := "workloads:\n- {name: r, replay: {file: " + tc.file + ", format: " + tc.format + "}, conns: [1], expect: {default: 200}}\n" +
				"suites:\n  s: {repeats: 1, duration: 1s, workloads: [r@1]}\n"
			if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(prof), 0o644); err != nil {
				t.Fatal(err)
			}
			results := filepath.Join(t.TempDir(), "results")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"run", "--profiles", dir, "--suite", "s", "--modes", "passthrough", "--results", results}, &stdout, &stderr)
			var msg bytes.Buffer
			if got := exitCode(err, &msg); got != 2 {
				t.Fatalf("exit status: got %d, want 2 (err %v)", got, err)
			}
			if line := msg.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, tc.want) {
				t.Errorf("message: got %q, want one line containing %q", line, tc.want)
			}
			if _, err := os.Stat(results); !os.IsNotExist(err) {
				t.Errorf("results directory created on bad input")
			}
		})
	}
}

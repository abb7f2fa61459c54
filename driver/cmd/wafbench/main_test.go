package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary stand in for the wafbench executable: in
// scripts (testscript's "wafbench" command) and in the children the driver
// itself spawns (the upstream), which inherit WAFBENCH_AS_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("WAFBENCH_AS_MAIN") == "1" {
		main()
		return
	}
	testscript.Main(m, map[string]func(){"wafbench": main})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("WAFBENCH_AS_MAIN", "1")
			root, _ := filepath.Abs("../../..")
			e.Setenv("REPO", root)
			for _, k := range []string{"ENVOY_BIN", "HOME", "GOCACHE"} {
				if v := os.Getenv(k); v != "" {
					e.Setenv(k, v)
				}
			}
			return nil
		},
	})
}

// TestBadInput checks that every kind of bad input is one line naming the
// problem, exit status 2, and no run directory.
func TestBadInput(t *testing.T) {
	badProfiles := t.TempDir()
	if err := os.WriteFile(filepath.Join(badProfiles, "x.yaml"), []byte("workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, body: {fill: x, size: 4k}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badOverrides := filepath.Join(t.TempDir(), "overrides.yaml")
	if err := os.WriteFile(badOverrides, []byte("overrides: [{name: a, tests: [920100-999], cause: engine, reason: r}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"list unknown kind", []string{"list", "bogus"}, `list: unknown kind "bogus"`},
		{"list unknown suite", []string{"list", "workloads", "--suite", "nope"}, `unknown suite "nope"`},
		{"negative warmup", []string{"run", "--warmup", "-1s"}, "must not be negative"},
		{"zero timeout", []string{"run", "--timeout", "0"}, "--timeout: want > 0"},
		{"unknown flag", []string{"run", "--bogus"}, "flag provided but not defined: -bogus"},
		{"unknown mode", []string{"run", "--modes", "passthrough,bogus"}, `unknown mode "bogus"`},
		{"unknown suite", []string{"run", "--suite", "nope"}, `unknown suite "nope"`},
		{"unknown workload", []string{"run", "--workloads", "headers@16,nope"}, `unknown workload "nope"`},
		{"malformed profile", []string{"run", "--profiles", badProfiles}, "profile x.yaml"},
		{"missing envoy", []string{"run", "--modes", "passthrough", "--envoy", "/nonexistent/envoy"}, "/nonexistent/envoy"},
		{"cpu not available", []string{"run", "--modes", "passthrough", "--envoy-cpus", "999"}, "CPU 999 is not available"},
		{"bad cpu list", []string{"run", "--modes", "passthrough", "--client-cpus", "3-1"}, "--client-cpus"},
		{"bad repeats", []string{"run", "--modes", "passthrough", "--order", "random"}, "order"},
		{"target not loopback", []string{"load", "--target", "http://192.0.2.1/"}, "not a loopback address"},
		{"bad conns", []string{"load", "--target", "http://127.0.0.1:1/", "--conns", "0"}, "conns"},
		{"report no dir", []string{"report", "/nonexistent"}, "not a run directory"},
		{"merge one dir", []string{"merge", "--out", "x", "a"}, "at least two"},
		{"crs-test unknown mode", []string{"crs-test", "--modes", "coraza,bogus"}, `unknown mode "bogus"`},
		{"crs-test mode without a WAF", []string{"crs-test", "--modes", "passthrough"}, "runs no WAF"},
		{"crs-test unknown override test", []string{"crs-test", "--overrides", badOverrides}, `unknown test "920100-999"`},
		{"crs-test missing overrides", []string{"crs-test", "--overrides", "/nonexistent/o.yaml"}, "/nonexistent/o.yaml"},
		{"crs-test bad test filter", []string{"crs-test", "--tests", "("}, "--tests"},
		{"crs-test rejudge no run", []string{"crs-test", "--rejudge", "/nonexistent"}, "holds no crs-test.json"},
		{"crs-test compare one run", []string{"crs-test", "--compare", "/nonexistent"}, "want OLD_DIR,NEW_DIR"},
		{"crs-test compare no run", []string{"crs-test", "--compare", "/nonexistent/a,/nonexistent/b"}, "/nonexistent/a"},
		{"crs-test attach no run", []string{"crs-test", "--attach", "/nonexistent"}, "is not a run directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			args := tt.args
			if args[0] == "run" || args[0] == "crs-test" {
				args = append(args, "--results", results)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, &stdout, &stderr)
			var msg bytes.Buffer
			if got := exitCode(err, &msg); got != 2 {
				t.Fatalf("exit status: got %d, want 2 (err %v)", got, err)
			}
			line := msg.String()
			if strings.Count(line, "\n") != 1 || !strings.Contains(line, tt.want) {
				t.Errorf("message: got %q, want one line containing %q", line, tt.want)
			}
			if _, err := os.Stat(results); !os.IsNotExist(err) {
				t.Errorf("results directory %s was created on bad input", results)
			}
		})
	}
}

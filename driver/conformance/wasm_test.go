//go:build integration

package conformance

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// wafbenchBin is the wafbench executable: $WAFBENCH_BIN, else build/wafbench.
func wafbenchBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("WAFBENCH_BIN")
	if bin == "" {
		root, err := filepath.Abs("../..")
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(root, "build", "wafbench")
	}
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("wafbench executable %s missing (%v): run 'make build' or set WAFBENCH_BIN", bin, err)
	}
	return bin
}

// TestWasmIdleAndTimes runs two tests through a real coraza-wasm Envoy
// (the real module and CRS, `make modules crs`): a CONNECT Envoy holds
// without evaluating it ends by the idle rule with --wasm-idle's interval
// and keeps its override; a 64 KiB argument V8 evaluates for seconds is
// not cut, however long it takes. Every stage records its times, and
// crs-test.md lists both among the slowest tests.
func TestWasmIdleAndTimes(t *testing.T) {
	results := t.TempDir()
	cmd := exec.Command(wafbenchBin(t), "crs-test", "--modes", "coraza-wasm", "--tests", `^(920100-4|920390-1)$`,
		"--wasm-idle", "1s", "--results", results, "--progress", "never")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("crs-test: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	dir := filepath.Dir(strings.TrimSpace(stdout.String()))
	r, err := ReadRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Modes) != 1 || r.Modes[0].StartSeconds <= 0 || r.Modes[0].HostCPU <= 0 {
		t.Fatalf("modes %+v, want coraza-wasm with its start-up and host CPU recorded", r.Modes)
	}
	got := map[string]testResult{}
	for _, tr := range r.Modes[0].Tests {
		got[tr.ID] = tr
	}
	connect := got["920100-4"]
	if connect.Outcome != overridden || connect.Override != "envoy-connect-held" || len(connect.Stages) != 1 {
		t.Fatalf("920100-4: %+v, want overridden by envoy-connect-held", connect)
	}
	if s := connect.Stages[0]; s.Status != 0 || !strings.Contains(s.Error, "host idle") || !strings.Contains(s.Error, "of the last 1s on CPU") {
		t.Errorf("920100-4: status %d, error %q; want no response, ended by the 1 s idle interval", s.Status, s.Error)
	}
	large := got["920390-1"]
	if large.Outcome != passed || len(large.Stages) != 1 {
		t.Fatalf("920390-1: %+v, want passed", large)
	}
	if s := large.Stages[0]; s.Status == 0 || s.Error != "" || s.HostCPU <= 0 {
		t.Errorf("920390-1: status %d, error %q, host CPU %v s; want an answer after V8's work", s.Status, s.Error, s.HostCPU)
	}
	for _, tr := range []testResult{connect, large} {
		if s := tr.Stages[0]; s.Seconds <= 0 || s.MarkerSeconds <= 0 {
			t.Errorf("%s: exchange %v s, markers %v s; want both recorded", tr.ID, s.Seconds, s.MarkerSeconds)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Where the time went", "| coraza-wasm | 920100-4 |", "| coraza-wasm | 920390-1 |"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("crs-test.md lacks %q", want)
		}
	}
}

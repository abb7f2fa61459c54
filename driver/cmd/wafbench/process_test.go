//go:build integration

package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// children lists the pids whose parent is pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the ")" of comm: state ppid …
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// startServe runs `wafbench serve --mode mode` and returns it with the URL it
// printed. The caller ends the process (a deferred Kill is registered).
func startServe(t *testing.T, mode string) (*exec.Cmd, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "serve", "--mode", mode)
	cmd.Env = append(os.Environ(), "WAFBENCH_AS_MAIN=1")
	cmd.Dir = "../../.."
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var url string
	select {
	case url = <-lines:
	case <-time.After(patient):
		t.Fatalf("serve printed no URL in %v; stderr: %s", patient, stderr.String())
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("serve printed %q, want http://127.0.0.1:PORT; stderr: %s", url, stderr.String())
	}
	return cmd, url
}

// TestServeWAF starts `wafbench serve` in each WAF mode and sends what a user
// would with curl: a benign GET passes, an SQL injection is blocked.
func TestServeWAF(t *testing.T) {
	for _, mode := range []string{"modsecurity", "coraza"} {
		t.Run(mode, func(t *testing.T) {
			_, url := startServe(t, mode)
			do := func(req *http.Request) int {
				req.Header.Set("User-Agent", "wafbench/1.0")
				req.Header.Set("Accept", "*/*")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			get, _ := http.NewRequest("GET", url+"/safe", nil)
			if got := do(get); got != 200 {
				t.Errorf("benign GET: got %d, want 200", got)
			}
			post, _ := http.NewRequest("POST", url+"/attack", strings.NewReader("user=1234+OR+1%3D1"))
			post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if got := do(post); got != 403 {
				t.Errorf("SQL injection: got %d, want 403", got)
			}
		})
	}
}

// TestNoOrphans starts `wafbench serve` (real Envoy, real upstream), checks a
// request flows, then ends the driver by SIGINT and by SIGKILL and requires
// that neither Envoy nor the upstream outlives it.
func TestNoOrphans(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, url := startServe(t, "passthrough")
			resp, err := http.Get(url + "/safe")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET /safe through envoy: got %d, want 200", resp.StatusCode)
			}
			kids := children(t, cmd.Process.Pid)
			if len(kids) < 2 {
				t.Fatalf("serve has %d children (%v), want envoy and upstream", len(kids), kids)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			deadline := time.Now().Add(patient)
			for _, k := range kids {
				for alive(k) && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if alive(k) {
					syscall.Kill(k, syscall.SIGKILL)
					t.Errorf("child %d survived the driver's %v", k, sig)
				}
			}
		})
	}
}

// patient bounds waits for explicit events that only a hung process would
// not deliver; a busy machine makes them slower, never failing.
const patient = 2 * time.Minute

// TestInterruptKeepsRows sends SIGINT to a running `wafbench run` once its
// first row is on disk, and checks that finished rows stay, the run is
// marked interrupted and the exit status is 130. The run is long in work,
// not in time: 500 trials, each a fresh Envoy and 20 requests, so it cannot
// have finished when the signal lands, however the machine schedules the
// test.
func TestInterruptKeepsRows(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const trials = 500
	res := t.TempDir()
	cmd := exec.Command(self, "run", "--suite", "quick", "--modes", "passthrough", "--workloads", "headers@1",
		"--repeats", strconv.Itoa(trials), "--duration", "1h", "--max-requests", "20", "--timeout", "1h", "--warmup", "0s", "--trial-warmup", "0s",
		"--results", res, "--name", "intr", "--progress", "never", "--no-report")
	cmd.Env = append(os.Environ(), "WAFBENCH_AS_MAIN=1")
	cmd.Dir = "../../.."
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The explicit event: the first complete row in raw.jsonl.
	var raw string
	for deadline := time.Now().Add(patient); raw == ""; time.Sleep(5 * time.Millisecond) {
		m, _ := filepath.Glob(filepath.Join(res, "*-intr", "raw.jsonl"))
		if len(m) == 1 {
			if b, _ := os.ReadFile(m[0]); strings.Contains(string(b), "\n") {
				raw = m[0]
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("run exited (%v) before writing a row; stderr: %s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no row written in %v; stderr: %s", patient, stderr.String())
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = <-exited
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit: got %v, want status 130; stderr: %s", err, stderr.String())
	}
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) >= trials {
		t.Fatalf("run finished all %d rows despite SIGINT", len(lines))
	}
	// Every row but the last is complete; the last is complete or marked
	// interrupted (the signal may land between two trials).
	for i, l := range lines {
		if !strings.Contains(l, `"workload":"headers"`) {
			t.Errorf("row %d damaged: %s", i+1, l)
		}
		interrupted := strings.Contains(l, `"interrupted":true`)
		if interrupted && i != len(lines)-1 {
			t.Errorf("row %d of %d marked interrupted: %s", i+1, len(lines), l)
		}
		if !interrupted && !strings.Contains(l, `"requests":20,`) {
			t.Errorf("row %d: a finished row holds 20 requests: %s", i+1, l)
		}
	}
	meta, err := os.ReadFile(filepath.Join(filepath.Dir(raw), "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(meta), `"status": "interrupted"`) {
		t.Errorf("meta.json status is not interrupted:\n%s", meta)
	}
	t.Logf("%d rows on disk after SIGINT", len(lines))
}

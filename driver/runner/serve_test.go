package runner

import (
	"strings"
	"testing"

	"wafbench/driver/hosts"
)

// namedHost is a host as serving's message sees it: a proxy process with a
// name (the other methods are not called).
type namedHost struct{ hosts.Host }

func (namedHost) Proxy() bool         { return true }
func (namedHost) ProcessName() string { return "envoy" }

// TestServingNamesTheSidecar: serve's line names the wafbench-extproc
// server's pid, CPUs and GOMAXPROCS beside Envoy's in an external mode, so
// that a script can measure the server (scripts/modcost.sh).
func TestServingNamesTheSidecar(t *testing.T) {
	p := &hosts.Process{PID: 10, Admin: "127.0.0.1:2"}
	plain := serving("passthrough", namedHost{}, p, []int{0}, "127.0.0.1:3")
	if want := "passthrough mode, envoy pid 10 on CPUs 0, admin http://127.0.0.1:2, upstream 127.0.0.1:3"; plain != want {
		t.Errorf("got %q, want %q", plain, want)
	}
	p.Sidecar = &hosts.Sidecar{Name: "wafbench-extproc", PID: 11, CPUs: []int{0}, GoMaxProcs: 1}
	got := serving("modsecurity-extproc", namedHost{}, p, []int{0}, "127.0.0.1:3")
	if !strings.Contains(got, ", wafbench-extproc pid 11 on CPUs 0 (GOMAXPROCS 1), upstream") {
		t.Errorf("got %q: no server pid", got)
	}
}

package caddy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/envoy"
	"wafbench/driver/hosts"
	"wafbench/driver/modes"
)

// These tests run the Caddy executable `make modules` builds
// (build/caddy-coraza/caddy) over the CRS export in build/crs, in front of
// the real upstream server. The checks are counts of a fixed number of
// requests.

func requireCaddy(t *testing.T) {
	t.Helper()
	if err := (Host{}).Check(mode(t), hosts.Stack{}); err != nil {
		t.Fatalf("ref-caddy-coraza cannot run on this machine: %v", err)
	}
}

// mode is ref-caddy-coraza, as modes.Registry resolves it.
func mode(t *testing.T) modes.Mode {
	t.Helper()
	n, err := modes.Parse(modes.RefCaddyCoraza)
	if err != nil {
		t.Fatal(err)
	}
	return modes.Mode{Name: n}
}

// rulesFile is the CRS export's entry point (`make crs`).
func rulesFile(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../build/crs/main.conf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("CRS export missing (%v): run 'make crs'", err)
	}
	return p
}

// startCaddyT starts Caddy over rules in front of upAddr, stopped at cleanup.
func startCaddyT(t *testing.T, upAddr, rules string, concurrency int) (*hosts.Process, string) {
	t.Helper()
	dir := t.TempDir()
	p, err := Host{}.Start(context.Background(), mode(t), hosts.Stack{RulesFile: rules, Concurrency: concurrency},
		hosts.Where{UpstreamAddr: upAddr, Dir: dir, TmpDir: t.TempDir(), Tag: "t01"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p, dir
}

// counters reads the host's counters through Process.Stats.
func counters(t *testing.T, p *hosts.Process) map[string]int64 {
	t.Helper()
	b, err := p.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m, err := envoy.ParseStats(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCaddyMissingBinary: a Caddy executable that is not there is named,
// with how to build it.
func TestCaddyMissingBinary(t *testing.T) {
	h := Host{Binary: filepath.Join(t.TempDir(), "caddy")}
	_, err := h.Start(context.Background(), mode(t), hosts.Stack{RulesFile: "/x/main.conf"},
		hosts.Where{UpstreamAddr: "127.0.0.1:9", Dir: t.TempDir(), TmpDir: t.TempDir(), Tag: "x"})
	if err == nil || !strings.Contains(err.Error(), "make modules") {
		t.Errorf("got %v, want an error saying to run 'make modules'", err)
	}
}

package all

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/modes"
)

// TestEveryModeHasItsHost: every mode the repository's build file resolves
// is served by the host of its kind, and each kind by exactly one host.
func TestEveryModeHasItsHost(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[modes.Host]int{}
	for _, h := range Hosts {
		kinds[h.Kind()]++
	}
	for k, n := range kinds {
		if n != 1 {
			t.Errorf("host kind %s: %d hosts, want 1", k, n)
		}
	}
	for _, name := range reg.Known() {
		m, err := reg.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(m).Kind(); got != m.Host {
			t.Errorf("Of(%s).Kind() = %q, want %q", name, got, m.Host)
		}
	}
}

// TestUnknownMode: a Mode no registry resolved gets errors naming it, not a
// host that guesses.
func TestUnknownMode(t *testing.T) {
	m := modes.Mode{Name: modes.Name{Base: "ref-bogus"}}
	h := Of(m)
	if err := h.Check(m, hosts.Stack{}); err == nil || !strings.Contains(err.Error(), "ref-bogus") {
		t.Errorf("Check: got %v, want an error naming ref-bogus", err)
	}
	if _, err := h.Start(context.Background(), m, hosts.Stack{}, hosts.Where{}); err == nil {
		t.Error("Start: got nil error")
	}
}

// TestDownstreams: every host serves plain HTTP/1.1; only Envoy serves the
// others, and a host asked for one it lacks is refused by mode name.
func TestDownstreams(t *testing.T) {
	for _, h := range Hosts {
		m := modes.Mode{Name: modes.Name{Base: "m-" + h.ProcessName(), Host: h.Kind()}}
		for _, p := range downstream.Protocols {
			err := hosts.CheckDownstream(h, m, p)
			if wantOK := p == downstream.H1 || h.Kind() == modes.Envoy; (err == nil) != wantOK {
				t.Errorf("%s over %s: got %v, want served %v", h.ProcessName(), p, err, wantOK)
			}
			if err != nil && !strings.Contains(err.Error(), m.String()+" serves plain HTTP/1.1 only") {
				t.Errorf("%s over %s: got %q, want it to name the mode and what it serves", h.ProcessName(), p, err)
			}
		}
		if err := hosts.CheckDownstream(h, m, ""); err != nil {
			t.Errorf("%s over \"\" (plain HTTP/1.1): %v", h.ProcessName(), err)
		}
	}
	m := modes.Mode{Name: modes.Name{Base: "ref-bogus"}}
	if err := hosts.CheckDownstream(Of(m), m, downstream.H1); err == nil || !strings.Contains(err.Error(), "ref-bogus") {
		t.Errorf("unknown host: got %v, want an error naming ref-bogus", err)
	}
}

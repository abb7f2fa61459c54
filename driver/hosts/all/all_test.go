package all

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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

package direct

import (
	"context"
	"testing"

	"wafbench/driver/hosts"
	"wafbench/driver/modes"
)

// TestDirect: ref-direct has no process; the client talks to the upstream.
func TestDirect(t *testing.T) {
	n, err := modes.Parse(modes.RefDirect)
	if err != nil {
		t.Fatal(err)
	}
	m := modes.Mode{Name: n}
	if err := (Host{}).Check(m, hosts.Stack{}); err != nil {
		t.Errorf("Check: %v, want nil (needs nothing)", err)
	}
	p, err := Host{}.Start(context.Background(), m, hosts.Stack{}, hosts.Where{UpstreamAddr: "127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != 0 || p.Addr != "127.0.0.1:9" || p.Startup != nil || p.Stats != nil {
		t.Errorf("got %+v; want PID 0, the upstream's address, no start-up time, no counters", p)
	}
	p.Stop() // nothing to stop; must not panic
	if (Host{}).Proxy() {
		t.Error("Proxy: got true, want false")
	}
}

package meta

import (
	"strings"
	"testing"

	"wafbench/driver/modes"
	"wafbench/driver/refhost"
)

// TestDescribeCaddy describes the real Caddy executable `make modules`
// builds: its path, hash and the versions linked into it.
func TestDescribeCaddy(t *testing.T) {
	if err := refhost.Check(modes.RefCaddyCoraza); err != nil {
		t.Fatal(err)
	}
	n, err := modes.Parse(modes.RefCaddyCoraza)
	if err != nil {
		t.Fatal(err)
	}
	var unmeasured []string
	mod, err := describeModule("", modes.Mode{Name: n}, &unmeasured)
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := refhost.CaddyBinary()
	if mod.Path != bin || len(mod.SHA256) != 64 || mod.Engine != modes.Coraza || !strings.HasPrefix(mod.EngineVersion, "v3.") ||
		!strings.Contains(mod.Build, "Caddy v2.11.") {
		t.Errorf("describeModule(ref-caddy-coraza) = %+v; want %s, a SHA-256, coraza v3.…, Caddy v2.11.…", mod, bin)
	}
}

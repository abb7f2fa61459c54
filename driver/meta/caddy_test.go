//go:build integration

package meta

import (
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	"wafbench/driver/modes"
)

// TestDescribeCaddy describes the real Caddy executable `make modules`
// builds: its path, hash and the versions linked into it.
func TestDescribeCaddy(t *testing.T) {
	n, err := modes.Parse(modes.RefCaddyCoraza)
	if err != nil {
		t.Fatal(err)
	}
	m := modes.Mode{Name: n}
	if err := all.Of(m).Check(m, hosts.Stack{}); err != nil {
		t.Fatal(err)
	}
	var unmeasured []string
	mod, err := describeModule("", m, &unmeasured)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(repoRoot(t), "build", "caddy-coraza", "caddy")
	if mod.Path != bin || len(mod.SHA256) != 64 || mod.Engine != modes.Coraza || !strings.HasPrefix(mod.EngineVersion, "v3.") ||
		!strings.Contains(mod.Build, "Caddy v2.11.") {
		t.Errorf("describeModule(ref-caddy-coraza) = %+v; want %s, a SHA-256, coraza v3.…, Caddy v2.11.…", mod, bin)
	}
}

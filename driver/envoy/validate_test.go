package envoy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// minimalRules is a rule set both engines parse: enough for Envoy's
// validation to load the module and create its filter config.
const minimalRules = `SecRuleEngine On
SecRequestBodyAccess On
SecRule REQUEST_HEADERS:X-WAF-Benchmark "@streq phase1-block" "id:1,phase:1,deny,status:403,log"
`

// modulesDir is where `make modules` puts libwafbench_*.so.
func modulesDir(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "build", "filters")
}

// TestEnvoyValidate runs `envoy --mode validate` on the generated config of
// every mode. Each mode is a subtest, so passthrough alone runs without the
// modules: go test ./envoy -run 'TestEnvoyValidate/passthrough'.
func TestEnvoyValidate(t *testing.T) {
	bin := envoyBinary(t)
	for _, m := range Modes {
		if m == CorazaWasm {
			// Validation compiles the whole module in V8 (30 s to minutes);
			// tests/e2e starts coraza-wasm for real, once, instead.
			continue
		}
		t.Run(string(m), func(t *testing.T) {
			dir := t.TempDir()
			c := Config{Mode: m, UpstreamAddr: "127.0.0.1:18080", RouteTimeout: 3 * time.Minute}
			switch {
			case m.IsExternal():
				// Validation does not connect: the server need not run.
				// ext_proc reaches it by Unix socket, ext_authz by TCP.
				c.Sidecar = &Sidecar{Listen: UDS.ListenAddr(filepath.Join(dir, "extproc.sock"), "")}
				if m == ExtAuthz {
					c.Sidecar.Listen = TCP.ListenAddr("", "127.0.0.1:18081")
				}
			case m.IsWAF():
				c.ModuleSearchPath = modulesDir(t)
				mod := filepath.Join(c.ModuleSearchPath, m.ModuleFile())
				if _, err := os.Stat(mod); err != nil {
					t.Fatalf("%s: %v: `make modules` builds it (run only passthrough with -run 'TestEnvoyValidate/passthrough')", m, err)
				}
			}
			if m.IsWAF() {
				c.RulesFile = filepath.Join(dir, "rules.conf")
				c.MaxBodyBytes = 1 << 20
				if err := os.WriteFile(c.RulesFile, []byte(minimalRules), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := filepath.Join(dir, "envoy.yaml")
			if err := WriteYAML(c, cfg); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--mode", "validate", "-c", cfg, "--log-level", "warn")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), Env(c)...)
			out, err := cmd.CombinedOutput()
			text := strings.TrimSpace(string(out))
			if err != nil {
				t.Fatalf("envoy --mode validate (%s): %v\n%s", m, err, text)
			}
			if !strings.Contains(text, "configuration '"+cfg+"' OK") {
				t.Fatalf("envoy --mode validate (%s) did not say OK:\n%s", m, text)
			}
			t.Logf("envoy --mode validate: %s", text)
		})
	}
}

//go:build integration

package envoy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"wafbench/driver/downstream"
)

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

// TestEnvoyValidateDownstream runs `envoy --mode validate` on the
// passthrough bootstrap of every non-default downstream (Envoy loads the
// certificate and key there). The WAF modes share the listener; their
// filter chains are validated by TestEnvoyValidate.
func TestEnvoyValidateDownstream(t *testing.T) {
	bin := envoyBinary(t)
	for _, p := range []downstream.Protocol{downstream.H1TLS, downstream.H2TLS, downstream.H2C} {
		t.Run(string(p), func(t *testing.T) {
			dir := t.TempDir()
			c := withDownstream(t, Passthrough, p)
			cfg := filepath.Join(dir, "envoy.yaml")
			if err := WriteYAML(c, cfg); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--mode", "validate", "-c", cfg, "--log-level", "warn")
			cmd.Dir = dir
			cmd.Env = os.Environ()
			out, err := cmd.CombinedOutput()
			text := strings.TrimSpace(string(out))
			if err != nil || !strings.Contains(text, "configuration '"+cfg+"' OK") {
				t.Fatalf("envoy --mode validate (%s): %v\n%s", p, err, text)
			}
		})
	}
}

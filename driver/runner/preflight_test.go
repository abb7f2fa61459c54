//go:build integration

package runner

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/envoy"
	"wafbench/driver/modes"
	"wafbench/driver/upstream"
	"wafbench/internal/crs"
)

// TestPreflightRefusesWhatDoesNotEnforce starts the real Envoy with the real
// modules and CRS and checks that the preflight passes an enforcing WAF and
// refuses one in DetectionOnly, and a module file put in another engine's
// place.
func TestPreflightRefusesWhatDoesNotEnforce(t *testing.T) {
	root, err := envoy.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := envoy.FindBinary("")
	if err != nil {
		t.Fatalf("%v: run ./scripts/setup.sh", err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	man, err := crs.Export(filepath.Join(tmp, "crs"), crs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	detect := filepath.Join(tmp, "crs", "detection-only.conf")
	if err := os.WriteFile(detect, []byte("Include "+man.MainConf+"\nSecRuleEngine DetectionOnly\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go upstream.Serve(ctx, ln)
	up := ln.Addr().String()

	start := func(t *testing.T, mode modes.Mode, moduleDir, rules string) *proxy {
		t.Helper()
		if moduleDir == "" {
			if err := mode.CheckBuilt(); err != nil {
				t.Fatalf("%v", err)
			}
			moduleDir = mode.Dir
		}
		if moduleDir == mode.Dir {
			moduleDir = "" // the build's own module, compared with its manifest
		}
		cfg := &Config{Dir: t.TempDir(), Envoy: EnvoySpec{Binary: bin, Concurrency: 1, ModuleDir: moduleDir, RulesFile: rules},
			Modes: map[string]modes.Mode{mode.String(): mode}}
		p, err := startProxy(ctx, &runner{Config: cfg}, mode.String(), up, tmp, strings.ReplaceAll(t.Name(), "/", "_"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		return p
	}
	for _, name := range []string{modes.ModSecurity, modes.Coraza} {
		m, err := reg.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name+"/enforcing", func(t *testing.T) {
			pf, err := preflight(ctx, m, start(t, m, "", man.MainConf), false, client{})
			if err != nil {
				t.Fatal(err)
			}
			if pf.Module.Engine != name || pf.ModuleSHA256 == "" {
				t.Errorf("preflight = %+v", pf)
			}
		})
		t.Run(name+"/detection-only", func(t *testing.T) {
			_, err := preflight(ctx, m, start(t, m, "", detect), false, client{})
			if err == nil || !strings.Contains(err.Error(), "canary SQL injection answered 200 — rules not enforcing") {
				t.Fatalf("preflight error = %v, want the canary refusal", err)
			}
			if !strings.HasPrefix(err.Error(), name+": ") {
				t.Errorf("error %q does not start with the mode", err)
			}
		})
	}
	// The crs-test conformance configuration (wafbench crs-test) never runs
	// in a measured trial: refused by name, and — under another name — by
	// the canary, since it is DetectionOnly.
	t.Run("crs-test", func(t *testing.T) {
		m, _ := reg.Resolve(modes.Coraza)
		_, err := preflight(ctx, m, start(t, m, "", man.Conformance.File), false, client{})
		if err == nil || !strings.Contains(err.Error(), "is the crs-test conformance configuration") {
			t.Fatalf("preflight error = %v, want the crs-test refusal", err)
		}
		b, err := os.ReadFile(man.Conformance.File)
		if err != nil {
			t.Fatal(err)
		}
		renamed := filepath.Join(tmp, "crs", "renamed.conf")
		if err := os.WriteFile(renamed, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = preflight(ctx, m, start(t, m, "", renamed), false, client{})
		if err == nil || !strings.Contains(err.Error(), "canary SQL injection answered 200") {
			t.Fatalf("preflight error = %v, want the canary refusal", err)
		}
	})
	t.Run("wrong-module", func(t *testing.T) {
		ms, _ := reg.Resolve(modes.ModSecurity)
		cz, _ := reg.Resolve(modes.Coraza)
		dir := t.TempDir()
		b, err := os.ReadFile(cz.ModuleFile())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "libwafbench_modsecurity.so"), b, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err = preflight(ctx, ms, start(t, ms, dir, man.MainConf), false, client{})
		if err == nil || !strings.Contains(err.Error(), `reports engine "coraza"`) {
			t.Fatalf("preflight error = %v, want a refusal naming the engine", err)
		}
	})
}

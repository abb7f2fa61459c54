//go:build integration

package runner

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/upstream"
	"wafbench/internal/crs"
)

// TestPreflightCaddy starts the real Caddy host (build/caddy-coraza/caddy,
// `make modules`) through startProxy over a fresh CRS export and checks that
// the preflight passes it enforcing, and refuses it with the rule engine
// off and with a GOMAXPROCS other than the one asked for — each refusal one
// line that starts with the mode.
func TestPreflightCaddy(t *testing.T) {
	m, err := modes.Parse(modes.RefCaddyCoraza)
	if err != nil {
		t.Fatal(err)
	}
	mode := modes.Mode{Name: m}
	if err := all.Of(mode).Check(mode, hosts.Stack{}); err != nil {
		t.Fatal(err)
	}
	var exe result.Module // the executable the host runs, as meta records it
	if err := all.Of(mode).Describe(mode, "", &exe, nil); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	man, err := crs.Export(filepath.Join(tmp, "crs"), crs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	off := filepath.Join(tmp, "crs", "engine-off.conf")
	if err := os.WriteFile(off, []byte("Include "+man.MainConf+"\nSecRuleEngine Off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go upstream.Serve(ctx, ln)

	start := func(t *testing.T, rules string, concurrency int) *proxy {
		t.Helper()
		cfg := &Config{Dir: t.TempDir(), Envoy: EnvoySpec{RulesFile: rules, Concurrency: concurrency},
			Modes: map[string]modes.Mode{mode.String(): mode}}
		p, err := startProxy(ctx, &runner{Config: cfg}, mode.String(), ln.Addr().String(), t.TempDir(), "t01")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		return p
	}
	t.Run("enforcing", func(t *testing.T) {
		p := start(t, man.MainConf, 2)
		pf, err := preflight(ctx, mode, p, false, client{})
		if err != nil {
			t.Fatal(err)
		}
		bin := exe.Path
		if pf.Module == nil || pf.Module.Engine != modes.Coraza || pf.Module.Build != modes.RefCaddyCoraza ||
			pf.ModulePath != bin || pf.ModuleSHA256 == "" || pf.GOMAXPROCS != 2 {
			t.Errorf("preflight = %+v (module %+v); want coraza, build %s, %s, a hash, GOMAXPROCS 2", pf, pf.Module, modes.RefCaddyCoraza, bin)
		}
	})
	tests := []struct {
		name    string
		rules   string
		lie     int // a GOMAXPROCS the driver claims to have asked for; 0 = the real one
		wantErr string
	}{
		{"engine-off", off, 0, "canary SQL injection answered 200 — rules not enforcing"},
		{"gomaxprocs", man.MainConf, 3, "caddy runs with GOMAXPROCS 1, want 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t, tt.rules, 1)
			if tt.lie != 0 {
				p.GOMAXPROCS = tt.lie
			}
			_, err := preflight(ctx, mode, p, false, client{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("preflight error = %v, want %q", err, tt.wantErr)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, modes.RefCaddyCoraza+": preflight: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line starting with %q", msg, modes.RefCaddyCoraza+": preflight: ")
			}
		})
	}
}

//go:build integration

package envoy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReferencesValidate runs `envoy --mode validate` on every reference
// configuration rendered for this checkout (ForRepo: the placeholder
// filled, coraza-wasm's rule files inlined), loading the modules make
// modules built and the rules make crs wrote; the dynamic-module modes'
// rendering must be envoy/<mode>.yaml with only the placeholder filled.
// Validation creates each filter config, so each module loads and its
// engine parses CRS; coraza-wasm's V8 first compiles the whole module
// (a minute or two on a busy machine).
func TestReferencesValidate(t *testing.T) {
	bin := envoyBinary(t)
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range References {
		t.Run(r.File, func(t *testing.T) {
			y, err := r.ForRepo(root)
			if err != nil {
				t.Fatalf("%v: `make crs` writes the rules, `make modules` the modules", err)
			}
			if r.Config.Mode != CorazaWasm {
				ref, err := os.ReadFile(filepath.Join(root, ReferenceDir, r.File))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(FillRepo(ref, root), y) {
					t.Errorf("%s/%s with %s filled differs from the configuration rendered for this checkout", ReferenceDir, r.File, RepoPlaceholder)
				}
			}
			cfg := filepath.Join(t.TempDir(), r.File)
			if err := os.WriteFile(cfg, y, 0o644); err != nil {
				t.Fatal(err)
			}
			c := r.Config
			c.ModuleSearchPath = string(FillRepo([]byte(c.ModuleSearchPath), root))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--mode", "validate", "-c", cfg, "--log-level", "warn")
			cmd.Dir = t.TempDir() // no path in the configuration is relative
			cmd.Env = append(os.Environ(), Env(c)...)
			out, err := cmd.CombinedOutput()
			text := strings.TrimSpace(string(out))
			if err != nil {
				t.Fatalf("envoy --mode validate %s: %v\n%s", r.File, err, text)
			}
			if !strings.Contains(text, "configuration '"+cfg+"' OK") {
				t.Fatalf("envoy --mode validate %s did not say OK:\n%s", r.File, text)
			}
		})
	}
}

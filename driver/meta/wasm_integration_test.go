//go:build integration

package meta

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/internal/host"
	"wafbench/driver/modes"
)

// TestWasmModuleIsTheWasm: coraza-wasm's module is the .wasm file Envoy
// loads (the file its preflight hashes, Mode.ModuleFile), not the native
// libwafbench_coraza.so, and its Coraza version is read from the .wasm's
// own build information. It also holds with --module-dir. Needs `make
// modules`.
func TestWasmModuleIsTheWasm(t *testing.T) {
	n, err := modes.Parse(modes.CorazaWasm)
	if err != nil {
		t.Fatal(err)
	}
	wasm := modes.WasmFile(repoRoot(t))
	if _, err := os.Stat(wasm); err != nil {
		t.Fatalf("%v: run 'make modules'", err)
	}
	m := modes.Mode{Name: n, Dir: filepath.Dir(wasm)}
	want, err := host.FileSHA256(m.ModuleFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"", filepath.Dir(wasm)} {
		var unmeasured []string
		mod, err := describeModule(dir, m, &unmeasured)
		if err != nil {
			t.Fatalf("module dir %q: %v", dir, err)
		}
		if mod.Path != wasm || mod.SHA256 != want {
			t.Errorf("module dir %q: got %s (%.12s…), want %s (%.12s…), the file the preflight hashes", dir, mod.Path, mod.SHA256, wasm, want)
		}
		if !strings.HasPrefix(mod.EngineVersion, "v3.") || len(unmeasured) != 0 {
			t.Errorf("module dir %q: engine version %q, unmeasured %q; want coraza v3.… read from the .wasm", dir, mod.EngineVersion, unmeasured)
		}
	}
}

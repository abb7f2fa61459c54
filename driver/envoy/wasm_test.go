package envoy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/modes"
)

func TestWasmLoadFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  string
		want string
	}{
		{name: "corrupt module", log: `[2026-11-30 23:55:36.446][4395][error][wasm] [source/extensions/common/wasm/wasm.cc:104] Wasm VM failed Failed to parse corrupted Wasm module
[2026-11-30 23:55:36.446][4395][error][wasm] [source/extensions/common/wasm/wasm.cc:104] Wasm VM failed Failed to load Wasm code
[2026-11-30 23:55:36.446][4395][critical][wasm] [source/extensions/common/wasm/wasm.cc:626] Plugin wafbench_coraza failed to load
[2026-11-30 23:55:36.446][4395][critical][wasm] [source/extensions/common/wasm/wasm.cc:479] Plugin configured to fail closed failed to load
[2026-11-30 23:55:36.452][4395][critical][main] [source/server/server.cc:449] error ` + "`Unable to create Wasm plugin wafbench_coraza`" + ` initializing config 'envoy.yaml'
`, want: "Plugin wafbench_coraza failed to load: Failed to parse corrupted Wasm module; Failed to load Wasm code"},
		{name: "configuration refused", log: `[2026-11-30 23:59:00.000][1][critical][wasm] [source/extensions/common/wasm/context.cc:1151] wasm log wafbench_coraza: wafbench_coraza: engine config: rules_file: /r/main.conf:1: SecRuleScript (Lua) is not allowed
[2026-11-30 23:59:00.000][1][critical][wasm] [source/extensions/common/wasm/wasm.cc:479] Plugin configured to fail closed failed to load
`, want: "Plugin wafbench_coraza failed to load: wafbench_coraza: engine config: rules_file: /r/main.conf:1: SecRuleScript (Lua) is not allowed"},
		{name: "no wasm failure", log: "[2026-11-30 23:59:00.000][1][warning][main] [source/server/server.cc:1] something else\n", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "envoy.log")
			if err := os.WriteFile(p, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := wasmLoadFailure(p); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestWasmFilterConfig checks the coraza-wasm filter: V8, the module file,
// a shared vm_id, fail closed, and a plugin configuration that carries the
// native filter_config and every rule file.
func TestWasmFilterConfig(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "main.conf")
	if err := os.WriteFile(rules, []byte("Include more.conf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "more.conf"), []byte("SecRuleEngine On\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wasmFile := filepath.Join(dir, filepath.Base(modes.WasmFile("")))
	if err := os.WriteFile(wasmFile, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Config{Mode: CorazaWasm, UpstreamAddr: "127.0.0.1:1", ModuleSearchPath: dir, RulesFile: rules, MaxBodyBytes: 4096,
		Wasm: wasmOptions{AllowPrecompiled: true}}
	b, err := bootstrap(c)
	if err != nil {
		t.Fatal(err)
	}
	y, err := marshalYAML(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{wasmFilterName, wasmRuntime, "vm_id: " + wasmVMID, "filename: " + wasmFile,
		"failure_policy: FAIL_CLOSED", "allow_precompiled: true", "allow_on_headers_stop_iteration: true",
		"request_body_buffer_limit: \"2105344\""} {
		if !strings.Contains(string(y), want) {
			t.Errorf("bootstrap lacks %q", want)
		}
	}
	if strings.Contains(string(y), dynamicModuleFilterName) {
		t.Errorf("coraza-wasm bootstrap loads the dynamic module filter too")
	}
	f, err := makeWasmFilter(c, rules)
	if err != nil {
		t.Fatal(err)
	}
	_ = f
	if got := Env(c); got != nil {
		t.Errorf("Env: got %q, want none (no dynamic module)", got)
	}
	// The plugin configuration, as the module decodes it.
	var pc wasmPluginConfig
	js := pluginConfigJSON(t, string(y))
	if err := json.Unmarshal([]byte(js), &pc); err != nil {
		t.Fatalf("plugin configuration: %v\n%s", err, js)
	}
	if pc.RulesFile != rules || pc.MaxBodyBytes != 4096 || len(pc.Files) != 2 || pc.Files[filepath.Join(dir, "more.conf")] != "SecRuleEngine On\n" {
		t.Errorf("plugin configuration: got %+v", pc)
	}
}

// pluginConfigJSON digs the plugin configuration string out of the YAML.
func pluginConfigJSON(t *testing.T, y string) string {
	t.Helper()
	i := strings.Index(y, "value: '{")
	if i < 0 {
		t.Fatalf("no plugin configuration value in:\n%s", y)
	}
	rest := y[i+len("value: '"):]
	j := strings.Index(rest, "}'")
	if j < 0 {
		t.Fatal("unterminated plugin configuration")
	}
	s := strings.ReplaceAll(rest[:j+1], "''", "'")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

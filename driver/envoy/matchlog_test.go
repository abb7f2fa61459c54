package envoy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dynmodfilter "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/dynamic_modules/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"wafbench/driver/modes"
)

// TestMatchLogConfig: Config.MatchLog reaches both kinds of module as
// "match_log": true, and without it the key is absent, so the modules get
// byte for byte the configuration they got before the switch existed.
func TestMatchLogConfig(t *testing.T) {
	for _, on := range []bool{false, true} {
		for _, mode := range []Mode{ModSecurity, Coraza, CorazaWasm} {
			c := testConfig(t, mode)
			if mode == CorazaWasm {
				wasmFile := filepath.Join(c.ModuleSearchPath, filepath.Base(modes.WasmFile("")))
				if err := os.WriteFile(wasmFile, []byte("\x00asm"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c.MatchLog = on
			js := filterConfigJSON(t, c)
			if got := strings.Contains(js, `"match_log":true`); got != on {
				t.Errorf("%s MatchLog=%v: filter config %s", mode, on, js)
			}
			if !on && strings.Contains(js, "match_log") {
				t.Errorf("%s MatchLog=false: filter config names match_log: %s", mode, js)
			}
			var got moduleFilterConfig
			if err := json.Unmarshal([]byte(js), &got); err != nil || got.MatchLog != on {
				t.Errorf("%s: decoded %+v (%v), want MatchLog %v", mode, got, err, on)
			}
		}
	}
}

// filterConfigJSON is the JSON the WAF filter of c hands its module.
func filterConfigJSON(t *testing.T, c Config) string {
	t.Helper()
	f, err := makeWAFFilter(c)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode == CorazaWasm {
		b, err := bootstrap(c)
		if err != nil {
			t.Fatal(err)
		}
		y, err := marshalYAML(b)
		if err != nil {
			t.Fatal(err)
		}
		return pluginConfigJSON(t, string(y))
	}
	var dm dynmodfilter.DynamicModuleFilter
	if err := f.GetTypedConfig().UnmarshalTo(&dm); err != nil {
		t.Fatal(err)
	}
	var sv wrapperspb.StringValue
	if err := dm.GetFilterConfig().UnmarshalTo(&sv); err != nil {
		t.Fatal(err)
	}
	return sv.GetValue()
}

package envoyhost

import (
	"strings"
	"testing"

	"wafbench/driver/builds"
	"wafbench/driver/envoy"
	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// TestChain: every build of an engine runs its engine's module, coraza-wasm
// the proxy-wasm filter, passthrough the router alone.
func TestChain(t *testing.T) {
	for _, tt := range []struct {
		mode string
		want envoy.Mode
		file string
	}{
		{"passthrough", envoy.Passthrough, ""},
		{"modsecurity", envoy.ModSecurity, "libwafbench_modsecurity.so"},
		{"modsecurity@3.0.14-pgo", envoy.ModSecurity, "libwafbench_modsecurity.so"},
		{"coraza@re2", envoy.Coraza, "libwafbench_coraza.so"},
		{"coraza-wasm", envoy.CorazaWasm, "coraza.wasm"},
		{"coraza-extproc", envoy.ExtProc, ""},
		{"modsecurity-extproc", envoy.ExtProc, ""},
		{"coraza-extauthz", envoy.ExtAuthz, ""},
	} {
		n, err := modes.Parse(tt.mode)
		if err != nil {
			t.Fatal(err)
		}
		m := modes.Mode{Name: n}
		if got := chain(m); got != tt.want {
			t.Errorf("chain(%s) = %s, want %s", tt.mode, got, tt.want)
		}
		if got := moduleFile(m); got != tt.file {
			t.Errorf("ModuleFile(%s) = %q, want %q", tt.mode, got, tt.file)
		}
	}
}

func TestCheckIdentity(t *testing.T) {
	set, err := builds.Parse([]byte(`builds:
  - {engine: modsecurity, default: true, version: "3.0.9", source: {kind: debian-package, package: libmodsecurity-dev}, compiler: g++, flags: -O2, link: shared}
  - {engine: coraza, default: true, version: v3.8.1, source: {kind: go-module}, compiler: go, link: shared}
  - {engine: coraza, name: re2, version: v3.8.1, source: {kind: go-module, modfile: filters/coraza/builds/re2.mod}, compiler: go, tags: [wafbench_re2], link: shared}
`))
	if err != nil {
		t.Fatal(err)
	}
	reg := modes.NewRegistry(set, t.TempDir())
	// mode resolves s; a `+configuration` is added as --configs adds it.
	mode := func(s string) modes.Mode {
		name, config, _ := strings.Cut(s, "+")
		m, err := reg.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		m.Name = m.Name.WithConfig(config)
		return m
	}
	tests := []struct {
		mode    string
		info    result.ModuleInfo
		wantErr string
	}{
		{"coraza@re2", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza@re2", Rules: 659}, ""},
		{"coraza", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza", Rules: 659}, ""},
		// A rule configuration names the rules a mode loads, not its build.
		{"coraza+pl2", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza", Rules: 659}, ""},
		{"coraza-wasm+pl2", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza-wasm", Rules: 659}, ""},
		{"modsecurity", result.ModuleInfo{Engine: "modsecurity", EngineVersion: "3.0.9", Build: "modsecurity", Rules: 839}, ""},
		{"modsecurity", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza", Rules: 659}, "reports engine \"coraza\""},
		{"coraza@re2", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza", Rules: 659}, "reports build \"coraza\""},
		{"coraza", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.7.0", Build: "coraza", Rules: 659}, "declares v3.8.1"},
		{"coraza", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza", Rules: 0}, "0 rules"},
	}
	for _, tt := range tests {
		err := checkIdentity(mode(tt.mode), &tt.info)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s %+v: %v", tt.mode, tt.info, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s %+v: error %v, want it to contain %q", tt.mode, tt.info, err, tt.wantErr)
		}
	}
}

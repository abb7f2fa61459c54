package runner

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/builds"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/upstream"
	"wafbench/envoy"
	"wafbench/filters/crs"
)

func TestParseModuleInfo(t *testing.T) {
	log := `[2026-11-30 21:14:11.546][1][info][dynamic_modules] Dynamic module ABI version v0.2.0 matched.
[2026-11-30 21:14:11.921][1][info][dynamic_modules] [:] wafbench-module {"module":"wafbench_coraza","engine":"coraza","engine_version":"v3.8.1","build":"coraza@re2","rules":659}
`
	got, err := parseModuleInfo(strings.NewReader(log), "envoy.log")
	if err != nil {
		t.Fatal(err)
	}
	want := result.ModuleInfo{Module: "wafbench_coraza", Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza@re2", Rules: 659}
	if *got != want {
		t.Errorf("got %+v, want %+v", *got, want)
	}
	for name, in := range map[string]string{
		"none":    "[info] Dynamic module ABI version v0.2.0 matched.\n",
		"garbled": `wafbench-module {"engine":` + "\n",
		"unknown": `wafbench-module {"engine":"coraza","flavour":"x"}` + "\n",
	} {
		if _, err := parseModuleInfo(strings.NewReader(in), "envoy.log"); err == nil {
			t.Errorf("%s: parseModuleInfo accepted %q", name, in)
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
	mode := func(s string) modes.Mode {
		m, err := reg.Resolve(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		mode    string
		info    result.ModuleInfo
		wantErr string
	}{
		{"coraza@re2", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza@re2", Rules: 659}, ""},
		{"coraza", result.ModuleInfo{Engine: "coraza", EngineVersion: "v3.8.1", Build: "coraza", Rules: 659}, ""},
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

func TestMappedFile(t *testing.T) {
	got, err := mappedFile(os.Getpid(), "no-such-library")
	if err == nil {
		t.Fatalf("mappedFile found %q", got)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err = mappedFile(os.Getpid(), filepath.Base(self))
	if err != nil || got != self {
		t.Errorf("mappedFile(self) = %q, %v; want %q", got, err, self)
	}
}

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
		spec := EnvoySpec{Binary: bin, Concurrency: 1, ModuleDir: moduleDir, RulesFile: rules}
		e, err := StartEnvoy(ctx, spec, envoy.ModeOf(mode.String()), up, t.TempDir(), tmp, strings.ReplaceAll(t.Name(), "/", "_"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Stop(5e9) })
		return &proxy{addr: e.ListenerAddr, pid: e.PID, stats: e.Stats, logPath: e.LogPath, moduleOverride: moduleDir != mode.Dir, rulesFile: rules}
	}
	for _, name := range []string{modes.ModSecurity, modes.Coraza} {
		m, err := reg.Resolve(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name+"/enforcing", func(t *testing.T) {
			pf, err := preflight(ctx, m, start(t, m, "", man.MainConf), false)
			if err != nil {
				t.Fatal(err)
			}
			if pf.Module.Engine != name || pf.ModuleSHA256 == "" {
				t.Errorf("preflight = %+v", pf)
			}
		})
		t.Run(name+"/detection-only", func(t *testing.T) {
			_, err := preflight(ctx, m, start(t, m, "", detect), false)
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
		_, err := preflight(ctx, m, start(t, m, "", man.Conformance.File), false)
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
		_, err = preflight(ctx, m, start(t, m, "", renamed), false)
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
		_, err = preflight(ctx, ms, start(t, ms, dir, man.MainConf), false)
		if err == nil || !strings.Contains(err.Error(), `reports engine "coraza"`) {
			t.Fatalf("preflight error = %v, want a refusal naming the engine", err)
		}
	})
}

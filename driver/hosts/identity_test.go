package hosts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/result"
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

func TestMappedFile(t *testing.T) {
	got, err := MappedFile(os.Getpid(), "no-such-library")
	if err == nil {
		t.Fatalf("MappedFile found %q", got)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err = MappedFile(os.Getpid(), filepath.Base(self))
	if err != nil || got != self {
		t.Errorf("MappedFile(self) = %q, %v; want %q", got, err, self)
	}
}

package builds

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"wafbench/driver/internal/host"
)

// fixtureScript is an engine script honouring the contract: it writes a
// module whose bytes depend on the recipe's flags, and facts.json; with
// WB_FLAGS=-fail it fails after writing a module.
const fixtureScript = `#!/usr/bin/env bash
set -euo pipefail
echo "$WB_BUILD: module …" >&2
printf 'module %s %s %s\n' "$WB_BUILD" "$WB_FLAGS" "$(cat filters/modsecurity/module.cc)" > "$WB_OUT/libwafbench_modsecurity.so"
if [ "$WB_FLAGS" = -fail ]; then echo "$WB_BUILD: clang++-14 not found: install the Debian package clang-14" >&2; exit 1; fi
mkdir -p "$WB_OUT/lib"; echo lib > "$WB_OUT/lib/libmodsecurity.so.3"
cat > "$WB_OUT/facts.json" <<EOF
{"engine_version": "$WB_VERSION", "compiler_version": "fixture 1.0", "flags": {"CXXFLAGS": "$WB_FLAGS"},
 "steps": {"module": 0.1}, "shared_lib_dir": "lib", "notes": {}}
EOF
`

const fixtureBuilds = `builds:
  - engine: modsecurity
    default: true
    version: "3.0.9"
    source: {kind: debian-package, package: libmodsecurity-dev}
    compiler: fixture-cc
    flags: -O2
    link: shared
  - engine: modsecurity
    name: broken
    version: "3.0.9"
    source: {kind: debian-package, package: libmodsecurity-dev}
    compiler: fixture-cc
    flags: -fail
    link: shared
`

// fixtureRoot is a repository root with one module source, the fixture
// script and a builds file.
func fixtureRoot(t *testing.T) (string, *Set) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"filters/modsecurity/module.cc":      "int hook() { return 1; }\n",
		"filters/abi/wafbench_abi.h":         "// abi\n",
		"scripts/engines/modsecurity.sh":     fixtureScript,
		"filters/builds.yaml":                fixtureBuilds,
		"filters/modsecurity/engine_test.cc": "// not a build input\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := Load(filepath.Join(root, "filters/builds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return root, set
}

func TestRunnerBuildThenUpToDate(t *testing.T) {
	root, set := fixtureRoot(t)
	var log strings.Builder
	r := &Runner{Root: root, Set: set, Stderr: &log}
	b, _ := set.Default("modsecurity")
	ctx := context.Background()

	m, built, err := r.build(ctx, b)
	if err != nil {
		t.Fatalf("first build: %v\n%s", err, log.String())
	}
	if !built {
		t.Fatalf("first build: got built=false, want true")
	}
	dir := b.Dir(root)
	got, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("manifest on disk differs from the returned one:\ngot  %+v\nwant %+v", got, m)
	}
	if got.Build != "modsecurity" || got.EngineVersion != "3.0.9" || got.SharedLibDir != "lib" || got.CompilerVersion != "fixture 1.0" {
		t.Errorf("manifest: got %+v", got)
	}
	if sum, _ := host.FileSHA256(filepath.Join(dir, "libwafbench_modsecurity.so")); sum != got.ModuleSHA256 {
		t.Errorf("module sha256: got %s, manifest says %s", sum, got.ModuleSHA256)
	}

	// Unchanged recipe, intact module: a no-op.
	if _, built, err := r.build(ctx, b); err != nil || built {
		t.Fatalf("second build: got built=%v err=%v, want a no-op", built, err)
	}
	if !strings.Contains(log.String(), "modsecurity: up to date") {
		t.Errorf("log lacks 'up to date':\n%s", log.String())
	}

	// A test file is not a build input.
	if err := os.WriteFile(filepath.Join(root, "filters/modsecurity/engine_test.cc"), []byte("// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.check(b); !st.UpToDate {
		t.Errorf("after editing a test file: got %q, want up to date", st.Reason)
	}

	// A changed module source rebuilds.
	if err := os.WriteFile(filepath.Join(root, "filters/modsecurity/module.cc"), []byte("int hook() { return 2; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.check(b); st.UpToDate || st.Reason != "recipe changed" {
		t.Errorf("after editing module.cc: got up_to_date=%v reason=%q, want recipe changed", st.UpToDate, st.Reason)
	}
	if _, built, err := r.build(ctx, b); err != nil || !built {
		t.Fatalf("rebuild: got built=%v err=%v", built, err)
	}

	// A module altered after the build is not up to date.
	if err := os.WriteFile(filepath.Join(dir, "libwafbench_modsecurity.so"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.check(b); st.UpToDate || st.Reason != "module changed since it was built" {
		t.Errorf("after altering the module: got up_to_date=%v reason=%q", st.UpToDate, st.Reason)
	}
}

func TestRunnerFailedBuildLeavesNothing(t *testing.T) {
	root, set := fixtureRoot(t)
	var log strings.Builder
	r := &Runner{Root: root, Set: set, Stderr: &log}
	b, _ := set.Find("modsecurity@broken")
	_, _, err := r.build(context.Background(), b)
	if !errors.Is(err, errBuild) {
		t.Fatalf("got %v, want ErrBuild", err)
	}
	if want := "install the Debian package clang-14"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks the script's last line %q", err, want)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "build/engines"))
	if len(entries) != 0 {
		t.Errorf("build/engines after a failed build: got %v, want empty", entries)
	}
}

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := &manifest{
		Build: "modsecurity@3.0.14-pgo", Engine: "modsecurity", EngineVersion: "3.0.14",
		Source:   source{Kind: sourceDebianSource, Archive: "a.tar.gz", SHA256: strings.Repeat("a", 64)},
		Compiler: "clang-14", CompilerVersion: "Debian clang version 14.0.6",
		Flags: map[string]string{"CXXFLAGS": "-O2 -flto=thin"}, LTO: "thin", Link: LinkStatic,
		Module: "libwafbench_modsecurity.so", ModuleSHA256: strings.Repeat("b", 64), ModuleBytes: 42,
		SharedLibDir: "lib", Profile: &profileRef{File: "build/pgo/modsecurity-3.0.14.profdata", SHA256: strings.Repeat("c", 64), Training: "train"},
		Steps: map[string]float64{"make": 400.5}, RecipeHash: "h", BuiltUTC: time.Date(2026, 11, 30, 21, 0, 0, 0, time.UTC), BuildSeconds: 451.2,
	}
	if err := writeManifest(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory after WriteManifest: got %d entries, want only manifest.json", len(entries))
	}
}

func TestCheckProfile(t *testing.T) {
	s, err := Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	b, _ := s.Find("modsecurity@pgo")
	if _, err := s.checkProfile(root, b); err == nil || !strings.Contains(err.Error(), "missing: train it with 'make pgo'") {
		t.Fatalf("no profile: got %v", err)
	}
	prof, info := b.profilePath()
	if want := "build/pgo/modsecurity-3.0.14.profdata"; prof != want {
		t.Errorf("ProfilePath: got %q, want %q", prof, want)
	}
	os.MkdirAll(filepath.Join(root, "build/pgo"), 0o755)
	os.WriteFile(filepath.Join(root, prof), []byte("profile"), 0o644)
	sum, _ := host.FileSHA256(filepath.Join(root, prof))
	good := profileInfo{Engine: "modsecurity", ProfileSHA256: sum, TrainedOn: "modsecurity@instr", Training: "train",
		SourceVersion: "3.0.14", SourceSHA256: b.Source.SHA256}
	tests := []struct {
		name string
		edit func(p *profileInfo)
		want string // "" = accepted
	}{
		{"fits", func(p *profileInfo) {}, ""},
		{"other version", func(p *profileInfo) { p.SourceVersion = "3.0.13" }, `source_version "3.0.13", want "3.0.14"`},
		{"other archive", func(p *profileInfo) { p.SourceSHA256 = "x" }, `source_sha256 "x"`},
		{"other instrumented build", func(p *profileInfo) { p.TrainedOn = "modsecurity@src" }, `trained_on "modsecurity@src"`},
		{"profile replaced", func(p *profileInfo) { p.ProfileSHA256 = "y" }, `profile_sha256 "y"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good
			tt.edit(&p)
			if err := writeProfileInfo(filepath.Join(root, info), &p); err != nil {
				t.Fatal(err)
			}
			ref, err := s.checkProfile(root, b)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want accepted", err)
			case tt.want == "" && ref.SHA256 != sum:
				t.Errorf("ref sha256: got %s, want %s", ref.SHA256, sum)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckTraining(t *testing.T) {
	rec := func(w string, conns int, extra string) string {
		return `{"trial":1,"mode":"modsecurity@instr","workload":"` + w + `","conns":` + string(rune('0'+conns)) + `,"requests":100` + extra + "}\n"
	}
	cases := []string{"a@1", "a@4", "b@1"}
	tests := []struct {
		name, raw, want string
	}{
		{"complete", rec("a", 1, "") + rec("a", 4, "") + rec("b", 1, ""), ""},
		{"partial", rec("a", 1, "") + rec("a", 4, ""), "workload b@1 of the training suite did not run"},
		{"errors", rec("a", 1, "") + rec("a", 4, `,"errors":{"status":3}`) + rec("b", 1, ""), "workload a@4 had errors: status=3"},
		{"trial failed", rec("a", 1, `,"error":"envoy exited"`), "workload a@1 failed: envoy exited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "raw.jsonl")
			os.WriteFile(p, []byte(tt.raw), 0o644)
			tr, err := checkTraining(p, cases)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if tr.Requests != 300 || tr.Trials != 1 || tr.Workloads["a@4"] != 100 {
					t.Errorf("got %+v, want 300 requests in 1 trial", tr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestParseFunctionCounts(t *testing.T) {
	tests := []struct {
		name, out          string
		wantCounted, total int
	}{
		{"IR profile", `Counters:
  _ZN11modsecurity4JSON12processChunkEPKc:
    Hash: 0x03510b1eb87d49fc
    Counters: 3
    Block counts: [65, 0, 0]
  _ZN11modsecurity9variables15ReqbodyErrorMsgD0Ev:
    Hash: 0x0a4d0ad3efffffff
    Counters: 1
    Block counts: [0]
  main:
    Hash: 0x0000000000000018
    Counters: 2
    Block counts: [0, 7]
Instrumentation level: IR  entry_first = 0
Functions shown: 3
Total functions: 3
`, 2, 3},
		{"front-end profile", `Counters:
  f:
    Hash: 0x1
    Counters: 1
    Function count: 0
  g:
    Hash: 0x2
    Counters: 1
    Function count: 12
Functions shown: 2
`, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counted, total, err := parseFunctionCounts(tt.out)
			if err != nil || counted != tt.wantCounted || total != tt.total {
				t.Errorf("got %d/%d err=%v, want %d/%d", counted, total, err, tt.wantCounted, tt.total)
			}
		})
	}
	if _, _, err := parseFunctionCounts("Total functions: 0\n"); err == nil {
		t.Errorf("empty listing: got no error")
	}
}

package modes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"wafbench/driver/builds"
)

// Mode is a mode resolved against the declared builds: what a run needs to
// start it.
type Mode struct {
	Name
	// Build is the engine build the mode runs; nil when it runs no engine,
	// and for ref-nginx-modsecurity without a build (Debian's libmodsecurity,
	// which is also the default modsecurity build's engine). The external
	// modes run their engine's default build in the wafbench-extproc server.
	Build *builds.Build
	// Dir is the build's output directory (module file, manifest, lib/);
	// for coraza-wasm the directory of its .wasm file; for the external
	// modes the directory of the wafbench-extproc server; "" otherwise.
	Dir string
	// RulesFile is the entry file of the mode's configuration (Name.Config);
	// "" = the run's rules (--crs-dir).
	RulesFile string
}

// ModuleFile is the path of the module an Envoy WAF mode loads (the .wasm
// file for coraza-wasm, the server executable for the external modes; ""
// for other modes).
func (m Mode) ModuleFile() string {
	if m.Base == CorazaWasm {
		return filepath.Join(m.Dir, filepath.Base(WasmFile("")))
	}
	if m.IsExternal() {
		return filepath.Join(m.Dir, filepath.Base(ExtProcServer("")))
	}
	if m.Host != Envoy || m.Build == nil {
		return ""
	}
	return filepath.Join(m.Dir, m.Build.ModuleFile())
}

// Registry resolves mode names against filters/builds.yaml.
type Registry struct {
	builds *builds.Set
	root   string // repository root: build outputs live under root/build/engines
}

// NewRegistry is a registry of the builds in set, whose outputs live under
// root/build/engines.
func NewRegistry(set *builds.Set, root string) *Registry {
	return &Registry{builds: set, root: root}
}

// Load reads the build file at path (filters/builds.yaml) into a registry
// whose outputs live under root/build/engines.
func Load(path, root string) (*Registry, error) {
	set, err := builds.Load(path)
	if err != nil {
		return nil, err
	}
	return NewRegistry(set, root), nil
}

// Builds is the parsed build file.
func (r *Registry) Builds() *builds.Set { return r.builds }

// Known lists every mode name the registry resolves, in report order.
func (r *Registry) Known() []string {
	out := []string{Passthrough}
	for _, b := range r.builds.Builds {
		out = append(out, b.Mode())
		if b.Engine == ModSecurity && b.Link == builds.LinkStatic && !b.Instrument {
			out = append(out, RefNginxModSecurity+"@"+b.Name)
		}
	}
	out = append(out, CorazaWasm, CorazaExtProc, ModSecurityExtProc, CorazaExtAuthz, RefDirect, RefNginxModSecurity, RefCaddyCoraza)
	Sort(out)
	return out
}

// Resolve returns the mode called name. An unknown build is an error that
// lists the known modes.
func (r *Registry) Resolve(name string) (Mode, error) {
	n, err := Parse(name)
	if err != nil {
		return Mode{}, fmt.Errorf("%v; known modes: %s", err, strings.Join(r.Known(), ", "))
	}
	if n.Config != "" {
		return Mode{}, fmt.Errorf("mode %q: name configurations with --configs, not in a mode name", name)
	}
	m := Mode{Name: n}
	switch {
	case n.Engine == "":
		return m, nil
	case n.Host == Nginx && n.Build == "":
		return m, nil // Debian's libmodsecurity, as the connector package links it
	case n.Base == CorazaWasm:
		m.Dir = filepath.Dir(WasmFile(r.root))
		return m, nil
	case n.IsExternal():
		// The server links each engine's default build (its engine
		// version is the one the preflight checks).
		b, ok := r.builds.Find(n.Engine)
		if !ok {
			return Mode{}, fmt.Errorf("mode %q: no default build %q in %s", name, n.Engine, r.builds.Path)
		}
		m.Build, m.Dir = b, filepath.Dir(ExtProcServer(r.root))
		return m, nil
	case n.Host == Caddy:
		return m, nil // our handler, built by `make modules` with the default Coraza
	}
	bname := n.Engine
	if n.Build != "" {
		bname += "@" + n.Build
	}
	b, ok := r.builds.Find(bname)
	if !ok {
		return Mode{}, fmt.Errorf("mode %q: no build %q in %s; known modes: %s", name, bname, r.builds.Path, strings.Join(r.Known(), ", "))
	}
	if n.Host == Nginx && b.Link != builds.LinkStatic {
		return Mode{}, fmt.Errorf("mode %q: build %s has no shared library of its own for nginx (only from-source builds do)", name, bname)
	}
	m.Build, m.Dir = b, b.Dir(r.root)
	return m, nil
}

// SplitList returns the trimmed, non-empty items of a comma-separated
// flag value (--modes, --workloads, crs-test --compare): "a, b," is [a b].
// CPU lists have a grammar of their own (ranges, no empty items):
// cpu.ParseList.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// All is the --modes item that stands for passthrough and every engine
// build that is not instrumented, in build-file order (not coraza-wasm,
// whose V8 start-up takes half a minute per trial, nor the external modes,
// nor reference hosts).
const All = "all"

// ResolveList resolves a comma-separated list of mode names (All expands to
// passthrough and every measurable build), refusing duplicates and an empty
// list.
func (r *Registry) ResolveList(list string) ([]Mode, error) {
	var names []string
	for _, f := range SplitList(list) {
		if f != All {
			names = append(names, f)
			continue
		}
		names = append(names, Passthrough)
		for _, b := range r.builds.Builds {
			if !b.Instrument {
				names = append(names, b.Mode())
			}
		}
	}
	var out []Mode
	seen := map[string]bool{}
	for _, f := range names {
		m, err := r.Resolve(f)
		if err != nil {
			return nil, err
		}
		if seen[m.String()] {
			return nil, fmt.Errorf("mode %s listed twice", m)
		}
		seen[m.String()] = true
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("want at least one mode; known modes: %s", strings.Join(r.Known(), ", "))
	}
	return out, nil
}

// CheckBuilt reports, for a mode that runs one of the registry's builds,
// whether its build is finished: the manifest exists (it is written last) and
// the module file is there. The error says how to build it.
func (m Mode) CheckBuilt() error {
	if m.Base == CorazaWasm || m.IsExternal() {
		if _, err := os.Stat(m.ModuleFile()); err != nil {
			return fmt.Errorf("mode %s: %v: run 'make modules'", m, err)
		}
		return nil
	}
	if m.Build == nil {
		return nil
	}
	// The manifest is written last: without it the build is not finished.
	if _, err := os.Stat(filepath.Join(m.Dir, builds.ManifestFile)); err != nil {
		return fmt.Errorf("mode %s: build %s is not built (%v): run 'make engines' or 'build/wafbench build %s'", m, m.Build.Mode(), err, m.Build.Mode())
	}
	if m.Host == Envoy {
		if _, err := os.Stat(m.ModuleFile()); err != nil {
			return fmt.Errorf("mode %s: module of build %s missing (%v): run 'build/wafbench build %s'", m, m.Build.Mode(), err, m.Build.Mode())
		}
	}
	return nil
}

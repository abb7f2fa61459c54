// Package meta collects what a run's meta.json (result.Meta) records beyond
// the run's own options: the machine and checkout, the environment Envoy
// inherits, the Envoy binary's hash, what each WAF mode's module is, and the
// rule files the engines load, hashed when the run starts.
package meta

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"wafbench/driver/builds"
	"wafbench/driver/hosts/all"
	"wafbench/driver/internal/host"
	"wafbench/driver/modes"
	"wafbench/driver/procstat"
	"wafbench/driver/result"
	"wafbench/internal/crs"
)

// Stack says what a run measures: where the repository, Envoy, the modules
// and the rules are, and which modes run.
type Stack struct {
	RepoDir     string       // the checkout (git revision, the default CRS directory)
	EnvoyBinary string       // the Envoy executable every trial runs
	ModuleDir   string       // --module-dir: every WAF mode's module from here; "" = its build's directory
	CRSDir      string       // the CRS export the engines load
	Modes       []modes.Mode // the modes of the run
}

// ModuleError reports a WAF mode whose module file cannot be read: bad
// input (a mode that is not built, a wrong --module-dir).
type ModuleError struct {
	Mode string
	Err  error
}

func (e *ModuleError) Error() string { return fmt.Sprintf("mode %s: %v", e.Mode, e.Err) }

func (e *ModuleError) Unwrap() error { return e.Err }

// Describe fills the environment, version and hash fields of m, and
// exports the CRS first if a WAF mode needs it (EnsureCRS).
func Describe(m *result.Meta, s Stack) error {
	f := host.Collect(s.RepoDir)
	m.GitSHA, m.GitDirty, m.GoVersion, m.Arch = f.GitSHA, f.GitDirty, f.GoVersion, runtime.GOARCH
	m.Kernel, m.CPUModel, m.NumCPU, m.Governor, m.SMT = f.Kernel, f.CPUModel, f.NumCPU, f.Governor, f.SMT
	var missing string
	if m.Processor, missing = host.Processor(); missing != "" {
		m.Unmeasured = append(m.Unmeasured, missing)
	}
	if tck, err := procstat.ClockTicks(); err != nil {
		m.Unmeasured = append(m.Unmeasured, err.Error()+": /proc ticks not recorded (ticks_ns 0)")
	} else {
		m.ClkTck = tck
	}
	// Envoy inherits this process's environment; record what changes how
	// the engines run (Go's GC in the Coraza module, the stage timers) and
	// how Envoy's tcmalloc runs: glibc ≥ 2.35 registers rseq for every
	// thread, which leaves Envoy's tcmalloc without its per-CPU caches
	// unless GLIBC_TUNABLES=glibc.pthread.rseq=0 (google/tcmalloc#144).
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS", "GLIBC_TUNABLES", "WAFBENCH_STAGE_TIMERS", "LLVM_PROFILE_FILE"} {
		if v, ok := os.LookupEnv(k); ok {
			m.Notes = append(m.Notes, fmt.Sprintf("environment passed to Envoy: %s=%s", k, v))
		}
	}
	sum, err := host.FileSHA256(s.EnvoyBinary)
	if err != nil {
		return err
	}
	m.EnvoySHA256 = sum
	waf := false
	for _, md := range s.Modes {
		if md.Engine == "" {
			continue
		}
		waf = true
		mod, err := describeModule(s.ModuleDir, md, &m.Unmeasured)
		if err != nil {
			return err
		}
		if m.Modules == nil {
			m.Modules = map[string]result.Module{}
		}
		m.Modules[md.String()] = mod
	}
	if !waf {
		return nil
	}
	def := defaultCRSDir(s.RepoDir)
	man, err := EnsureCRS(s.CRSDir, def)
	if err != nil {
		return err
	}
	m.CRS, err = describeCRS(man, s.CRSDir, def)
	return err
}

// defaultCRSDir is the CRS export of the checkout at repoDir (build/crs, a
// build output).
func defaultCRSDir(repoDir string) string { return filepath.Join(repoDir, "build", "crs") }

// EnsureCRS makes dir hold the rule files the engines load. The default
// directory (defaultDir, a build output) is exported afresh at every run
// start, so an export left by an older wafbench is brought up to date (only
// files that differ are rewritten). Any other directory (--crs-dir) is used
// as it is, once it holds an export; describeCRS then notes how it differs from
// this wafbench's own export.
func EnsureCRS(dir, defaultDir string) (*crs.Manifest, error) {
	if filepath.Clean(dir) != filepath.Clean(defaultDir) {
		if man, err := crs.ReadManifest(dir); err == nil {
			return man, nil
		}
	}
	man, err := crs.Export(dir, crs.Options{})
	if err != nil {
		return nil, fmt.Errorf("export CRS to %s: %w", dir, err)
	}
	return man, nil
}

// describeCRS describes the rule set in dir. Its hashes are computed now, from the
// files the engines will load, not taken from the export's manifest (which
// an edit after export would not update); the manifest's version and
// adaptations are recorded beside them. A dir other than defaultDir is
// compared with this wafbench's export, and the differing files noted.
func describeCRS(man *crs.Manifest, dir, defaultDir string) (*result.CRS, error) {
	c := &result.CRS{Version: man.Version, Dir: dir, RuleFiles: man.RuleFiles, Files: map[string]string{}}
	files, sum, err := hashRules(dir)
	if err != nil {
		return nil, fmt.Errorf("hash the rule files in %s: %w", dir, err)
	}
	c.SHA256, c.Files = sum, files
	if filepath.Clean(dir) != filepath.Clean(defaultDir) {
		diff, err := crsDifferences(files)
		if err != nil {
			return nil, err
		}
		if len(diff) > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("--crs-dir %s differs from this wafbench's export in: %s", dir, strings.Join(diff, ", ")))
		}
	}
	for _, a := range man.Adaptations {
		c.Adaptations = append(c.Adaptations, fmt.Sprintf("%s:%d: %s -> %s (%s)", a.File, a.Line, a.Before, a.After, a.Reason))
	}
	c.ParanoiaLevel, c.Settings = man.ParanoiaLevel, map[string]string{}
	for _, st := range man.Settings {
		c.Settings[st.Name] = st.Line
	}
	return c, nil
}

// crsDifferences lists the files whose hashes (files, by path) differ from
// what this wafbench exports.
func crsDifferences(files map[string]string) ([]string, error) {
	tmp, err := os.MkdirTemp("", "wafbench-crs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if _, err := crs.Export(tmp, crs.Options{}); err != nil {
		return nil, err
	}
	want, _, err := hashRules(tmp)
	if err != nil {
		return nil, err
	}
	var out []string
	for name, sum := range files {
		if want[name] != sum {
			out = append(out, name)
		}
	}
	for name := range want {
		if _, ok := files[name]; !ok {
			out = append(out, name+" (not loaded)")
		}
	}
	sort.Strings(out)
	return out, nil
}

// hashRules hashes exactly the files an engine reads when it loads
// dir/main.conf (crs.Files: main.conf, every include, every data file):
// each file's SHA-256 by path relative to dir, and one SHA-256 over
// "path sha\n" lines in the order the engines read them.
func hashRules(dir string) (map[string]string, string, error) {
	paths, err := crs.Files(dir)
	if err != nil {
		return nil, "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	files := map[string]string{}
	h := sha256.New()
	for _, path := range paths {
		rel, err := filepath.Rel(abs, path)
		if err != nil {
			return nil, "", err
		}
		sum, err := host.FileSHA256(path)
		if err != nil {
			return nil, "", err
		}
		files[rel] = sum
		fmt.Fprintf(h, "%s %s\n", rel, sum)
	}
	return files, hex.EncodeToString(h.Sum(nil)), nil
}

// describeModule records what a WAF mode runs: for a build, its manifest
// (compiler, flags, source and profile hashes); then what the mode's host
// says of the file it really loads (hosts.Host.Describe: the build's
// module, coraza-wasm's .wasm, the nginx connector module, the Caddy
// executable). moduleDir (--module-dir), when set, replaces the directory
// of an Envoy mode's module. A module file the host cannot read is a
// *ModuleError; what else cannot be read (an engine version, the nginx
// module's hash) is appended to unmeasured, one line each.
func describeModule(moduleDir string, m modes.Mode, unmeasured *[]string) (result.Module, error) {
	var mod result.Module
	if m.Build != nil {
		mod.BuildName = m.Build.Mode()
		mod.Engine, mod.EngineVersion = m.Engine, m.Build.Version
		mod.Build = buildSummary(m)
		if b, err := os.ReadFile(filepath.Join(m.Dir, builds.ManifestFile)); err == nil {
			mod.Manifest = b
		}
	}
	if err := all.Of(m).Describe(m, moduleDir, &mod, unmeasured); err != nil {
		return result.Module{}, &ModuleError{Mode: m.String(), Err: err}
	}
	return mod, nil
}

// buildSummary is one line of a build's recipe for tables.
func buildSummary(m modes.Mode) string {
	b := m.Build
	parts := []string{b.Compiler}
	if b.Flags != "" {
		parts = append(parts, b.Flags)
	}
	if b.LTO != "" {
		parts = append(parts, "LTO="+b.LTO)
	}
	if len(b.Tags) > 0 {
		parts = append(parts, "tags="+strings.Join(b.Tags, ","))
	}
	if b.PGO != nil {
		parts = append(parts, "PGO(train: "+b.PGO.Training+")")
	}
	if b.Instrument {
		parts = append(parts, "instrumented")
	}
	if b.Allocator != nil {
		parts = append(parts, "alloc="+b.Allocator.Package)
	}
	if b.Ctype != "" {
		parts = append(parts, "ctype="+b.Ctype)
	}
	return strings.Join(append(parts, b.Link), " ")
}

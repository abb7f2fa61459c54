package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"wafbench/driver/conformance"
	"wafbench/driver/cpu"
	"wafbench/driver/internal/flaglist"
	runmeta "wafbench/driver/meta"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/runlock"
	"wafbench/driver/runner"
	"wafbench/driver/upstream"
	"wafbench/filters/crs"
)

const crsTestUsage = `Usage: wafbench crs-test [flags]

Runs the CRS 4.25.0 regression suite (318 files, 4,674 tests, from the
coraza-coreruleset module, parsed with go-ftw's test types) through each mode:
one fresh host per mode in the crs-test configuration (DetectionOnly, PL 4, the
CRS test settings, marker rule 999999, response bodies inspected; filters/crs),
behind CRS's test backend albedo, preflighted like a trial (the module is the
engine and build the mode names) and proven to log matches. Each stage is
judged as go-ftw judges it; failures an entry of the override file explains
are "overridden", with its reason. Writes crs-test.json, crs-test.csv,
crs-test.md and meta.json into <results>/<UTC>-<name>/ (runs/, git-ignored;
commit a run with 'wafbench keep DIR').

--attach RUN_DIR [--from auto|CRS_RUN_DIR]: sends nothing; records the suite's
outcome for each mode of a benchmark run as its protection.json (what
'wafbench run --crs-test' does at the end of a run), matched by module SHA-256.

--rejudge DIR: sends nothing; applies the override file afresh to the outcomes
the run in DIR observed (a corrected or extended override file) and rewrites
its crs-test.json, .csv and .md; the exit status is as for a run.

--modes all: every WAF build of --builds that is built, plus coraza-wasm,
ref-nginx-modsecurity and ref-caddy-coraza.

Exit status: 0 no unexplained failure in any mode, 1 an unexplained failure or
a mode that could not run or finish (the other modes still run), 2 bad input.

Flags:
`

// crsTestRefHosts are the hosts --modes all adds to the engine builds.
var crsTestRefHosts = []string{modes.CorazaWasm, modes.RefNginxModSecurity, modes.RefCaddyCoraza}

func crsTestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crs-test", flag.ContinueOnError)
	var sf stackFlags
	sf.register(fs)
	modesArg := fs.String("modes", "modsecurity,coraza", "comma-separated WAF modes, as for 'wafbench run --modes', or all (every built WAF build, coraza-wasm, ref-nginx-modsecurity, ref-caddy-coraza)")
	resultsDir := fs.String("results", inRepo("runs"), "parent directory of run directories (runs/ is git-ignored; commit a run with 'wafbench keep DIR')")
	attach := fs.String("attach", "", "benchmark run directory: record protection.json in it from --from (no suite is run; rebuild its report with 'wafbench report')")
	from := fs.String("from", "auto", "with --attach: auto (the newest crs-test run in results/ or runs/ that tested each mode's module) or a crs-test run directory")
	rejudge := fs.String("rejudge", "", "run directory of an earlier crs-test: apply the override file to its observed outcomes again instead of running the suite")
	name := fs.String("name", "crs-test", "run name, the suffix of the run directory")
	overridesPath := fs.String("overrides", inRepo(conformance.OverridesFile), "override file: reasoned expected failures")
	only := fs.String("tests", "", "regular expression: run only the tests whose ID (e.g. 920100-1) it matches; empty = all")
	progress := fs.String("progress", "auto", "progress line on stderr: auto (only on a terminal), always, never")
	markerWait := fs.Duration("marker-wait", 30*time.Second, "how long to wait for a marker request's answer and log line before the host counts as dead")
	timeout := fs.Duration("timeout", 10*time.Second, "how long a test's request may take before the stage counts as unanswered")
	wasmTimeout := fs.Duration("wasm-timeout", 90*time.Second, "--timeout for coraza-wasm (V8 takes seconds for a 64 KiB argument at paranoia level 4)")
	if err := parse(fs, args, stdout, crsTestUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("crs-test: unexpected argument %q", fs.Arg(0))
	}
	var sel *regexp.Regexp
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return usagef("--tests: %v", err)
		}
		sel = re
	}
	if *progress != "auto" && *progress != "always" && *progress != "never" {
		return usagef("--progress: want auto, always or never, got %q", *progress)
	}
	if *attach != "" {
		return crsAttach(*attach, *from)
	}
	if *rejudge != "" {
		return crsRejudge(&sf, *rejudge, *overridesPath, stdout)
	}
	ms, notes, err := crsTestModes(&sf, *modesArg)
	if err != nil {
		return err
	}
	suite, err := conformance.Load()
	if err != nil {
		return usageError{err.Error()}
	}
	ov, err := conformance.LoadOverrides(*overridesPath, suite)
	if err != nil {
		return usageError{err.Error()}
	}
	st, err := sf.resolve(ms)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	lock, err := runlock.Acquire(runlock.Path())
	if err != nil {
		return err
	}
	defer lock.Release()

	meta := &result.Meta{RunID: result.NewRunID(), Name: *name, StartedUTC: time.Now().UTC().Format(time.RFC3339), Status: "running",
		Command: append([]string{"wafbench", "crs-test"}, args...), Flags: map[string]string{}, Suite: crs.ConformanceName,
		EnvoyPath: st.spec.Binary, EnvoyVersion: st.envoyVersion, Concurrency: st.spec.Concurrency,
		EnvoyCPUs: st.spec.CPUs, ClientCPUs: st.cpus.Client, UpstreamCPUs: st.cpus.Upstream}
	for _, m := range ms {
		meta.Modes = append(meta.Modes, m.String())
	}
	fs.VisitAll(func(f *flag.Flag) { meta.Flags[f.Name] = f.Value.String() })
	err = runmeta.Describe(meta, runmeta.Stack{RepoDir: inRepo("."), EnvoyBinary: st.spec.Binary, ModuleDir: sf.moduleDir, CRSDir: sf.crsDir, Modes: ms})
	if me := (*runmeta.ModuleError)(nil); errors.As(err, &me) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	man, err := crs.ReadManifest(sf.crsDir)
	if err != nil || man.Conformance == nil {
		if man, err = crs.Export(sf.crsDir, crs.Options{}); err != nil {
			return err
		}
	}
	meta.Notes = append(meta.Notes, notes...)
	meta.Notes = append(meta.Notes, "configuration "+crs.ConformanceName+": "+crs.ConformanceFile+" (sha256 "+man.Conformance.SHA256+"); the benchmark's main.conf is not loaded")
	meta.Upstream, _ = upstream.Albedo.Version("", self)

	if *resultsDir, err = filepath.Abs(*resultsDir); err != nil { // the host configs name files in it
		return err
	}
	dir := filepath.Join(*resultsDir, time.Now().UTC().Format("20060102T150405Z")+"-"+*name)
	if err := os.MkdirAll(*resultsDir, 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	lock.SetRun(dir)
	if err := result.WriteMeta(dir, meta); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wafbench: run directory %s (%d modes × %d tests)\n", dir, len(ms), len(suite.Tests))
	if err := cpu.PinSelf(st.cpus.Client); err != nil {
		return fmt.Errorf("pin driver to CPUs %s: %w", cpu.Format(st.cpus.Client), err)
	}
	spec := st.spec
	spec.RulesFile = filepath.Join(sf.crsDir, crs.ConformanceFile)
	byName := map[string]modes.Mode{}
	for _, m := range ms {
		byName[m.String()] = m
	}
	cfg := &runner.Config{Dir: dir, Self: self, Envoy: spec, ClientCPUs: st.cpus.Client, UpstreamCPU: st.cpus.Upstream,
		Upstream: upstream.Albedo, Modes: byName, Conformance: true}
	opts := conformance.Options{Only: sel, MarkerWait: *markerWait, Timeout: *timeout, WasmTimeout: *wasmTimeout}
	if *progress == "always" || (*progress == "auto" && isTerminal(stderr)) {
		opts.Progress = func(done, total int, r *conformance.TestResult) {
			if done%25 == 0 || done == total {
				fmt.Fprintf(stderr, "\rcrs-test: %d/%d tests (%s)   ", done, total, r.ID)
				if done == total {
					fmt.Fprintln(stderr)
				}
			}
		}
	}
	sess, err := runner.Open(ctx, cfg)
	if err != nil {
		meta.Status = "failed"
		result.WriteMeta(dir, meta)
		return err
	}
	res, runErr := conformance.RunModes(ctx, sess, ms, suite, ov, opts, func(line string) { fmt.Fprintln(stderr, "wafbench: "+line) })
	sess.Close()
	rel := *overridesPath
	if r, err := filepath.Rel(inRepo("."), *overridesPath); err == nil && !strings.HasPrefix(r, "..") {
		rel = r
	}
	for i := range res {
		res[i].EngineVersion = meta.Modules[res[i].Mode].EngineVersion
	}
	run := &conformance.Run{Suite: conformance.SuiteSource, Files: suite.Files, Tests: len(suite.Tests), Stages: suite.Stages,
		Configuration: man.Conformance.Settings, OverridesFile: rel, Only: *only, Backend: meta.Upstream, Modes: res, Overrides: ov.Entries}
	if err := run.WriteFiles(dir); err != nil {
		return err
	}
	meta.Status, meta.FinishedUTC = "complete", time.Now().UTC().Format(time.RFC3339)
	if runErr != nil {
		meta.Status = "interrupted"
	}
	if err := result.WriteMeta(dir, meta); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", filepath.Join(dir, conformance.MarkdownFile))
	if runErr != nil {
		return runErr
	}
	return unexplained(res)
}

// unexplained is crs-test's verdict on its modes: an error naming each mode
// with an unexplained failure or that did not finish.
func unexplained(res []conformance.ModeResult) error {
	var bad []string
	for _, m := range res {
		if m.Counts.Failed > 0 || m.Error != "" {
			bad = append(bad, fmt.Sprintf("%s (%d unexplained failures%s)", m.Mode, m.Counts.Failed, map[bool]string{true: ", did not finish", false: ""}[m.Error != ""]))
		}
	}
	if len(bad) > 0 {
		return errors.New("crs-test: " + strings.Join(bad, "; "))
	}
	return nil
}

// crsTestModes resolves --modes for crs-test: WAF modes only; all expands
// to every built WAF build and the reference hosts (builds not built are
// skipped with a note).
func crsTestModes(sf *stackFlags, list string) ([]modes.Mode, []string, error) {
	reg, err := sf.registry()
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	var out []modes.Mode
	seen := map[string]bool{}
	add := func(m modes.Mode) {
		if !seen[m.String()] {
			seen[m.String()] = true
			out = append(out, m)
		}
	}
	for _, f := range flaglist.Split(list) {
		if f != modes.All {
			m, err := reg.Resolve(f)
			if err != nil {
				return nil, nil, usagef("--modes: %v", err)
			}
			if m.Engine == "" {
				return nil, nil, usagef("--modes: mode %s runs no WAF: nothing to test", m)
			}
			add(m)
			continue
		}
		all, err := reg.ResolveList(modes.All)
		if err != nil {
			return nil, nil, usagef("--modes: %v", err)
		}
		for _, n := range crsTestRefHosts {
			m, err := reg.Resolve(n)
			if err != nil {
				return nil, nil, usagef("--modes: %v", err)
			}
			all = append(all, m)
		}
		for _, m := range all {
			if m.Engine == "" {
				continue
			}
			if err := m.CheckBuilt(); err != nil {
				notes = append(notes, fmt.Sprintf("--modes all: %s skipped: %v", m, err))
				continue
			}
			add(m)
		}
	}
	if len(out) == 0 {
		return nil, nil, usagef("--modes: no WAF mode to test in %q", list)
	}
	return out, notes, nil
}

// crsRejudge is crs-test --rejudge: the override file applied again to the
// observed outcomes of the run in dir.
func crsRejudge(sf *stackFlags, dir, overridesPath string, stdout io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, conformance.JSONFile)); err != nil {
		return usagef("--rejudge: %s holds no %s (a kept run is rejudged in its runs/ form)", dir, conformance.JSONFile)
	}
	run, err := conformance.ReadRunDir(dir)
	if err != nil {
		return usageError{err.Error()}
	}
	suite, err := conformance.Load()
	if err != nil {
		return usageError{err.Error()}
	}
	ov, err := conformance.LoadOverrides(overridesPath, suite)
	if err != nil {
		return usageError{err.Error()}
	}
	reg, err := sf.registry()
	if err != nil {
		return err
	}
	if meta, err := result.ReadMeta(dir); err == nil { // runs recorded before ModeResult.EngineVersion
		for i := range run.Modes {
			if run.Modes[i].EngineVersion == "" {
				run.Modes[i].EngineVersion = meta.Modules[run.Modes[i].Mode].EngineVersion
			}
		}
	}
	if err := run.Rejudge(ov, reg.Resolve); err != nil {
		return usagef("--rejudge %s: %v", dir, err)
	}
	if r, err := filepath.Rel(inRepo("."), overridesPath); err == nil && !strings.HasPrefix(r, "..") {
		run.OverridesFile = r
	}
	if err := run.WriteFiles(dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", filepath.Join(dir, conformance.MarkdownFile))
	return unexplained(run.Modes)
}

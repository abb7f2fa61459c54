package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/internal/flaglist"
	"wafbench/driver/internal/usage"
	runmeta "wafbench/driver/meta"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/runlock"
	"wafbench/driver/runner"
	"wafbench/driver/stack"
	"wafbench/driver/upstream"
	"wafbench/internal/crs"
)

// RunRequest is one 'wafbench crs-test' run: the suite through Modes, each
// on a fresh host of Stack in the crs-test configuration, the files written
// into <ResultsDir>/<UTC>-<Name>/.
type RunRequest struct {
	Command   []string          // the command line, recorded in meta.json
	Flags     map[string]string // every flag's value, recorded in meta.json
	RepoDir   string            // the checkout: git revision, the override file's recorded path
	Modes     []modes.Mode      // WAF modes (ResolveModes)
	Notes     []string          // ResolveModes's notes, recorded in meta.json
	Stack     stack.Flags
	Overrides string // the override file
	Options   options
	Progress  bool // draw a progress line on stderr

	Name, ResultsDir string
}

// Execute runs the suite as req asks: it checks the suite, the override
// file and the stack (bad input, nothing written), takes the run lock,
// writes the run directory, runs every mode and writes crs-test.json, .csv,
// .md and meta.json; it prints the Markdown file's path on stdout. The
// error names each mode with an unexplained failure or that did not finish.
func Execute(ctx context.Context, req RunRequest, stdout, stderr io.Writer) error {
	suite, err := load()
	if err != nil {
		return usage.Wrap(err)
	}
	ov, err := loadOverrides(req.Overrides, suite)
	if err != nil {
		return usage.Wrap(err)
	}
	st, err := req.Stack.Resolve(req.Modes)
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

	meta, man, err := req.newMeta(st, self)
	if err != nil {
		return err
	}
	if req.ResultsDir, err = filepath.Abs(req.ResultsDir); err != nil { // the host configs name files in it
		return err
	}
	dir := filepath.Join(req.ResultsDir, time.Now().UTC().Format("20060102T150405Z")+"-"+req.Name)
	if err := os.MkdirAll(req.ResultsDir, 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	lock.SetRun(dir)
	if err := result.WriteMeta(dir, meta); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wafbench: run directory %s (%d modes × %d tests)\n", dir, len(req.Modes), len(suite.Tests))
	if err := cpu.PinSelf(st.CPUs.Client); err != nil {
		return fmt.Errorf("pin driver to CPUs %s: %w", cpu.Format(st.CPUs.Client), err)
	}
	res, opened, runErr := req.runModes(ctx, dir, self, st, suite, ov, meta, stderr)
	if !opened {
		return runErr
	}
	rel, _ := repoRel(req.RepoDir, req.Overrides)
	run := &run{Suite: suiteSource, Files: suite.Files, Tests: len(suite.Tests), Stages: suite.Stages,
		Configuration: man.Conformance.Settings, OverridesFile: rel, Backend: meta.Upstream, Modes: res, Overrides: ov.Entries}
	if req.Options.Only != nil {
		run.Only = req.Options.Only.String()
	}
	if err := run.writeFiles(dir); err != nil {
		return err
	}
	meta.Status, meta.FinishedUTC = "complete", time.Now().UTC().Format(time.RFC3339)
	if runErr != nil {
		meta.Status = "interrupted"
	}
	if err := result.WriteMeta(dir, meta); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", filepath.Join(dir, MarkdownFile))
	if runErr != nil {
		return runErr
	}
	return failures(res)
}

// newMeta is meta.json as the run starts, with the manifest of the CRS
// export (written when it lacks the crs-test configuration).
func (req *RunRequest) newMeta(st *stack.Stack, self string) (*result.Meta, *crs.Manifest, error) {
	meta := &result.Meta{RunID: result.NewRunID(), Name: req.Name, StartedUTC: time.Now().UTC().Format(time.RFC3339), Status: "running",
		Command: req.Command, Flags: req.Flags, Suite: crs.ConformanceName,
		EnvoyPath: st.Envoy.Binary, EnvoyVersion: st.EnvoyVersion, Concurrency: st.Envoy.Concurrency,
		EnvoyCPUs: st.Envoy.CPUs, ClientCPUs: st.CPUs.Client, UpstreamCPUs: st.CPUs.Upstream}
	for _, m := range req.Modes {
		meta.Modes = append(meta.Modes, m.String())
	}
	err := runmeta.Describe(meta, runmeta.Stack{RepoDir: req.RepoDir, EnvoyBinary: st.Envoy.Binary, ModuleDir: req.Stack.ModuleDir, CRSDir: req.Stack.CRSDir, Modes: req.Modes})
	if me := (*runmeta.ModuleError)(nil); errors.As(err, &me) {
		return nil, nil, usage.Wrap(err)
	}
	if err != nil {
		return nil, nil, err
	}
	man, err := crs.ReadManifest(req.Stack.CRSDir)
	if err != nil || man.Conformance == nil {
		if man, err = crs.Export(req.Stack.CRSDir, crs.Options{}); err != nil {
			return nil, nil, err
		}
	}
	meta.Notes = append(meta.Notes, req.Notes...)
	meta.Notes = append(meta.Notes, "configuration "+crs.ConformanceName+": "+crs.ConformanceFile+" (sha256 "+man.Conformance.SHA256+"); the benchmark's main.conf is not loaded")
	meta.Upstream, _ = upstream.Albedo.Version("", self)
	return meta, man, nil
}

// runModes opens the hosts' session and runs the suite through every mode.
// opened is false when the session did not open (meta.json then says
// failed).
func (req *RunRequest) runModes(ctx context.Context, dir, self string, st *stack.Stack, suite *suite, ov *overrides, meta *result.Meta, stderr io.Writer) (res []modeResult, opened bool, err error) {
	spec := st.Envoy
	spec.RulesFile = filepath.Join(req.Stack.CRSDir, crs.ConformanceFile)
	byName := map[string]modes.Mode{}
	for _, m := range req.Modes {
		byName[m.String()] = m
	}
	cfg := &runner.Config{Dir: dir, Self: self, Envoy: spec, ClientCPUs: st.CPUs.Client, UpstreamCPU: st.CPUs.Upstream,
		Upstream: upstream.Albedo, Modes: byName, Conformance: true}
	opts := req.Options
	if req.Progress {
		opts.Progress = func(done, total int, r *testResult) {
			if done%25 == 0 || done == total {
				fmt.Fprintf(stderr, "\rcrs-test: %d/%d tests (%s)   ", done, total, r.ID)
				if done == total {
					fmt.Fprintln(stderr)
				}
			}
		}
	}
	opts.engineVersions = map[string]string{}
	for name, mod := range meta.Modules {
		opts.engineVersions[name] = mod.EngineVersion
	}
	sess, err := runner.Open(ctx, cfg)
	if err != nil {
		meta.Status = "failed"
		result.WriteMeta(dir, meta)
		return nil, false, err
	}
	res, err = runModes(ctx, sess, req.Modes, suite, ov, opts, func(line string) { fmt.Fprintln(stderr, "wafbench: "+line) })
	sess.Close()
	return res, true, err
}

// repoRel is path relative to the checkout root, when it lies inside it.
func repoRel(root, path string) (string, bool) {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r, true
	}
	return path, false
}

// failures is crs-test's verdict on its modes: an error naming each mode
// with an unexplained failure or that did not finish.
func failures(res []modeResult) error {
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

// testRefHosts are the other integrations and hosts --modes all adds to
// the engine builds.
var testRefHosts = []string{modes.CorazaWasm, modes.CorazaExtProc, modes.ModSecurityExtProc, modes.CorazaExtAuthz, modes.RefNginxModSecurity, modes.RefCaddyCoraza}

// ResolveModes resolves crs-test's --modes against reg: WAF modes only;
// all expands to every built WAF build and the reference hosts (builds not
// built are skipped with a note).
func ResolveModes(reg *modes.Registry, list string) ([]modes.Mode, []string, error) {
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
				return nil, nil, usage.Errorf("--modes: %v", err)
			}
			if m.Engine == "" {
				return nil, nil, usage.Errorf("--modes: mode %s runs no WAF: nothing to test", m)
			}
			add(m)
			continue
		}
		all, err := reg.ResolveList(modes.All)
		if err != nil {
			return nil, nil, usage.Errorf("--modes: %v", err)
		}
		for _, n := range testRefHosts {
			m, err := reg.Resolve(n)
			if err != nil {
				return nil, nil, usage.Errorf("--modes: %v", err)
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
		return nil, nil, usage.Errorf("--modes: no WAF mode to test in %q", list)
	}
	return out, notes, nil
}

// RejudgeDir is crs-test --rejudge: the override file applied again to the
// observed outcomes of the run in dir, its files rewritten (the Markdown
// file's path printed on stdout). The error is as Execute's.
func RejudgeDir(dir, overridesPath, root string, reg *modes.Registry, stdout io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, JSONFile)); err != nil {
		return usage.Errorf("--rejudge: %s holds no %s (a kept run is rejudged in its runs/ form)", dir, JSONFile)
	}
	run, err := ReadRunDir(dir)
	if err != nil {
		return usage.Wrap(err)
	}
	suite, err := load()
	if err != nil {
		return usage.Wrap(err)
	}
	ov, err := loadOverrides(overridesPath, suite)
	if err != nil {
		return usage.Wrap(err)
	}
	if meta, err := result.ReadMeta(dir); err == nil { // runs recorded before ModeResult.EngineVersion
		for i := range run.Modes {
			if run.Modes[i].EngineVersion == "" {
				run.Modes[i].EngineVersion = meta.Modules[run.Modes[i].Mode].EngineVersion
			}
		}
	}
	if err := run.rejudge(ov, reg.Resolve); err != nil {
		return usage.Errorf("--rejudge %s: %v", dir, err)
	}
	if r, ok := repoRel(root, overridesPath); ok {
		run.OverridesFile = r
	}
	if err := run.writeFiles(dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", filepath.Join(dir, MarkdownFile))
	return failures(run.Modes)
}

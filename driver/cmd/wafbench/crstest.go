package main

import (
	"context"
	"flag"
	"io"
	"regexp"
	"time"

	"wafbench/driver/conformance"
)

const crsTestUsage = `Usage: wafbench crs-test [flags]

Runs the CRS 4.25.0 regression suite (318 files, 4,674 tests, from the
coraza-coreruleset module, parsed with go-ftw's test types) through each mode:
one fresh host per mode in the crs-test configuration (DetectionOnly, PL 4, the
CRS test settings, marker rule 999999, response bodies inspected; internal/crs),
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

func crsTestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crs-test", flag.ContinueOnError)
	var sf stackFlags
	sf.register(fs)
	modesArg := fs.String("modes", "modsecurity,coraza", "comma-separated WAF modes, as for 'wafbench run --modes', or all (every built WAF build, coraza-wasm, ref-nginx-modsecurity, ref-caddy-coraza)")
	req := conformance.RunRequest{RepoDir: inRepo(".")}
	fs.StringVar(&req.ResultsDir, "results", inRepo("runs"), "parent directory of run directories (runs/ is git-ignored; commit a run with 'wafbench keep DIR')")
	attach := fs.String("attach", "", "benchmark run directory: record protection.json in it from --from (no suite is run; rebuild its report with 'wafbench report')")
	from := fs.String("from", "auto", "with --attach: auto (the newest crs-test run in results/ or runs/ that tested each mode's module) or a crs-test run directory")
	rejudge := fs.String("rejudge", "", "run directory of an earlier crs-test: apply the override file to its observed outcomes again instead of running the suite")
	fs.StringVar(&req.Name, "name", "crs-test", "run name, the suffix of the run directory")
	fs.StringVar(&req.Overrides, "overrides", inRepo(conformance.OverridesFile), "override file: reasoned expected failures")
	only := fs.String("tests", "", "regular expression: run only the tests whose ID (e.g. 920100-1) it matches; empty = all")
	progress := fs.String("progress", "auto", "progress line on stderr: auto (only on a terminal), always, never")
	fs.DurationVar(&req.Options.MarkerWait, "marker-wait", 30*time.Second, "how long to wait for a marker request's answer and log line before the host counts as dead")
	fs.DurationVar(&req.Options.Timeout, "timeout", 10*time.Second, "how long a test's request may take before the stage counts as unanswered")
	fs.DurationVar(&req.Options.WasmTimeout, "wasm-timeout", 90*time.Second, "--timeout for coraza-wasm (V8 takes seconds for a 64 KiB argument at paranoia level 4)")
	if err := parse(fs, args, stdout, crsTestUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("crs-test: unexpected argument %q", fs.Arg(0))
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return usagef("--tests: %v", err)
		}
		req.Options.Only = re
	}
	if *progress != "auto" && *progress != "always" && *progress != "never" {
		return usagef("--progress: want auto, always or never, got %q", *progress)
	}
	if *attach != "" {
		return conformance.AttachTo(*attach, *from, req.RepoDir)
	}
	reg, err := sf.registry()
	if err != nil {
		return err
	}
	if *rejudge != "" {
		return conformance.RejudgeDir(*rejudge, req.Overrides, req.RepoDir, reg, stdout)
	}
	if req.Modes, req.Notes, err = conformance.ResolveModes(reg, *modesArg); err != nil {
		return err
	}
	req.Command = append([]string{"wafbench", "crs-test"}, args...)
	req.Flags = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { req.Flags[f.Name] = f.Value.String() })
	req.Stack, req.Progress = sf.flags(), *progress == "always" || (*progress == "auto" && isTerminal(stderr))
	return conformance.Execute(ctx, req, stdout, stderr)
}

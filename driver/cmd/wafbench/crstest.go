package main

import (
	"context"
	"flag"
	"io"
	"regexp"
	"time"

	"wafbench/driver/conformance"
	"wafbench/driver/modes"
)

func crsTestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crs-test", flag.ContinueOnError)
	var sf stackFlags
	sf.register(fs)
	modesArg := fs.String("modes", "modsecurity,coraza", "comma-separated WAF modes, as for 'wafbench run --modes', or all (every built WAF build, coraza-wasm, ref-nginx-modsecurity, ref-caddy-coraza)")
	req := conformance.RunRequest{RepoDir: inRepo(".")}
	fs.StringVar(&req.ResultsDir, "results", inRepo("runs"), "parent directory of run directories (runs/ is git-ignored; commit a run with 'wafbench keep DIR')")
	attach := fs.String("attach", "", "benchmark run directory: record protection.json in it from --from (no suite is run; rebuild its report with 'wafbench report')")
	from := fs.String("from", "auto", "with --attach: auto (the newest crs-test run in results/ or runs/ that tested each mode's module) or a crs-test run directory")
	compare := fs.String("compare", "", "OLD_DIR,NEW_DIR: two crs-test run directories; print, mode by mode and test by test, the tests whose outcome changed (exit 1 if any) instead of running the suite")
	rejudge := fs.String("rejudge", "", "run directory of an earlier crs-test: apply the override file to its observed outcomes again instead of running the suite")
	fs.StringVar(&req.Name, "name", "crs-test", "run name, the suffix of the run directory")
	fs.StringVar(&req.Overrides, "overrides", inRepo(conformance.OverridesFile), "override file: reasoned expected failures")
	only := fs.String("tests", "", "regular expression: run only the tests whose ID (e.g. 920100-1) it matches; empty = all")
	progress := fs.String("progress", "auto", "progress line on stderr: auto (only on a terminal), always, never")
	fs.DurationVar(&req.Options.MarkerWait, "marker-wait", 30*time.Second, "how long to wait for a marker request's answer and log line before the host counts as dead")
	fs.DurationVar(&req.Options.Timeout, "timeout", 10*time.Second, "how long a test's request may take before the stage counts as unanswered")
	fs.DurationVar(&req.Options.BusyTimeout, "busy-timeout", time.Minute, "how long a stage of the native hosts may go on past --timeout while the host works (at least 5% of the last --timeout on CPU or waiting for one: a loaded machine slows it, nothing holds it)")
	fs.DurationVar(&req.Options.WasmTimeout, "wasm-timeout", 90*time.Second, "--timeout for coraza-wasm (V8 takes seconds for a 64 KiB argument at paranoia level 4)")
	fs.DurationVar(&req.Options.WasmIdle, "wasm-idle", 2*time.Second, "with --wasm-timeout: a coraza-wasm stage still unanswered ends as soon as Envoy spent under 5% of the last interval this long on CPU or waiting for one (it holds the request, it is not evaluating it); 0 waits the whole --wasm-timeout")
	if err := parse(fs, args, stdout, usageOf("crs-test")); err != nil {
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
	if *compare != "" {
		dirs := modes.SplitList(*compare)
		if len(dirs) != 2 {
			return usagef("--compare: want OLD_DIR,NEW_DIR, got %q", *compare)
		}
		return conformance.CompareDirs(dirs[0], dirs[1], stdout)
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

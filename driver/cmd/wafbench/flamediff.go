package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"wafbench/driver/perf"
	"wafbench/driver/perf/flame"
	"wafbench/driver/report"
)

// flamediffCmd draws differential flame graphs between two modes of a
// run --perf run, then rebuilds its report, which links them.
func flamediffCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("flamediff", flag.ContinueOnError)
	if err := parse(fs, args, stdout, "Usage: wafbench flamediff RUN_DIR MODE_A MODE_B\n\nDraws perf/diff-A-vs-B-<workload>-cN.svg for every workload both modes were profiled on\n(run --perf): B's flame graph coloured by the change per request from A (red: B spends\nmore). Then rebuilds the report, which links them. E.g. modsecurity modsecurity@3.0.14-pgo.\n"); err != nil {
		return err
	}
	if fs.NArg() != 3 {
		return usagef("flamediff: want RUN_DIR MODE_A MODE_B, got %d arguments", fs.NArg())
	}
	dir, a, b := fs.Arg(0), fs.Arg(1), fs.Arg(2)
	if _, err := os.Stat(filepath.Join(dir, "raw.jsonl")); err != nil {
		return usagef("flamediff: %s is not a run directory (no raw.jsonl)", dir)
	}
	if err := perf.FlameAvailable(); err != nil {
		return usagef("flamediff: %v", err)
	}
	files, err := flame.Diff(dir, a, b)
	if errors.Is(err, flame.ErrInput) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, filepath.Join(dir, f))
	}
	return report.Build(dir, stderr)
}

// checkPerfDiff validates run --perf-diff: empty, or two different modes
// of the run, and only with --perf.
func checkPerfDiff(arg string, perfHz int, modeNames []string) error {
	if arg == "" {
		return nil
	}
	if perfHz <= 0 {
		return usagef("--perf-diff: needs --perf (the profiles it compares)")
	}
	a, b, ok := strings.Cut(arg, ",")
	if !ok || a == "" || b == "" || strings.Contains(b, ",") || a == b {
		return usagef("--perf-diff: want two different modes A,B, got %q", arg)
	}
	for _, m := range []string{a, b} {
		if !slices.Contains(modeNames, m) {
			return usagef("--perf-diff: mode %q is not one of the run's modes (%s)", m, strings.Join(modeNames, ", "))
		}
	}
	return nil
}

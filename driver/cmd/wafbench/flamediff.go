package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"wafbench/driver/internal/usage"
	"wafbench/driver/perf/flame"
	"wafbench/driver/report"
)

// flamediffCmd draws differential flame graphs between two modes of a
// run --perf run, then rebuilds its report, which links them.
func flamediffCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("flamediff", flag.ContinueOnError)
	if err := parse(fs, args, stdout, usageOf("flamediff")); err != nil {
		return err
	}
	if fs.NArg() != 3 {
		return usagef("flamediff: want RUN_DIR MODE_A MODE_B, got %d arguments", fs.NArg())
	}
	dir, a, b := fs.Arg(0), fs.Arg(1), fs.Arg(2)
	if err := flame.CheckRun(dir); err != nil {
		return err
	}
	files, err := flame.Diff(dir, a, b)
	if errors.Is(err, flame.ErrInput) {
		return usage.Wrap(err)
	}
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, filepath.Join(dir, f))
	}
	return report.Build(dir, stderr)
}

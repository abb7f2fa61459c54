package main

import (
	"context"
	"flag"
	"io"

	"wafbench/driver/keep"
)

// keepCmd commits a run deliberately: it writes the run's lean form into
// results/ (driver/keep) and refuses a run whose report does not rebuild.
func keepCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("keep", flag.ContinueOnError)
	into := fs.String("into", inRepo("results"), "parent directory of kept runs")
	recorded := fs.String("recorded-root", "", "the checkout the run was recorded in, whose absolute paths become relative to the repository root (default: this checkout)")
	rerender := fs.Bool("rerender", false, "render the report again with today's code instead of refusing a run whose report differs from it")
	if err := parse(fs, args, stdout, usageOf("keep")); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("keep: want at least one run directory")
	}
	return keep.All(fs.Args(), keep.Options{Into: *into, RecordedRoot: *recorded, Rerender: *rerender}, stdout)
}

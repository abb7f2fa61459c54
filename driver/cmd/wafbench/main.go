// Command wafbench measures what WAF engines cost inside Envoy.
//
// It only parses flags and dispatches; the work lives in the driver packages.
// Exit status: 0 success, 1 a failure while running, 2 bad input.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"wafbench/driver/internal/usage"
)

// usagef is bad input: it prints as one line and exits 2.
func usagef(format string, a ...any) error { return usage.Errorf(format, a...) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr io.Writer) int {
	var ue *usage.Error
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "wafbench: %s\n", ue)
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "wafbench: interrupted")
		return 130
	default:
		fmt.Fprintf(stderr, "wafbench: %v\n", err)
		return 1
	}
}

var errHelp = errors.New("help requested")

// commands are the subcommands, in the order usage/wafbench.txt lists them.
var commands = []struct {
	name string
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}{
	{"list", listCmd}, {"run", runCmd}, {"report", reportCmd}, {"keep", keepCmd}, {"flamediff", flamediffCmd}, {"merge", mergeCmd}, {"serve", serveCmd}, {"load", loadCmd},
	{"upstream", upstreamCmd}, {"crs", crsCmd}, {"build", buildCmd}, {"pgo", pgoCmd},
	{"matrix", matrixCmd}, {"crs-test", crsTestCmd},
}

// commandNames lists the subcommands for messages: "run, report, …".
func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// run dispatches a subcommand; tests call it directly.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageOf("wafbench"))
		return usagef("missing command (%s)", commandNames())
	}
	cmd, rest := args[0], args[1:]
	if cmd == "help" || cmd == "-h" || cmd == "--help" {
		fmt.Fprint(stdout, usageOf("wafbench"))
		return nil
	}
	for _, c := range commands {
		if c.name == cmd {
			return c.run(ctx, rest, stdout, stderr)
		}
	}
	return usagef("unknown command %q (%s)", cmd, commandNames())
}

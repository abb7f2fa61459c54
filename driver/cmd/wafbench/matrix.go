package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"

	"wafbench/driver/matrix"
	"wafbench/driver/stack"
	"wafbench/driver/upstream"
)

const matrixUsage = `Usage: wafbench matrix [flags]

Sends a request corpus to every mode — Envoy modes, engine builds, reference
hosts — each started as a run's trial starts it (fresh pinned process, preflight),
one request per connection, and writes matrix.csv (mode, engine, build, case,
class, method, path, expected, observed, latency_us, error) and matrix.md (the
verdicts that differ from the expected ones, and the requests the modes answer
differently). Corpora: parity (tests/e2e/testdata/parity.yaml), lab (the Docker
lab's kinds of requests, on paths go-httpbin answers). 'wafbench run' writes the
matrix of its modes into every run directory (--matrix).

Exit status: 0 every mode answered (verdicts that differ are in matrix.md), 1 a
mode could not be started or failed its preflight, 2 bad input.

Flags:
`

func matrixCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	var sf stackFlags
	sf.register(fs)
	upstreamArg := fs.String("upstream", string(upstream.Own), upstreamHelp)
	corpusName := fs.String("corpus", matrix.Parity, "request corpus: "+strings.Join(matrix.Names, " or "))
	modesArg := fs.String("modes", "passthrough,modsecurity,coraza", "comma-separated modes, as for 'wafbench run --modes' (all = passthrough and every build)")
	out := fs.String("out", "", "directory for matrix.csv, matrix.md and the modes' configs and logs, created if missing (default: build/matrix-<corpus>)")
	if err := parse(fs, args, stdout, matrixUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("matrix: unexpected argument %q", fs.Arg(0))
	}
	c, err := matrix.Load(*corpusName, inRepo("."))
	if err != nil {
		return usagef("--corpus: %v", err)
	}
	ms, err := sf.parseModes(*modesArg)
	if err != nil {
		return err
	}
	st, err := sf.flags().Resolve(ms)
	if err != nil {
		return err
	}
	req := matrix.Request{Corpus: c, Modes: ms, Stack: st, Dir: *out, CRSDir: sf.crsDir, RepoCRS: inRepo("build/crs")}
	if req.Dir == "" {
		req.Dir = inRepo("build/matrix-" + c.Name)
	}
	if req.Upstream, err = stack.ParseUpstream(*upstreamArg); err != nil {
		return err
	}
	if req.Self, err = os.Executable(); err != nil {
		return err
	}
	return matrix.Execute(ctx, req, stdout)
}

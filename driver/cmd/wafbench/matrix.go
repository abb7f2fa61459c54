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

func matrixCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	var sf stackFlags
	sf.register(fs)
	upstreamArg := fs.String("upstream", string(upstream.Own), upstreamHelp)
	corpusName := fs.String("corpus", matrix.Parity, "request corpus: "+strings.Join(matrix.Names, " or "))
	modesArg := fs.String("modes", "passthrough,modsecurity,coraza", "comma-separated modes, as for 'wafbench run --modes' (all = passthrough and every build)")
	out := fs.String("out", "", "directory for matrix.csv, matrix.md and the modes' configs and logs, created if missing (default: build/matrix-<corpus>)")
	if err := parse(fs, args, stdout, usageOf("matrix")); err != nil {
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

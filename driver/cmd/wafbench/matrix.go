package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"wafbench/driver/cpu"
	"wafbench/driver/matrix"
	runmeta "wafbench/driver/meta"
	"wafbench/driver/modes"
	"wafbench/driver/runlock"
	"wafbench/driver/runner"
	"wafbench/envoy"
)

const matrixUsage = `Usage: wafbench matrix [flags]

Sends a request corpus to every mode — Envoy modes, engine builds, reference
hosts — each started as a run's trial starts it (fresh pinned process, preflight),
one request per connection, and writes matrix.csv (mode, engine, build, case,
class, method, path, expected, observed, latency_us, error) and matrix.md (the
verdicts that differ from the expected ones, and the requests the modes answer
differently). Corpora: parity (filters/e2e/testdata/parity.yaml), lab (the Docker
lab's kinds of requests, on paths go-httpbin answers). 'wafbench run' writes the
matrix of its modes into every run directory (--matrix).

Exit status: 0 every mode answered (verdicts that differ are in matrix.md), 1 a
mode could not be started or failed its preflight, 2 bad input.

Flags:
`

func matrixCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	var sf stackFlags
	var upf upstreamFlag
	sf.register(fs)
	upf.register(fs)
	corpusName := fs.String("corpus", matrix.Parity, "request corpus: "+strings.Join(matrix.Names, " or "))
	modesArg := fs.String("modes", "passthrough,modsecurity,coraza", "comma-separated modes, as for 'wafbench run --modes' (all = passthrough and every build)")
	out := fs.String("out", "", "directory for matrix.csv, matrix.md and the modes' configs and logs, created if missing (default: build/matrix-<corpus>)")
	if err := parse(fs, args, stdout, matrixUsage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("matrix: unexpected argument %q", fs.Arg(0))
	}
	c, err := loadCorpus(*corpusName)
	if err != nil {
		return usagef("--corpus: %v", err)
	}
	ms, err := sf.parseModes(*modesArg)
	if err != nil {
		return err
	}
	st, err := sf.resolve(ms)
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = inRepo("build/matrix-" + c.Name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("matrix: --out: %v", err)
	}
	for _, m := range ms {
		if m.Engine != "" {
			if _, err := runmeta.EnsureCRS(sf.crsDir, inRepo("build/crs")); err != nil {
				return err
			}
			break
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	upKind, _, err := upf.resolve(self)
	if err != nil {
		return err
	}
	// Its processes are pinned where a run's are: not beside a measured run.
	lock, err := runlock.Acquire(runlock.Path())
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := cpu.PinSelf(st.cpus.Client); err != nil {
		return fmt.Errorf("pin driver to CPUs %s: %w", cpu.Format(st.cpus.Client), err)
	}
	byName := map[string]modes.Mode{}
	for _, m := range ms {
		byName[m.String()] = m
	}
	cfg := &runner.Config{Dir: dir, Self: self, Envoy: st.spec, ClientCPUs: st.cpus.Client,
		UpstreamCPU: st.cpus.Upstream, Upstream: upKind, Modes: byName}
	res, err := writeMatrix(ctx, cfg, c, ms)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, summarizeMatrix(res))
	fmt.Fprintf(stdout, "%s\n%s\n", filepath.Join(dir, matrix.CSVFile), filepath.Join(dir, matrix.MarkdownFile))
	if len(res.Failed) > 0 {
		var why []string
		for _, m := range res.Modes {
			if e, ok := res.Failed[m]; ok {
				why = append(why, e)
			}
		}
		return errors.New("matrix: " + strings.Join(why, "; "))
	}
	return nil
}

// loadCorpus reads a named corpus from this repository.
func loadCorpus(name string) (*matrix.Corpus, error) {
	root, err := envoy.RepoRoot()
	if err != nil {
		root = "."
	}
	return matrix.Load(name, root)
}

// writeMatrix sends corpus c to every mode of ms with the upstream and
// process settings of cfg and writes matrix.csv and matrix.md into cfg.Dir.
func writeMatrix(ctx context.Context, cfg *runner.Config, c *matrix.Corpus, ms []modes.Mode) (*matrix.Result, error) {
	sess, err := runner.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	res, err := matrix.Run(ctx, sess, c, ms)
	if err != nil {
		return nil, err
	}
	if err := res.WriteFiles(cfg.Dir); err != nil {
		return nil, err
	}
	return res, nil
}

// summarizeMatrix is one line: requests, modes, and the verdicts that
// differ from the corpus's.
func summarizeMatrix(res *matrix.Result) string {
	off := 0
	for _, r := range res.Rows {
		if r.Observed != r.Expected {
			off++
		}
	}
	s := fmt.Sprintf("matrix %s: %d verdicts over %d modes, %d differ from the expected status", res.Corpus, len(res.Rows), len(res.Modes)-len(res.Failed), off)
	if len(res.Failed) > 0 {
		s += fmt.Sprintf("; %d modes did not run", len(res.Failed))
	}
	return s
}

// runMatrixCorpus is the corpus 'run --matrix auto' sends: the lab's
// requests for the lab suite, the parity corpus otherwise.
func runMatrixCorpus(flagValue, suite string) string {
	switch {
	case flagValue != "auto":
		return flagValue
	case suite == matrix.Lab:
		return matrix.Lab
	}
	return matrix.Parity
}

// flagGiven reports whether the command line set the flag called name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

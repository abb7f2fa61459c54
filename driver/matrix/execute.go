package matrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"wafbench/driver/cpu"
	"wafbench/driver/internal/usage"
	runmeta "wafbench/driver/meta"
	"wafbench/driver/modes"
	"wafbench/driver/runlock"
	"wafbench/driver/runner"
	"wafbench/driver/stack"
	"wafbench/driver/upstream"
)

// Request is one 'wafbench matrix': a corpus sent to modes on a checked
// stack, the files written into Dir.
type Request struct {
	Corpus   *Corpus
	Modes    []modes.Mode
	Stack    *stack.Stack
	Upstream upstream.Kind // checked after the CRS export (stack.Upstream)
	Dir      string        // created if missing
	CRSDir   string        // the CRS export the WAF modes load, written if missing
	RepoCRS  string        // the repository's default CRS directory (runmeta.EnsureCRS)
	Self     string        // the wafbench executable (for the upstream child)
}

// Execute takes the run lock (its processes are pinned where a run's are:
// not beside a measured run), sends the corpus to every mode and writes
// matrix.csv and matrix.md; it prints the summary and the two files on
// stdout. A mode that could not start or failed its preflight is an error
// naming it, after the files are written.
func Execute(ctx context.Context, req Request, stdout io.Writer) error {
	if err := os.MkdirAll(req.Dir, 0o755); err != nil {
		return usage.Errorf("matrix: --out: %v", err)
	}
	for _, m := range req.Modes {
		if m.Engine != "" {
			if _, err := runmeta.EnsureCRS(req.CRSDir, req.RepoCRS); err != nil {
				return err
			}
			break
		}
	}
	if _, err := stack.Upstream(req.Upstream, req.Self); err != nil {
		return err
	}
	lock, err := runlock.Acquire(runlock.Path())
	if err != nil {
		return err
	}
	defer lock.Release()
	st := req.Stack
	if err := cpu.PinSelf(st.CPUs.Client); err != nil {
		return fmt.Errorf("pin driver to CPUs %s: %w", cpu.Format(st.CPUs.Client), err)
	}
	cfg := &runner.Config{Dir: req.Dir, Self: req.Self, Envoy: st.Envoy, ClientCPUs: st.CPUs.Client,
		UpstreamCPU: st.CPUs.Upstream, Upstream: req.Upstream, Modes: ByName(req.Modes)}
	res, err := Write(ctx, cfg, req.Corpus, req.Modes)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, res.Summary())
	fmt.Fprintf(stdout, "%s\n%s\n", filepath.Join(req.Dir, csvFile), filepath.Join(req.Dir, MarkdownFile))
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

// ByName indexes modes by name, as runner.Config.Modes wants them.
func ByName(ms []modes.Mode) map[string]modes.Mode {
	out := make(map[string]modes.Mode, len(ms))
	for _, m := range ms {
		out[m.String()] = m
	}
	return out
}

// Write sends corpus c to every mode of ms with the upstream and process
// settings of cfg and writes matrix.csv and matrix.md into cfg.Dir.
func Write(ctx context.Context, cfg *runner.Config, c *Corpus, ms []modes.Mode) (*result, error) {
	sess, err := runner.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	res, err := run(ctx, sess, c, ms)
	if err != nil {
		return nil, err
	}
	if err := res.writeFiles(cfg.Dir); err != nil {
		return nil, err
	}
	return res, nil
}

// Summary is one line: requests, modes, and the verdicts that differ from
// the corpus's.
func (r *result) Summary() string {
	off := 0
	for _, row := range r.Rows {
		if row.Observed != row.Expected {
			off++
		}
	}
	s := fmt.Sprintf("matrix %s: %d verdicts over %d modes, %d differ from the expected status", r.Corpus, len(r.Rows), len(r.Modes)-len(r.Failed), off)
	if len(r.Failed) > 0 {
		s += fmt.Sprintf("; %d modes did not run", len(r.Failed))
	}
	return s
}

// ForSuite is the corpus 'run --matrix' names: flagValue itself, or for
// auto the lab's requests for the lab suite and the parity corpus otherwise.
func ForSuite(flagValue, suite string) string {
	switch {
	case flagValue != "auto":
		return flagValue
	case suite == lab:
		return lab
	}
	return Parity
}

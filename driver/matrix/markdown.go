package matrix

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"wafbench/driver/modes"
)

// WriteMarkdown writes matrix.md: how many verdicts of each mode were as
// expected, every verdict that was not, and every request on which the WAF
// modes (or the modes without a WAF) answered differently from each other.
func (r *Result) WriteMarkdown(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	row := func(cells ...string) { p("| %s |", strings.Join(cells, " | ")) }
	head := func(cells ...string) {
		row(cells...)
		sep := make([]string, len(cells))
		for i := range sep {
			sep[i] = "---"
		}
		row(sep...)
	}
	cases := r.cases()
	p("# Request matrix: corpus `%s`", r.Corpus)
	p("")
	p("%d requests × %d modes. Each mode was started as a trial starts it (a fresh, pinned process that passed the preflight) and got every request on a connection of its own; `%s` holds every verdict with its latency (connect to last response byte). Expected statuses come from the corpus: a reference host is held to its engine's verdicts in Envoy.",
		len(cases), len(r.Modes), CSVFile)
	p("")
	if len(r.Failed) > 0 {
		p("Modes that could not be started or failed their preflight (no verdicts):")
		p("")
		for _, m := range sortedKeys(r.Failed) {
			p("- `%s`: %s", m, cell(r.Failed[m]))
		}
		p("")
	}

	p("## Verdicts by mode")
	p("")
	head("mode", "engine build", "requests", "as expected", "other status", "no response", "median latency µs")
	for _, m := range r.Modes {
		rows := r.rowsOf(m)
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
		row("`"+m+"`", orDash(rows[0].Build), strconv.Itoa(len(rows)), strconv.Itoa(ok), strconv.Itoa(other), strconv.Itoa(none), medianInt(lat))
	}
	p("")

	p("## Verdicts that differ from the expected status")
	p("")
	var off []Row
	for _, x := range r.Rows {
		if x.Observed != x.Expected {
			off = append(off, x)
		}
	}
	if len(off) == 0 {
		p("None: every mode answered every request as the corpus expects.")
	} else {
		head("mode", "case", "class", "method", "path", "expected", "observed", "note")
		for _, x := range off {
			obs := status(x.Observed)
			if x.Error != "" {
				obs += " (" + cell(x.Error) + ")"
			}
			row("`"+x.Mode+"`", x.Case, x.Class, x.Method, "`"+cell(x.Path)+"`", status(x.Expected), obs, cell(r.note(x)))
		}
	}
	p("")

	p("## Requests the modes answer differently")
	p("")
	p("A request is listed when the modes that run a WAF do not all answer the same status, or the modes without one do not.")
	p("")
	var waf, plain []string
	for _, m := range r.Modes {
		if len(r.rowsOf(m)) == 0 {
			continue
		}
		if modes.Engine(m) != "" {
			waf = append(waf, m)
		} else {
			plain = append(plain, m)
		}
	}
	cols := append(slices.Clone(plain), waf...)
	byMode := map[string]map[string]Row{}
	for _, x := range r.Rows {
		if byMode[x.Mode] == nil {
			byMode[x.Mode] = map[string]Row{}
		}
		byMode[x.Mode][x.Case] = x
	}
	differ := func(ms []string, c string) bool {
		seen := map[int]bool{}
		for _, m := range ms {
			if x, ok := byMode[m][c]; ok {
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
			for _, m := range cols {
				hc = append(hc, "`"+m+"`")
			}
			head(append(hc, "note")...)
		}
		n++
		cells := []string{c.name, c.class}
		for _, m := range cols {
			x, ok := byMode[m][c.name]
			s := "–"
			if ok {
				s = status(x.Observed)
				if x.Observed != x.Expected {
					s = "**" + s + "**"
				}
			}
			cells = append(cells, s)
		}
		row(append(cells, cell(r.Notes[c.name]))...)
	}
	if n == 0 {
		p("None.")
	} else {
		p("")
		p("%d of %d requests. A status in bold differs from what the corpus expects of that mode.", n, len(cases))
	}
}

type caseInfo struct{ name, class string }

// cases lists the corpus's cases in the order they were sent.
func (r *Result) cases() []caseInfo {
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

func (r *Result) rowsOf(mode string) []Row {
	var out []Row
	for _, x := range r.Rows {
		if x.Mode == mode {
			out = append(out, x)
		}
	}
	return out
}

// note is why x's expected status is what it is: the build's own reason
// when the build answers differently, else the corpus's.
func (r *Result) note(x Row) string {
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

func medianInt(v []int64) string {
	if len(v) == 0 {
		return "–"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return strconv.FormatInt(s[n/2], 10)
	}
	return strconv.FormatInt((s[n/2-1]+s[n/2])/2, 10)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

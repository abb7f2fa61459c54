package report

import (
	"strings"

	"wafbench/driver/callgrind"
)

// glueLimit is the cost account's target: our glue (our module's code, cgo's
// crossings and Envoy's ABI callbacks) at most this share of the
// instructions a WAF mode adds to passthrough.
const glueLimit = 0.05

// writeInstructionAccount is run --callgrind's cost account: per workload
// and WAF mode the instructions inside the module's hooks by who executed
// them (callgrind.Account), medians over repeats, and per mode whether our
// glue stays within glueLimit of the instructions the WAF adds. It writes
// nothing when no record carries an account (runs before it existed).
func writeInstructionAccount(m *md, fig *figures) {
	a := buildAccount(fig.Records, fig.Summary)
	if a == nil {
		return
	}
	m.p("## Cost account (instructions)")
	m.nl()
	m.p(accountMethod)
	m.nl()
	for _, t := range a.tables {
		writeAccountTable(m, a.waf, t)
	}
	m.p("**Our glue against what the WAF adds.** Glue is %s; what the WAF adds is the mode's whole-Envoy count (inside plus outside the hooks) less passthrough's "+
		"in the same repeat. The verdict is *yes* when every repeat's share is ≤ %.0f%%, *no* when every one is above, *not established* otherwise.",
		strings.Join(callgrind.Glue, " + "), 100*glueLimit)
	m.nl()
	m.head("mode", "workload", "n", "glue Ir/req", "WAF-added Ir/req", "glue share", "range over repeats", "≤ 5%?")
	for _, g := range a.glue {
		m.row("`"+g.mode+"`", g.w.String(), itoa(g.n), irCell(g.glue), irCell(g.added),
			f(100*g.share, 3)+"%", f(100*g.shareLo, 3)+"–"+f(100*g.shareHi, 3)+"%", g.verdict)
	}
	m.nl()
	for _, v := range a.verdicts {
		m.p("%s", glueSentence(v))
	}
	if len(a.verdicts) > 0 {
		m.nl()
	}
}

func writeAccountTable(m *md, waf []string, t irAccountTable) {
	head := []string{"category"}
	for _, mode := range waf {
		head = append(head, "`"+mode+"` Ir/req", "share")
	}
	m.p("**%s**", t.w.String())
	m.nl()
	m.head(head...)
	for _, r := range t.rows {
		row := []string{r.cat}
		for _, c := range r.cells {
			if !c.ok {
				row = append(row, "–", "–")
				continue
			}
			row = append(row, irCell(c.v), f(c.pct, 2)+"%")
		}
		m.row(row...)
	}
	row := []string{"**inside hooks**"}
	for _, c := range t.inside {
		if !c.ok {
			row = append(row, "–", "–")
			continue
		}
		row = append(row, irCell(c.v), "100%")
	}
	m.row(row...)
	m.nl()
}

func glueSentence(v glueVerdict) string {
	hi := f(100*v.hi, 3) + "%"
	switch v.verdict {
	case "yes":
		return "- `" + v.mode + "`: our glue is ≤ 5% of what the WAF adds on every workload counted (largest share of any repeat " + hi + ")."
	case "no":
		return "- `" + v.mode + "`: our glue is above 5% of what the WAF adds on every workload counted (largest share " + hi + ")."
	}
	return "- `" + v.mode + "`: not established on every workload counted: some repeats' shares are above 5%, others not (largest " + hi + ")."
}

// accountMethod says how the cost account is made.
const accountMethod = "Who executed the instructions *inside the hooks* of the section above: callgrind's dump of each window attributes every instruction to the function " +
	"that executed it (its exclusive or *self* cost) and that function's ELF object; the first window's costs less the second's, function by function, " +
	"are the hooks' (`driver/callgrind`: `ParseProfile`, `Account`). The categories sum to the inside-hooks count of every record (the run checks it). " +
	"Objects: our module (`libwafbench_<engine>.so`'s own code; in the Go module the `main.` and `wafbench/` symbols), cgo crossings (cgo's stubs and the Go runtime's " +
	"C↔Go transitions), the engine (libmodsecurity; `github.com/corazawaf/…`), regex (PCRE2 with its JIT code; Go's `regexp`), the Go runtime (allocator, maps, " +
	"hashing; its collector is off under callgrind), Go's standard library, other Go modules, libstdc++ and libgcc, libc, libm and the dynamic loader, the meter " +
	"(our measuring aid, not part of a deployment). Envoy's official binary is stripped: it names only the allocator entry points it exports (its tcmalloc: " +
	"`malloc`, `free`, …) and the ABI callbacks (`envoy_dynamic_module_callback_*`); its unnamed code goes to the category of the caller that spent most on it " +
	"(followed through unnamed callers), and the rest is *Envoy, other*, which also holds any difference between the two windows outside the hooks (it can be negative). " +
	"Callgrind counts user-space instructions only: the kernel's work in system calls is in no row. *Other* is whatever no rule names. " +
	"Ir/request are medians over repeats; a share is the median's share of the median inside-hooks count."

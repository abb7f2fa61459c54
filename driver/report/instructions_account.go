package report

import (
	"slices"
	"strings"

	"wafbench/driver/callgrind"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
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
	recs, s := fig.Records, fig.Summary
	type key struct {
		mode string
		wl   stats.WorkloadKey
	}
	accounts := map[key][]*result.Instructions{}
	pass := map[stats.WorkloadKey]map[int]float64{} // passthrough's Envoy Ir/request per repeat
	repeats := map[*result.Instructions]int{}
	for i := range recs {
		r := &recs[i]
		in := r.Instructions
		if !stats.Valid(r) || in == nil || in.Requests <= 0 {
			continue
		}
		w := stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}
		if r.Mode == modes.Passthrough {
			if pass[w] == nil {
				pass[w] = map[int]float64{}
			}
			pass[w][r.Repeat] = in.EnvoyPerRequest()
			continue
		}
		if in.Account != nil {
			repeats[in] = r.Repeat
			accounts[key{r.Mode, w}] = append(accounts[key{r.Mode, w}], in)
		}
	}
	if len(accounts) == 0 {
		return
	}
	var waf []string
	for _, mode := range s.Modes {
		if mode != modes.Passthrough && slices.ContainsFunc(s.Workloads, func(w stats.WorkloadKey) bool { return len(accounts[key{mode, w}]) > 0 }) {
			waf = append(waf, mode)
		}
	}
	m.p("## Cost account (instructions)")
	m.nl()
	m.p("Who executed the instructions *inside the hooks* of the section above: callgrind's dump of each window attributes every instruction to the function " +
		"that executed it (its exclusive or *self* cost) and that function's ELF object; the first window's costs less the second's, function by function, " +
		"are the hooks' (`driver/callgrind`: `ParseProfile`, `Account`). The categories sum to the inside-hooks count of every record (the run checks it). " +
		"Objects: our module (`libwafbench_<engine>.so`'s own code; in the Go module the `main.` and `wafbench/` symbols), cgo crossings (cgo's stubs and the Go runtime's " +
		"C↔Go transitions), the engine (libmodsecurity; `github.com/corazawaf/…`), regex (PCRE2 with its JIT code; Go's `regexp`), the Go runtime (allocator, maps, " +
		"hashing; its collector is off under callgrind), Go's standard library, other Go modules, libstdc++ and libgcc, libc, libm and the dynamic loader, the meter " +
		"(our measuring aid, not part of a deployment). Envoy's official binary is stripped: it names only the allocator entry points it exports (its tcmalloc: " +
		"`malloc`, `free`, …) and the ABI callbacks (`envoy_dynamic_module_callback_*`); its unnamed code goes to the category of the caller that spent most on it " +
		"(followed through unnamed callers), and the rest is *Envoy, other*, which also holds any difference between the two windows outside the hooks (it can be negative). " +
		"Callgrind counts user-space instructions only: the kernel's work in system calls is in no row. *Other* is whatever no rule names. " +
		"Ir/request are medians over repeats; a share is the median's share of the median inside-hooks count.")
	m.nl()
	for _, w := range s.Workloads {
		if !slices.ContainsFunc(waf, func(mode string) bool { return len(accounts[key{mode, w}]) > 0 }) {
			continue
		}
		head := []string{"category"}
		for _, mode := range waf {
			head = append(head, "`"+mode+"` Ir/req", "share")
		}
		m.p("**%s**", w.String())
		m.nl()
		m.head(head...)
		inside := map[string]float64{}
		for _, mode := range waf {
			inside[mode] = instrMedian(accounts[key{mode, w}], (*result.Instructions).HooksPerRequest).Median
		}
		for _, cat := range callgrind.Categories {
			row, show := []string{cat}, cat == callgrind.CatOther
			for _, mode := range waf {
				in := accounts[key{mode, w}]
				if len(in) == 0 {
					row = append(row, "–", "–")
					continue
				}
				v := instrMedian(in, func(x *result.Instructions) float64 { return x.AccountPerRequest(cat) }).Median
				show = show || v != 0
				row = append(row, irCell(v), f(100*v/inside[mode], 2)+"%")
			}
			if show {
				m.row(row...)
			}
		}
		row := []string{"**inside hooks**"}
		for _, mode := range waf {
			if len(accounts[key{mode, w}]) == 0 {
				row = append(row, "–", "–")
				continue
			}
			row = append(row, irCell(inside[mode]), "100%")
		}
		m.row(row...)
		m.nl()
	}
	m.p("**Our glue against what the WAF adds.** Glue is %s; what the WAF adds is the mode's whole-Envoy count (inside plus outside the hooks) less passthrough's "+
		"in the same repeat. The verdict is *yes* when every repeat's share is ≤ %.0f%%, *no* when every one is above, *not established* otherwise.",
		strings.Join(callgrind.Glue, " + "), 100*glueLimit)
	m.nl()
	m.head("mode", "workload", "n", "glue Ir/req", "WAF-added Ir/req", "glue share", "range over repeats", "≤ 5%?")
	var verdicts []string
	for _, mode := range waf {
		var all []float64
		for _, w := range s.Workloads {
			var glue, added, share []float64
			for _, in := range accounts[key{mode, w}] {
				p, ok := pass[w][repeats[in]]
				if !ok {
					continue
				}
				var gl float64
				for _, c := range callgrind.Glue {
					gl += in.AccountPerRequest(c)
				}
				ad := in.EnvoyPerRequest() - p
				glue, added, share = append(glue, gl), append(added, ad), append(share, gl/ad)
			}
			if len(share) == 0 {
				continue
			}
			all = append(all, share...)
			verdict := "not established"
			switch {
			case slices.Max(share) <= glueLimit:
				verdict = "yes"
			case slices.Min(share) > glueLimit:
				verdict = "no"
			}
			m.row("`"+mode+"`", w.String(), itoa(len(share)), irCell(stats.Median(glue).Median), irCell(stats.Median(added).Median),
				f(100*stats.Median(share).Median, 3)+"%", f(100*slices.Min(share), 3)+"–"+f(100*slices.Max(share), 3)+"%", verdict)
		}
		if len(all) == 0 {
			continue
		}
		hi := f(100*slices.Max(all), 3) + "%"
		switch {
		case slices.Max(all) <= glueLimit:
			verdicts = append(verdicts, "- `"+mode+"`: our glue is ≤ 5% of what the WAF adds on every workload counted (largest share of any repeat "+hi+").")
		case slices.Min(all) > glueLimit:
			verdicts = append(verdicts, "- `"+mode+"`: our glue is above 5% of what the WAF adds on every workload counted (largest share "+hi+").")
		default:
			verdicts = append(verdicts, "- `"+mode+"`: not established on every workload counted: some repeats' shares are above 5%, others not (largest "+hi+").")
		}
	}
	m.nl()
	for _, v := range verdicts {
		m.p("%s", v)
	}
	if len(verdicts) > 0 {
		m.nl()
	}
}

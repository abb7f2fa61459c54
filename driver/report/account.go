package report

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"wafbench/driver/account"
	"wafbench/driver/modes"
	"wafbench/driver/perf/flame"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// The cost account of a run --perf run (driver/account): each profiled
// window's samples split into Envoy outside the WAF hooks and, inside them,
// engine, regex, allocator, module, ABI and kernel, as µs of Envoy CPU per
// request (the part's share of the samples × the window's schedstat CPU
// per request), with a t interval over the repeats.

// accountParts are the account's columns, in order.
var accountParts = []account.Part{account.Envoy, account.Engine, account.Regex, account.Alloc,
	account.Module, account.ABI, account.Kernel, account.HookOther, account.Runtime, account.Unattributed}

// accountRow is one mode × workload × conns: per repeat, µs/request by part.
type accountRow struct {
	Mode, Workload string
	Conns          int
	Repeats        []int
	CPU            []float64                 // schedstat µs/request
	Parts          [account.NParts][]float64 // µs/request
	Rules          map[string]int64          // sample weight by rule
	Total          int64                     // sample weight
}

func (r *accountRow) key() string { return fmt.Sprintf("%s@%d", r.Workload, r.Conns) }

// readAccount builds the account rows of recs' profiled windows, in record
// order; nil when no window has a profile. The account is of Envoy: a
// reference host's profile (Caddy, nginx) is left out.
func readAccount(dir string, recs []result.Record) ([]*accountRow, error) {
	var rows []*accountRow
	by := map[string]*accountRow{}
	for i := range recs {
		r := &recs[i]
		if r.PerfFile == "" || !stats.Valid(r) || r.CPU.UsPerRequest <= 0 || modes.HostOf(r.Mode) != modes.Envoy {
			continue
		}
		st, err := flame.Stacks(dir, r)
		if err != nil {
			return nil, err
		}
		a := account.Of(st)
		if a.Total() == 0 {
			continue
		}
		k := fmt.Sprintf("%s\x00%s\x00%d", r.Mode, r.Workload, r.Conns)
		row := by[k]
		if row == nil {
			row = &accountRow{Mode: r.Mode, Workload: r.Workload, Conns: r.Conns, Rules: map[string]int64{}}
			by[k] = row
			rows = append(rows, row)
		}
		row.Repeats = append(row.Repeats, r.Repeat)
		row.CPU = append(row.CPU, r.CPU.UsPerRequest)
		for p := range account.NParts {
			row.Parts[p] = append(row.Parts[p], a.Share(account.Part(p))*r.CPU.UsPerRequest)
		}
		for why, n := range a.Rules {
			row.Rules[why] += n
		}
		row.Total += a.Total()
	}
	return rows, nil
}

// meanT returns the mean of v and the half-width of its two-sided Student
// t interval at stats.Confidence (NaN below two values).
func meanT(v []float64) (mean, half float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	mean = stat.Mean(v, nil)
	if len(v) < 2 {
		return mean, math.NaN()
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(v) - 1)}.Quantile(1 - (1-stats.Confidence)/2)
	return mean, t * stat.StdDev(v, nil) / math.Sqrt(float64(len(v)))
}

// meanCell formats a mean with its interval: "123 ±45", or "123" for one value.
func meanCell(v []float64) string {
	m, h := meanT(v)
	if math.IsNaN(m) {
		return noValue
	}
	if math.IsNaN(h) {
		return f(m, 0)
	}
	return f(m, 0) + " ±" + f(h, 0)
}

// pairedByRepeat returns, for the repeats both a and b have, g(a_i, b_i).
func pairedByRepeat(ar []int, a []float64, br []int, b []float64, g func(x, y float64) float64) []float64 {
	var out []float64
	for i, rep := range ar {
		if j := slices.Index(br, rep); j >= 0 {
			out = append(out, g(a[i], b[j]))
		}
	}
	return out
}

// writeAccountSection writes the cost-account section of report.md;
// nothing when the run has no profiles.
func writeAccountSection(m *md, fig *figures) {
	rows := fig.Account
	if len(rows) == 0 {
		return
	}
	m.p("## Cost account (run --perf)")
	m.nl()
	m.p("Where each µs of Envoy CPU per request goes (driver/account). Each profiled window's samples are classified by their call stack and each part's share is multiplied by the window's CPU µs/request (schedstat); cells are the mean over repeats ± the half-width of a %.0f%% t interval (n = repeats; none for one). A sample is inside the WAF hooks when a module hook (`envoy_dynamic_module_on_…`) is on its stack, or when its stack was cut short by code without frame pointers (libmodsecurity, libstdc++, PCRE2 from Debian): Envoy keeps frame pointers, so its own stacks unwind to the thread's root. Inside the hooks the sample goes to the component at its leaf, past libc and libstdc++ helpers; frames of the stripped Envoy (`[envoy]`) go by their caller — under Envoy's exported `malloc`/`free` or engine code the allocator (Envoy's tcmalloc), under our module or a named `envoy_dynamic_module_callback_…` an ABI callback. Go module frames, our C++ module and libmodsecurity's dynamic symbols are resolved by perf; libmodsecurity's internal (static) functions and PCRE2's show as their library, PCRE2's JIT code as `[perf-PID.map]`.", 100*stats.Confidence)
	m.nl()
	m.p("Columns: **Envoy** outside the hooks (**Δ pass.**: minus passthrough's whole CPU in the same repeat, the extra work a WAF causes Envoy — buffering, local replies), **hooks** (the sum inside), engine, regex, alloc(ator), module (our glue), ABI (callbacks into Envoy and cgo crossings), kernel (inside the hooks), **helpers** (inside the hooks, libc/libstdc++ self time whose caller the cut stack lost — almost surely the engine's), **Go rt** (the Go runtime's own threads off the hooks: GC mark and sweep, scheduler), **unattr.** (no side decided). **glue %%**: (module + ABI) ÷ (mode − passthrough CPU) per repeat.")
	m.nl()
	var keys []string
	for _, r := range rows {
		if !slices.Contains(keys, r.key()) {
			keys = append(keys, r.key())
		}
	}
	head := []string{"workload", "mode", "CPU µs/req", "Envoy", "Δ pass."}
	head = append(head, "hooks", "engine", "regex", "alloc", "module", "ABI", "kernel", "helpers", "Go rt", "unattr.", "glue %")
	m.head(head...)
	for _, k := range keys {
		var base *accountRow
		for _, r := range rows {
			if r.key() == k && r.Mode == modes.Baseline {
				base = r
			}
		}
		for _, r := range rows {
			if r.key() == k {
				m.row(accountCells(r, base)...)
			}
		}
	}
	m.nl()
	m.p("How the samples were placed (share of each mode's samples, all profiled workloads): **hook** — a hook on the stack; **WAF frame** — a cut stack holding a frame only WAF code runs; **cut** — a cut stack of libc frames only; **Envoy stack** — unwound to a thread's root with no hook; **Envoy I/O** — a socket call whose glibc wrapper cut Envoy's stack (the modules do no socket I/O); **Go thread** — a Go runtime thread. The cut-stack rules err by about passthrough's own share of cut stacks (it has no hooks).")
	m.nl()
	writeAccountRules(m, rows)
}

// accountCells is the account table's row of r; base is passthrough's row
// of the same workload (nil for none), for the Δ pass. and glue columns.
func accountCells(r, base *accountRow) []string {
	cells := []string{r.key(), r.Mode, meanCell(r.CPU), meanCell(r.Parts[account.Envoy]), "–"}
	hooks := make([]float64, len(r.CPU))
	glue := make([]float64, len(r.CPU))
	for p := range account.NParts {
		if account.Part(p).InHooks() {
			for i, v := range r.Parts[p] {
				hooks[i] += v
			}
		}
	}
	for i := range glue {
		glue[i] = r.Parts[account.Module][i] + r.Parts[account.ABI][i]
	}
	gluePct := noValue
	if base != nil && r != base {
		cells[4] = meanCell(pairedByRepeat(r.Repeats, r.Parts[account.Envoy], base.Repeats, base.CPU, func(x, y float64) float64 { return x - y }))
		var pct []float64
		for i, rep := range r.Repeats {
			if j := slices.Index(base.Repeats, rep); j >= 0 && r.CPU[i] > base.CPU[j] {
				pct = append(pct, 100*glue[i]/(r.CPU[i]-base.CPU[j]))
			}
		}
		if m, h := meanT(pct); !math.IsNaN(m) {
			gluePct = f(m, 1)
			if !math.IsNaN(h) {
				gluePct += " ±" + f(h, 1)
			}
		}
	}
	cells = append(cells, meanCell(hooks))
	for _, p := range accountParts[1:] {
		cells = append(cells, meanCell(r.Parts[p]))
	}
	return append(cells, gluePct)
}

// writeAccountRules is the table of how each mode's samples were placed
// (account.By…), as shares of its samples over all profiled workloads.
func writeAccountRules(m *md, rows []*accountRow) {
	rules := []string{account.ByHook, account.ByWAFFrame, account.ByCutStack, account.ByThreadRoot, account.ByIOWrapper, account.ByGoThread, account.ByNothing}
	m.head("mode", "hook %", "WAF frame %", "cut %", "Envoy stack %", "Envoy I/O %", "Go thread %", "undecided %")
	var seen []string
	for _, r := range rows {
		if slices.Contains(seen, r.Mode) {
			continue
		}
		seen = append(seen, r.Mode)
		var total int64
		by := map[string]int64{}
		for _, s := range rows {
			if s.Mode == r.Mode {
				total += s.Total
				for why, n := range s.Rules {
					by[why] += n
				}
			}
		}
		cells := []string{r.Mode}
		for _, why := range rules {
			cells = append(cells, f(100*float64(by[why])/float64(total), 1))
		}
		m.row(cells...)
	}
	m.nl()
}

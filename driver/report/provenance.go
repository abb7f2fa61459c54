package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"wafbench/driver/merge"
	"wafbench/driver/modes"
	"wafbench/driver/procstat"
	"wafbench/driver/result"
)

// moduleCheck is the cross-check of one mode's module: the hash meta.json
// records (taken when the run started) against the hashes the mode's
// preflights took of the file Envoy really loaded.
type moduleCheck struct {
	Mode      string
	Trials    int      // preflights that recorded a hash
	Differs   []string // "path (sha…)" of each preflight hash that differs, once each
	FirstDiff int      // trial of the first differing preflight
}

// cell is the check in words for the versions table.
func (c moduleCheck) cell() string {
	switch {
	case c.Trials == 0:
		return "no preflight hash recorded"
	case len(c.Differs) == 0:
		return fmt.Sprintf("matches %d preflights", c.Trials)
	}
	return fmt.Sprintf("**differs**: preflight of trial %d loaded %s", c.FirstDiff, strings.Join(c.Differs, ", "))
}

// moduleChecks compares, per WAF mode of meta, the module hash meta records
// with every preflight hash of that mode in recs.
func moduleChecks(meta *result.Meta, recs []result.Record) []moduleCheck {
	var names []string
	for k := range meta.Modules {
		names = append(names, k)
	}
	modes.Sort(names)
	var out []moduleCheck
	for _, k := range names {
		want := meta.Modules[k].SHA256
		c := moduleCheck{Mode: k}
		for i := range recs {
			pf := recs[i].Preflight
			if recs[i].Mode != k || pf == nil || pf.ModuleSHA256 == "" {
				continue
			}
			c.Trials++
			if pf.ModuleSHA256 != want {
				d := fmt.Sprintf("`%s` (`%s`)", pf.ModulePath, short(pf.ModuleSHA256))
				if len(c.Differs) == 0 {
					c.FirstDiff = recs[i].Trial
				}
				if !slices.Contains(c.Differs, d) {
					c.Differs = append(c.Differs, d)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// ticksCheck is the comparison of the two kinds of CPU counter every window
// records: /proc utime+stime (ticks) against the nanosecond counters
// (schedstat, the figure the report uses, and the process CPU clock).
type ticksCheck struct {
	ClkTck   int64 // the rate used; 0 = not recorded (assumed 100 in old runs)
	Checked  int   // windows with both counters
	NoTicks  int   // windows without ticks (CLK_TCK unmeasured)
	Disagree []result.Record
	WorstPct float64 // largest |ticks − ns counter| in % of the counter
}

// checkTicks compares, for every valid window, ticks_ns with schedstat_ns
// (and clock_ns where recorded) within procstat.TicksTolerance.
func checkTicks(meta *result.Meta, recs []result.Record) ticksCheck {
	t := ticksCheck{ClkTck: meta.ClkTck}
	tck := meta.ClkTck
	if tck <= 0 {
		tck = 100 // runs before CLK_TCK was recorded converted with 100 or the real value
	}
	for i := range recs {
		r := &recs[i]
		if r.Error != "" || r.Interrupted || r.CPU.SchedstatNs <= 0 {
			continue
		}
		if r.CPU.TicksNs == 0 {
			t.NoTicks++
			continue
		}
		t.Checked++
		off := false
		for _, ns := range []int64{r.CPU.SchedstatNs, r.CPU.ClockNs} {
			if ns <= 0 {
				continue
			}
			d := r.CPU.TicksNs - ns
			if d < 0 {
				d = -d
			}
			t.WorstPct = math.Max(t.WorstPct, 100*float64(d)/float64(ns))
			if d > procstat.TicksTolerance(ns, tck) {
				off = true
			}
		}
		if off {
			t.Disagree = append(t.Disagree, *r)
		}
	}
	return t
}

// line states the check in one sentence.
func (t ticksCheck) line() string {
	rate := fmt.Sprintf("measured CLK_TCK %d", t.ClkTck)
	if t.ClkTck <= 0 {
		rate = "CLK_TCK 100 assumed, the run recorded none"
	}
	s := fmt.Sprintf("/proc ticks (utime+stime, %s) against the ns counters (schedstat, process CPU clock), tolerance 4 ticks + 2%%: %d of %d windows disagree (largest difference %.1f%%)",
		rate, len(t.Disagree), t.Checked, t.WorstPct)
	if t.NoTicks > 0 {
		s += fmt.Sprintf("; %d windows have no ticks (CLK_TCK could not be measured)", t.NoTicks)
	}
	return s
}

// writeProvenance is the section that checks what the run recorded about
// itself: module hashes against the preflights, /proc ticks against the
// ns counters, and what could not be measured.
func writeProvenance(m *md, fig *figures) {
	meta, recs := fig.Meta, fig.Records
	checks := moduleChecks(meta, recs)
	ticks := checkTicks(meta, recs)
	if len(checks) == 0 && ticks.Checked == 0 && ticks.NoTicks == 0 && len(meta.Unmeasured) == 0 {
		return
	}
	m.p("## Measurement cross-checks")
	m.nl()
	if len(checks) > 0 {
		m.p("Module hashes: meta.json's hash of each mode's module (taken when the run started) against the hash each trial's preflight took of the file Envoy loaded.")
		m.nl()
		m.head("mode", "meta.json module", "preflight")
		for _, c := range checks {
			mod := meta.Modules[c.Mode]
			m.row(c.Mode, "`"+orNone(mod.Path)+"` (`"+short(mod.SHA256)+"`)", c.cell())
		}
		m.nl()
	}
	if ticks.Checked > 0 || ticks.NoTicks > 0 {
		m.p("- CPU counters: %s.", ticks.line())
		if len(ticks.Disagree) > 0 {
			var trials []string
			for _, r := range ticks.Disagree {
				trials = append(trials, fmt.Sprintf("trial %d %s %s", r.Trial, r.Mode, r.Workload))
			}
			m.p("  Disagreeing windows: %s.", strings.Join(trials, "; "))
		}
	}
	for _, u := range meta.Unmeasured {
		m.p("- Not measured: %s.", u)
	}
	m.nl()
}

// provenanceLimitations are the cross-check failures, one sentence each,
// for the report's limitations.
func provenanceLimitations(meta *result.Meta, recs []result.Record) []string {
	var out []string
	for _, c := range moduleChecks(meta, recs) {
		if len(c.Differs) > 0 {
			out = append(out, fmt.Sprintf("the module hash recorded for %s in meta.json is not the hash of the file its preflights loaded (see Measurement cross-checks): its Versions row names the wrong file", c.Mode))
		}
	}
	if t := checkTicks(meta, recs); len(t.Disagree) > 0 {
		out = append(out, fmt.Sprintf("in %d of %d windows /proc ticks and the ns CPU counters disagree beyond 4 ticks + 2%% (see Measurement cross-checks)", len(t.Disagree), t.Checked))
	}
	if len(meta.Unmeasured) > 0 {
		out = append(out, fmt.Sprintf("%d facts about the environment could not be measured (listed under Measurement cross-checks)", len(meta.Unmeasured)))
	}
	if meta.Processor == nil {
		out = append(out, "the CPU fingerprint (family, model, stepping, ISA extensions, caches, hypervisor) was not recorded: the run predates it, so only the CPU model name identifies the machine")
	}
	return out
}

// processorRows are the Environment rows that name the CPU exactly.
func processorRows(p *result.Processor) [][2]string {
	if p == nil {
		return [][2]string{{"CPU fingerprint", "not recorded (the run predates it)"}}
	}
	var have, lack []string
	for _, x := range result.ISAChecked {
		if p.ISA[x] {
			have = append(have, x)
		} else {
			lack = append(lack, x)
		}
	}
	sort.Strings(lack)
	hv := "none (no CPUID hypervisor bit)"
	if p.Hypervisor {
		hv = orNone(p.HypervisorVendor) + " (CPUID hypervisor bit set)"
	}
	mhz := "not read"
	if p.MHz > 0 {
		mhz = fmt.Sprintf("%.0f", p.MHz)
	}
	return [][2]string{
		{"CPU identity", fmt.Sprintf("%s family %d model %d stepping %d, %q", orNone(p.Vendor), p.Family, p.Model, p.Stepping, p.ModelName)},
		{"ISA extensions (CPUID)", "has " + orNone(strings.Join(have, " ")) + "; lacks " + orNone(strings.Join(lack, " "))},
		{"caches", fmt.Sprintf("L1d %s, L2 %s, L3 %s", cacheSize(p.L1dKiB), cacheSize(p.L2KiB), cacheSize(p.L3KiB))},
		{"hypervisor", hv},
		{"CPU MHz at start", mhz},
	}
}

func cacheSize(kib int) string {
	switch {
	case kib <= 0:
		return noValue
	case kib >= 1024 && kib%1024 == 0:
		return fmt.Sprintf("%d MiB", kib/1024)
	}
	return fmt.Sprintf("%d KiB", kib)
}

// cpuNotes are the merged run's notes about its runs' CPUs: differences
// (pooled with --blocks or --force) and comparisons by model name alone.
func cpuNotes(meta *result.Meta) []string {
	var out []string
	for _, n := range meta.Notes {
		for _, p := range []string{merge.CPUWarningPrefix, merge.BlocksPrefix, merge.EnvDifferencePrefix} {
			if rest, ok := strings.CutPrefix(n, p); ok && (p == merge.CPUWarningPrefix || merge.IsCPUDiff(rest)) {
				out = append(out, rest)
			}
		}
	}
	return out
}

// Command matchlogcost compares two run --callgrind runs of the same modes
// and workloads: one with the modules as shipped (match_log off) and one
// with match_log compiled out (make matchlog-cost). Per mode × workload it
// prints the instructions per request inside the hooks and over the whole
// Envoy process, medians over repeats, and exits 1 when match_log off costs
// more inside the hooks than the bound over compiled out.
//
//	go run ./scripts/matchlogcost [-bound 0.5] OFF_RUN COMPILED_OUT_RUN
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

func main() {
	bound := flag.Float64("bound", 0.5, "largest excess of match_log off over compiled out inside the hooks, in per cent")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: matchlogcost [-bound PCT] OFF_RUN COMPILED_OUT_RUN")
		os.Exit(2)
	}
	off, err := read(flag.Arg(0))
	if err == nil {
		var out map[key]counts
		if out, err = read(flag.Arg(1)); err == nil {
			err = compare(os.Stdout, off, out, *bound)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "matchlogcost:", err)
		os.Exit(1)
	}
}

type key struct{ mode, workload string }

// counts are one mode × workload's instructions per request, by repeat.
type counts struct{ hooks, envoy []float64 }

// read collects the instruction counts of every valid record of a run.
func read(dir string) (map[key]counts, error) {
	recs, _, err := result.ReadRecords(dir)
	if err != nil {
		return nil, err
	}
	out := map[key]counts{}
	for i := range recs {
		r := &recs[i]
		if !stats.Valid(r) || r.Instructions == nil || r.Instructions.OutsideHooks == 0 {
			continue
		}
		k := key{r.Mode, fmt.Sprintf("%s@%d", r.Workload, r.Conns)}
		c := out[k]
		c.hooks = append(c.hooks, r.Instructions.HooksPerRequest())
		c.envoy = append(c.envoy, r.Instructions.EnvoyPerRequest())
		out[k] = c
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no record with instruction counts of a WAF mode (a run --callgrind run?)", dir)
	}
	return out, nil
}

// compare writes the table and reports every case where off exceeds
// compiled out inside the hooks by more than boundPct, and every case one
// run lacks.
func compare(w io.Writer, off, out map[key]counts, boundPct float64) error {
	keys := make([]key, 0, len(off))
	for k := range off {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].mode != keys[j].mode {
			return keys[i].mode < keys[j].mode
		}
		return keys[i].workload < keys[j].workload
	})
	fmt.Fprintln(w, "| mode | workload | repeats | hooks Ir/req, off | compiled out | off − out | Envoy Ir/req, off | compiled out | off − out |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	var failed []string
	for _, k := range keys {
		a, b := off[k], out[k]
		if len(b.hooks) == 0 {
			failed = append(failed, fmt.Sprintf("%s %s: not in the compiled-out run", k.mode, k.workload))
			continue
		}
		ha, hb := stats.Median(a.hooks).Median, stats.Median(b.hooks).Median
		ea, eb := stats.Median(a.envoy).Median, stats.Median(b.envoy).Median
		fmt.Fprintf(w, "| %s | %s | %d / %d | %.0f | %.0f | %+.0f (%+.3f%%) | %.0f | %.0f | %+.0f (%+.3f%%) |\n",
			k.mode, k.workload, len(a.hooks), len(b.hooks), ha, hb, ha-hb, 100*(ha-hb)/hb, ea, eb, ea-eb, 100*(ea-eb)/eb)
		if ha > hb*(1+boundPct/100) {
			failed = append(failed, fmt.Sprintf("%s %s: off %.0f Ir/request inside the hooks, compiled out %.0f: +%.3f%% > %.3g%%",
				k.mode, k.workload, ha, hb, 100*(ha-hb)/hb, boundPct))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("match_log off costs more than compiled out:\n  %s", strings.Join(failed, "\n  "))
	}
	fmt.Fprintf(w, "\nmatch_log off is within %.3g%% of compiled out inside the hooks on every case.\n", boundPct)
	return nil
}

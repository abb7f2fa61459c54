package report

import (
	"fmt"
	"math"
	"strings"

	"wafbench/driver/merge"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// Report sections of sharded and multi-machine runs: which shards a run or
// a merge holds, and the paired ratios analysed with each machine as a
// block (merge --blocks).

// orderLabels are the repeat numbers of meta.ModeOrder's entries: the
// design's numbers for a shard or a merge of shards, else 1, 2, ….
func orderLabels(meta *result.Meta) []int {
	switch {
	case meta.Shard != nil && len(meta.Shard.Repeats) == len(meta.ModeOrder):
		return meta.Shard.Repeats
	case meta.Shards != nil && len(meta.Shards.Repeats) == len(meta.ModeOrder):
		return meta.Shards.Repeats
	}
	out := make([]int, len(meta.ModeOrder))
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// writeShards says which slice of its design a shard ran, or how many of
// its design's shards a merge holds, naming the missing ones.
func writeShards(m *md, fig *figures) {
	meta := fig.Meta
	switch {
	case meta.Shard != nil:
		s := meta.Shard
		m.p("## Shard")
		m.nl()
		m.p("Shard %d/%d of a design of %d repeats: this run holds design repeats %s. Merge it with the other shards (`wafbench merge --blocks`) for the whole design.",
			s.Index, s.Count, s.DesignRepeats, merge.Span(s.Repeats))
		m.nl()
	case meta.Shards != nil:
		s := meta.Shards
		m.p("## Shards")
		m.nl()
		line := fmt.Sprintf("**%d of %d shards** of a design of %d repeats: design repeats %s.", len(s.Present), s.Count, s.DesignRepeats, merge.Span(s.Repeats))
		if len(s.Missing) > 0 {
			var miss []string
			for _, i := range s.Missing {
				miss = append(miss, fmt.Sprintf("%d/%d", i, s.Count))
			}
			line += fmt.Sprintf(" Missing: shard %s (their repeats did not run or were not given to the merge); the mode rotation is balanced only over whole designs, so positions may not be.", strings.Join(miss, ", "))
		}
		m.p("%s", line)
		m.nl()
	}
}

// blockName labels machine b: "M1" … with its CPU model in the machine table.
func blockName(b int) string { return fmt.Sprintf("M%d", b+1) }

// writeBlocks is the analysis of a merge --blocks: a table of the machines,
// then per workload every paired ratio pooled over machines with the
// machine as a random block effect (stats.AnalyseBlocks), each machine's
// own ratio beside it.
func writeBlocks(m *md, fig *figures) {
	meta, s := fig.Meta, fig.Summary
	if len(meta.Blocks) == 0 {
		return
	}
	m.p("## Machines as blocks")
	m.nl()
	m.p(blocksMethod, len(meta.Blocks), 100*stats.Confidence)
	m.nl()
	m.head("machine", "id", "CPU model", "runs", "repeats")
	reps := make([][]int, len(meta.Blocks))
	for i, b := range meta.Blocks {
		reps[i] = b.Repeats
		m.row(blockName(i), "`"+b.Machine+"`", orNone(b.CPUModel), strings.Join(b.Runs, ", "), merge.Span(b.Repeats))
	}
	m.nl()
	rows := buildBlockRows(s, reps)
	if len(rows) == 0 {
		m.p("No paired comparisons to analyse.")
		m.nl()
		return
	}
	if len(meta.Blocks) == 1 {
		m.p("One machine: the between-machine variance cannot be estimated, and the pooled ratio holds for this machine only.")
		m.nl()
	}
	cells := blockHead(len(meta.Blocks))
	for _, wl := range s.Workloads {
		head := false
		for _, r := range rows {
			if r.wl != wl {
				continue
			}
			if !head {
				m.p("### %s", wl)
				m.nl()
				m.head(cells...)
				head = true
			}
			m.row(blockCells(r)...)
		}
		if head {
			m.nl()
		}
	}
	m.p("Machine ratios: geometric mean of the machine's per-repeat ratios with its paired-t 95%% interval. Between-machine SD: exp(τ) − 1, how much a machine's ratio typically departs from the pooled one; share between: τ²/(τ² + σ²).")
	m.nl()
}

// blockHead is the head of a workload's table over blocks machines.
func blockHead(blocks int) []string {
	cells := []string{"ratio", "metric"}
	for i := range blocks {
		cells = append(cells, blockName(i)+" (n)")
	}
	return append(cells, "between-machine SD", "share between", "pooled ratio (95% CI)", "df", "p", "Holm p", "verdict")
}

// blockCells is one comparison pooled over machines, each machine's own
// ratio beside it.
func blockCells(r blockRow) []string {
	row := []string{r.name, r.metric}
	for _, mr := range r.machines {
		if !mr.ok {
			row = append(row, noValue)
			continue
		}
		row = append(row, fmt.Sprintf("%s (%d)", withCI(mr.geo, mr.lo, mr.hi, 3), mr.n))
	}
	sd := noValue
	if !math.IsNaN(r.sdPct) {
		sd = fmt.Sprintf("%.1f%%", r.sdPct)
	}
	share := noValue
	if !math.IsNaN(r.sharePct) {
		share = fmt.Sprintf("%.0f%%", r.sharePct)
	}
	v := "**" + r.verdict + "**"
	if r.reason != "" {
		v = r.verdict + " (" + r.reason + ")"
	}
	return append(row, sd, share, withCI(r.ratio, r.lo, r.hi, 3), f(r.df, 1), p(r.p), p(r.pHolm), v)
}

// blocksMethod says how machines are pooled as blocks; its verbs are the
// number of machines and the confidence level in percent.
const blocksMethod = "The merged runs ran on %d machine(s). Modes are paired within each repeat, and repeats are grouped by the machine they ran on: each per-repeat log-ratio is modelled as pooled mean + machine effect (variance τ², between machines) + repeat noise (variance σ², within a machine), a one-way random-effects model fitted by the method of moments. The pooled ratio is the weighted mean (weights 1/(τ² + σ²/n) per machine) with a Student-t %g%% interval on Satterthwaite's degrees of freedom: with few machines the interval is wide, because a ratio measured on these machines is claimed for machines like them. When τ² is estimated as 0 the model is the pooled paired t of all repeats. These verdicts, not the pooled-as-one-machine verdicts of *Paired ratios*, account for the machines; Holm's correction runs over the comparisons of this section."

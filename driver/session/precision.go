package session

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"wafbench/driver/internal/usage"
	"wafbench/driver/modes"
	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/result"
	"wafbench/driver/runner"
	"wafbench/driver/stats"
)

// parsePct reads "3%" or "3" as 3 (percent): > 0 and < 100.
func parsePct(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || math.IsNaN(v) || v <= 0 || v >= 100 {
		return 0, fmt.Errorf("want a half-width in percent, > 0 and < 100, like 3%%; got %q", s)
	}
	return v, nil
}

// precisionPct checks --precision and --budget and returns the target
// half-width (0 without --precision).
func precisionPct(req Request) (float64, error) {
	if req.Precision == "" {
		if req.Given["budget"] {
			return 0, usage.Errorf("--budget needs --precision (the CI half-width to stop at, e.g. --precision 3%%)")
		}
		return 0, nil
	}
	pct, err := parsePct(req.Precision)
	if err != nil {
		return 0, usage.Errorf("--precision: %v", err)
	}
	if req.Budget <= 0 {
		return 0, usage.Errorf("--precision needs --budget > 0 (the most wall time the trials may take, e.g. 10m), got %s", req.Budget)
	}
	if req.Shard != "" {
		return 0, usage.Errorf("--precision cannot be combined with --shard: a shard runs a fixed slice of the design")
	}
	return pct, nil
}

// precisionTargets expands the suite's precision_targets over the run's
// modes and workloads. A suite without targets targets modsecurity/coraza
// when both run, else every WAF mode against passthrough.
func precisionTargets(suite *profile.Suite, modeNames, workloads []string) ([]result.PrecisionTarget, error) {
	specs := suite.PrecisionTargets
	if len(specs) == 0 {
		has := map[string]bool{}
		for _, m := range modeNames {
			has[m] = true
		}
		if has[modes.ModSecurity] && has[modes.Coraza] {
			specs = []profile.PrecisionTarget{{Ratio: modes.ModSecurity + "/" + modes.Coraza}}
		} else if has[stats.Baseline] {
			for _, m := range stats.WAFModes(modeNames) {
				specs = append(specs, profile.PrecisionTarget{Ratio: m + "/" + stats.Baseline})
			}
		}
	}
	var out []result.PrecisionTarget
	for _, s := range specs {
		ts, err := stats.ExpandTargets(s.Ratio, s.Metrics, s.Workloads, modeNames, workloads)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

// newPrecision is meta.json's precision record: the suite's own targets
// at stats.PrecisionTargetPct for a plain run, or run --precision's.
func newPrecision(suite *profile.Suite, pct float64, budget time.Duration, modeNames, workloads []string, repeats int) (*result.Precision, error) {
	if pct == 0 && len(suite.PrecisionTargets) == 0 {
		return nil, nil
	}
	ts, err := precisionTargets(suite, modeNames, workloads)
	if err != nil {
		return nil, usage.Errorf("precision targets: %v", err)
	}
	if len(ts) == 0 {
		if pct > 0 {
			return nil, usage.Errorf("--precision: no precision target of suite %s applies to modes %s on workloads %s", suite.Name, strings.Join(modeNames, ","), strings.Join(workloads, ","))
		}
		return nil, nil
	}
	p := &result.Precision{TargetPct: stats.PrecisionTargetPct, Targets: ts, PlannedRepeats: repeats}
	if pct > 0 {
		p.TargetPct, p.BudgetS = pct, budget.Seconds()
	}
	return p, nil
}

// newBudget is the runner's budget for run --precision (nil without it).
func newBudget(p *result.Precision, popts plan.Options, log io.Writer) *runner.Budget {
	if p == nil || p.BudgetS == 0 {
		return nil
	}
	b := &runner.Budget{TargetPct: p.TargetPct, Limit: time.Duration(p.BudgetS * float64(time.Second)), Start: time.Now(), Plan: popts, Log: log}
	for _, t := range p.Targets {
		if tg, err := stats.ParseTarget(t); err == nil {
			b.Targets = append(b.Targets, tg)
		}
	}
	return b
}

// recordBudget writes how run --precision ended into meta: the repeats
// actually run, their mode order, the blocks added and why it stopped.
func recordBudget(meta *result.Meta, b *runner.Budget) {
	if b == nil || meta.Precision == nil {
		return
	}
	meta.Repeats = b.Plan.Repeats
	meta.ModeOrder = plan.ModeOrder(b.Plan)
	meta.Precision.AddedRepeats = b.Added
	meta.Precision.Stop = b.Stop
}

// caseKeys are the cases' "name@conns" keys, in order.
func caseKeys(cases []profile.Case) []string {
	out := make([]string, len(cases))
	for i, c := range cases {
		out[i] = c.Key()
	}
	return out
}

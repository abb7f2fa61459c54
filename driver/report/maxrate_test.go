package report

import (
	"strings"
	"testing"

	"wafbench/driver/maxrate"
	"wafbench/driver/result"
)

// windows are a method's windows around a half-pass rate r: passes below
// it, failures above, one of each at r.
func windows(r float64) []maxrate.Step {
	var steps []maxrate.Step
	for _, x := range []struct {
		k    float64
		pass []bool
	}{{0.8, []bool{true}}, {0.9, []bool{true, true}}, {1, []bool{true, false}}, {1.1, []bool{false, false}}, {1.2, []bool{false}}} {
		for i, p := range x.pass {
			steps = append(steps, maxrate.Step{Phase: "bisect", Window: maxrate.Window{Rate: r * x.k, Requests: 1000}, Pass: p, Vote: i + 1})
		}
	}
	return steps
}

// TestWriteMaxRate: a run whose trials ran both methods in alternating
// order gives each method the rate fitted to its windows with an
// interval, whether the sweep's rate lies in the search's interval, and
// the ratio of the rates the two found, with a verdict only where the
// interval excludes 1.
func TestWriteMaxRate(t *testing.T) {
	rec := func(trial int, searchRate, sweepRate float64, sweepFirst bool) result.Record {
		return result.Record{
			Case: result.Case{Trial: trial, Mode: "coraza", Workload: "headers", Conns: 16},
			MaxRate: []*maxrate.Result{
				{Objective: "p99<=25ms", Method: "search", Rate: searchRate * 0.9, Above: searchRate * 1.1, Steps: windows(searchRate), WallS: 50},
				{Objective: "p99<=25ms", Method: "sweep", Rate: sweepRate * 0.9, Above: sweepRate, Steps: windows(sweepRate), WallS: 200, First: sweepFirst},
			},
		}
	}
	render := func(recs ...result.Record) string {
		m := &md{}
		writeMaxRate(m, &figures{Records: recs})
		return m.b.String()
	}

	started := rec(1, 200, 200, false)
	started.MaxRate[0].Capacity = 320
	started.MaxRate[0].Steps = append(started.MaxRate[0].Steps, maxrate.Step{Phase: "anchor", Window: maxrate.Window{Rate: 275, Requests: 1000}})
	got := render(started, rec(2, 205, 200, true), rec(3, 198, 200, false), rec(4, 203, 200, true))
	for _, want := range []string{
		"| 1 | coraza | headers@16 | search | 1st | 199 | [157, 240] |", // the anchor narrows it
		"| 2 | coraza | headers@16 | search | 2nd | 204 | [162, 254] |",
		"| 2 | coraza | headers@16 | sweep | 1st | 199 | [158, 248] |",
		"| [180, 220) | 4 / 5 | 1000 | 50.0 | yes | 0.25× |",
		"The sweep's rate lies in the search's interval in 4 of 4 trials",
		"over the 4 trials where both gave one",
		"no difference established; the interval spans",
		"The search's wall time ÷ the sweep's is 0.250",
		"closed-loop window measured first (within the limit), req/s: trial 1 coraza 320 → 160.",
		"each method then probes an anchor a quarter above the highest rate it saw fail",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}

	// The search ten times below the sweep in every trial: outside its
	// interval, and established.
	got = render(rec(1, 20, 200, false), rec(2, 21, 200, true), rec(3, 19, 200, false))
	if !strings.Contains(got, "in 0 of 3 trials") || !strings.Contains(got, "the search finds a lower rate (established)") {
		t.Errorf("a search at 0.1× the sweep's rate is not reported lower:\n%s", got)
	}

	// Windows that all passed give no rate.
	r := rec(1, 200, 190, false)
	for i := range r.MaxRate[1].Steps {
		r.MaxRate[1].Steps[i].Pass = true
	}
	got = render(r)
	if !strings.Contains(got, "| 1 | coraza | headers@16 | sweep | 2nd | – | – |") || !strings.Contains(got, "| no rate |") {
		t.Errorf("a sweep whose windows all passed is misread:\n%s", got)
	}
}

package report

import (
	"strings"
	"testing"

	"wafbench/driver/maxrate"
	"wafbench/driver/result"
)

// TestWriteMaxRate: a run whose trials ran both methods in alternating
// order gives each result its place in its trial and the ratio of the
// rates the two found, with a verdict only where the interval excludes 1.
func TestWriteMaxRate(t *testing.T) {
	rec := func(trial int, searchRate, sweepRate float64, sweepFirst bool) result.Record {
		steps := []maxrate.Step{{Phase: "bisect", Window: maxrate.Window{Rate: searchRate, Requests: 1000}, Pass: true, Vote: 1, Verdict: "pass"}}
		return result.Record{Trial: trial, Mode: "coraza", Workload: "headers", Conns: 16, MaxRate: []*maxrate.Result{
			{Objective: "p99<=25ms", Method: "search", Rate: searchRate, Above: searchRate * 1.05, Steps: steps, WallS: 50},
			{Objective: "p99<=25ms", Method: "sweep", Rate: sweepRate, Above: sweepRate + 10, Steps: steps, WallS: 200, First: sweepFirst},
		}}
	}
	render := func(recs ...result.Record) string {
		m := &md{}
		writeMaxRate(m, &figures{Records: recs})
		return m.b.String()
	}

	got := render(rec(1, 200, 200, false), rec(2, 205, 200, true), rec(3, 198, 200, false), rec(4, 203, 200, true))
	for _, want := range []string{
		"| 1 | coraza | headers@16 | search | 1st | 200 |",
		"| 2 | coraza | headers@16 | search | 2nd | 205 |",
		"| 2 | coraza | headers@16 | sweep | 1st | 200 |",
		"over the 4 trials where both found one",
		"no difference established; the interval spans",
		"the search's wall time ÷ the sweep's is 0.250",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}

	// The search ten times below the sweep in every trial: established.
	got = render(rec(1, 20, 200, false), rec(2, 21, 200, true), rec(3, 19, 200, false))
	if !strings.Contains(got, "the search finds a lower rate (established)") {
		t.Errorf("a search at 0.1× the sweep's rate is not reported lower:\n%s", got)
	}

	// Before the order alternated: the search ran first, and no ratio line.
	got = render(rec(1, 200, 190, false))
	if !strings.Contains(got, "| 1 | coraza | headers@16 | sweep | 2nd | 190 |") || strings.Contains(got, "alternated by repeat") {
		t.Errorf("a search-first run is misread:\n%s", got)
	}
}

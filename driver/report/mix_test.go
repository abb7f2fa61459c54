package report

import (
	"strings"
	"testing"

	"wafbench/driver/load"
	"wafbench/driver/result"
)

// TestWriteMix builds the mix section from two repeats of two modes: the
// trial CPU per request and its ratio to passthrough are medians, the
// class rows give each class's weight, observed share, validity and the
// percentiles of its merged histograms.
func TestWriteMix(t *testing.T) {
	hist := func(vals ...int64) string {
		h := load.NewHistogram()
		for _, v := range vals {
			h.RecordValue(v)
		}
		r := load.Result{Hist: h}
		s, err := r.EncodeHist()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	rec := func(mode string, repeat int, cpu float64, attackStatus string, attackValid int64) result.Record {
		return result.Record{
			Case:   result.Case{Mode: mode, Repeat: repeat, Workload: "shop_mix", Conns: 16},
			Window: result.Window{ReqPerS: 100}, CPU: result.CPU{UsPerRequest: cpu},
			Classes: []result.Class{
				{Workload: "api_get", Weight: 9, ExpectStatus: 200, Requests: 90, Statuses: map[string]int64{"200": 90}, HistBase64: hist(100, 200, 300)},
				{Workload: "api_sqli", Weight: 1, ExpectStatus: map[string]int{"200": 200, "403": 403}[attackStatus], Requests: attackValid, Statuses: map[string]int64{attackStatus: 10}, HistBase64: hist(50)},
			},
		}
	}
	recs := []result.Record{
		rec("passthrough", 1, 100, "200", 10), rec("passthrough", 2, 120, "200", 10),
		rec("coraza", 1, 1000, "403", 10), rec("coraza", 2, 1320, "403", 10),
		{Case: result.Case{Mode: "coraza", Workload: "headers", Conns: 16}, CPU: result.CPU{UsPerRequest: 5}}, // not a mix
	}
	m := &md{}
	writeMix(m, &figures{Records: recs})
	got := m.b.String()
	for _, want := range []string{
		"## Weighted mixes",
		"### shop_mix@16",
		"| passthrough | 2 | 100 | 110.0 | – | 0 |",
		"| coraza | 2 | 100 | 1160.0 | 10.55× | 0 |",
		"| coraza | api_get | 90.0% | 90.0% | 200 | 180 | 0 | 200 | 300 |",
		"| coraza | api_sqli | 10.0% | 10.0% | 403 | 20 | 0 | 50 | 50 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	m = &md{}
	writeMix(m, &figures{Records: recs[4:]})
	if m.b.Len() != 0 {
		t.Errorf("no mix records: want no section, got\n%s", m.b.String())
	}
}

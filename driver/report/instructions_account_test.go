package report

import (
	"strings"
	"testing"

	"wafbench/driver/callgrind"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// TestWriteInstructionAccount: each category's median Ir/request and share
// of the inside-hooks count, "other" always shown, categories absent from
// every mode left out, and the glue verdict per mode from every repeat's
// share of what the mode adds over passthrough in the same repeat: yes when
// all are within 5%, not established when they straddle it; a run without
// accounts has no section.
func TestWriteInstructionAccount(t *testing.T) {
	rec := func(mode string, repeat int, envoy, outside int64, acc map[string]int64) result.Record {
		return result.Record{
			Case:         result.Case{Mode: mode, Workload: "headers", Conns: 1, Repeat: repeat},
			Instructions: &result.Instructions{Requests: 10, Envoy: envoy, OutsideHooks: outside, Account: acc},
		}
	}
	recs := []result.Record{
		rec("passthrough", 1, 1_000_000, 0, nil),
		rec("passthrough", 2, 1_000_000, 0, nil),
		// inside 9 M; adds 9.2 M; glue 100 k: 1.09%
		rec("modsecurity", 1, 10_200_000, 1_200_000, map[string]int64{callgrind.CatModule: 60_000, callgrind.CatCallbacks: 40_000,
			callgrind.CatEngine: 8_000_000, callgrind.CatAlloc: 900_000}),
		rec("modsecurity", 2, 10_200_000, 1_200_000, map[string]int64{callgrind.CatModule: 60_000, callgrind.CatCallbacks: 40_000,
			callgrind.CatEngine: 8_000_000, callgrind.CatAlloc: 900_000}),
		// adds 1 M; glue 40 k (4%) in repeat 1, 60 k (6%) in repeat 2
		rec("coraza", 1, 2_000_000, 1_100_000, map[string]int64{callgrind.CatModule: 20_000, callgrind.CatCgo: 20_000, callgrind.CatEngine: 860_000}),
		rec("coraza", 2, 2_000_000, 1_100_000, map[string]int64{callgrind.CatModule: 30_000, callgrind.CatCgo: 30_000, callgrind.CatEngine: 840_000}),
	}
	w := stats.WorkloadKey{Workload: "headers", Conns: 1}
	fig := &figures{Records: recs, Summary: &stats.Summary{Modes: []string{"passthrough", "modsecurity", "coraza"}, Workloads: []stats.WorkloadKey{w}}}
	m := &md{}
	writeInstructionAccount(m, fig)
	got := m.b.String()
	for _, want := range []string{
		"## Cost account (instructions)",
		"| category | `modsecurity` Ir/req | share | `coraza` Ir/req | share |",
		"| our module | 6 000 | 0.67% | 2 500 | 2.78% |",
		"| engine | 800 000 | 88.89% | 85 000 | 94.44% |",
		"| other | 0 | 0.00% | 0 | 0.00% |",
		"| **inside hooks** | 900 000 | 100% | 90 000 | 100% |",
		"| `modsecurity` | headers/c1 | 2 | 10 000 | 920 000 | 1.087% | 1.087–1.087% | yes |",
		"| `coraza` | headers/c1 | 2 | 5 000 | 100 000 | 5.000% | 4.000–6.000% | not established |",
		"- `modsecurity`: our glue is ≤ 5% of what the WAF adds on every workload counted (largest share of any repeat 1.087%).",
		"- `coraza`: not established on every workload counted: some repeats' shares are above 5%, others not (largest 6.000%).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "| Go runtime |") {
		t.Errorf("a category no mode has is shown:\n%s", got)
	}
	m = &md{}
	writeInstructionAccount(m, &figures{Records: recs[:2], Summary: fig.Summary})
	if m.b.Len() != 0 {
		t.Errorf("no accounts: want no section, got\n%s", m.b.String())
	}
}

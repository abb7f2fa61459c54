package report

import (
	"strings"
	"testing"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// verdictRecs are n repeats of passthrough, modsecurity and coraza on
// headers@16 with the given modsecurity/coraza CPU ratio and ±2 % noise.
func verdictRecs(n int, ratio float64) []result.Record {
	var out []result.Record
	for r := 1; r <= n; r++ {
		jit := 1 + 0.02*float64(r%3-1)
		for i, m := range []struct {
			mode string
			cpu  float64
		}{{"passthrough", 30}, {"modsecurity", 400 * ratio * jit}, {"coraza", 400}} {
			out = append(out, result.Record{
				Case: result.Case{
					Trial: len(out) + 1, Repeat: r, Position: i + 1, Mode: m.mode, Workload: "headers",
					Conns: 16,
				},
				Window: result.Window{
					ReqPerS: 1e6 / m.cpu, Requests: int64(4e6 / m.cpu), DurationS: 4, WarmupS: 0.5,
					PerSecond: []int64{int64(1e6 / m.cpu), int64(1e6 / m.cpu)},
				},
				CPU: result.CPU{UsPerRequest: m.cpu},
			})
		}
	}
	return out
}

func TestWriteVerdicts(t *testing.T) {
	meta := &result.Meta{Modes: []string{"passthrough", "modsecurity", "coraza"}, Workloads: []string{"headers@16"},
		StartedUTC: "2026-12-01T00:00:00Z", FinishedUTC: "2026-12-01T00:01:00Z", Flags: map[string]string{"trial-warmup": "1s"}}
	tests := []struct {
		name  string
		n     int
		want  []string
		avoid []string
	}{
		{"n=3 not established, repeats named", 3, []string{
			"engine vs engine: **0 of 3** established",
			"| engine vs engine | modsecurity/coraza | CPU µs/req | headers/c16 | 3 | 1.500 | [1.427, 1.576] | n=3 < 4 paired repeats | 4 (≈",
			"Not established although the ratio lies outside [0.9, 1.1]",
		}, nil},
		{"n=6 established", 6, []string{
			"engine vs engine: **3 of 3** established",
			"Every comparison whose ratio lies outside [0.9, 1.1] is established.",
		}, []string{"Not established although"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := verdictRecs(tt.n, 1.5)
			m := &md{}
			writeVerdicts(m, &figures{Meta: meta, Records: recs, Summary: stats.Summarize(recs)})
			got := m.b.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("verdicts section lacks %q:\n%s", w, got)
				}
			}
			for _, a := range tt.avoid {
				if strings.Contains(got, a) {
					t.Errorf("verdicts section has %q:\n%s", a, got)
				}
			}
		})
	}
}

// TestWriteBrief: the report opens with every CPU ratio in words and in a
// narrow table, verdicts and the repeats a verdict would need included,
// then the CPU chart; a run of one repeat gets the words only.
func TestWriteBrief(t *testing.T) {
	meta := &result.Meta{Modes: []string{"passthrough", "modsecurity", "coraza"}, Workloads: []string{"headers@16"}}
	tests := []struct {
		name  string
		n     int
		want  []string
		avoid []string
	}{
		{"one repeat", 1, []string{
			briefHeading,
			"`modsecurity` uses 1.500 (headers/c16) times the CPU per request of `coraza`; one repeat: no interval, no verdict.",
		}, []string{"| workload |"}},
		{"n=3 not established", 3, []string{
			"`modsecurity` uses 1.500 (headers/c16) times the CPU per request of `coraza` — not established on any of 1 workload.",
			"| workload | modsecurity ÷ coraza | verdict |\n| --- | --- | --- |\n| headers/c16 | 1.500 [1.427, 1.576] | not established (≈ 4 repeats) |\n",
		}, []string{"**higher**"}},
		{"n=6 established", 6, []string{
			"`modsecurity` uses 19.997 [19.625, 20.376] times the CPU per request of `passthrough` on headers/c16 — established.",
			"| headers/c16 | 1.500 [1.472, 1.528] | **higher** |",
			"| workload | coraza ÷ passthrough | verdict |",
		}, []string{"not established"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := verdictRecs(tt.n, 1.5)
			s := stats.Summarize(recs)
			m := &md{}
			writeBrief(m, &figures{Meta: meta, Records: recs, Summary: s, Brief: analyseBrief(s), Charts: []string{"throughput.svg", "cpu.svg"}})
			got := m.b.String()
			for _, w := range append(tt.want, "![cpu](charts/cpu.svg)") {
				if !strings.Contains(got, w) {
					t.Errorf("brief lacks %q:\n%s", w, got)
				}
			}
			for _, a := range append(tt.avoid, "throughput.svg") {
				if strings.Contains(got, a) {
					t.Errorf("brief has %q:\n%s", a, got)
				}
			}
		})
	}
}

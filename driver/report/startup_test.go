package report

import (
	"strings"
	"testing"

	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// TestWriteStartupWasm builds records of coraza and coraza-wasm over three
// repeats, with the Wasm filter 2× the CPU, 5× the RSS and 100× the
// start-up of the native module, and checks the section's ratios.
func TestWriteStartupWasm(t *testing.T) {
	var recs []result.Record
	trial := 0
	for rep := range 3 {
		for _, mode := range []string{modes.Coraza, modes.CorazaWasm} {
			cpu, rss, start := 100.0, int64(100<<10), 300.0
			if mode == modes.CorazaWasm {
				cpu, rss, start = 200, 500<<10, 30000
			}
			jitter := 1 + 0.01*float64(rep)
			recs = append(recs, result.Record{
				Case: result.Case{Trial: trial, Repeat: rep, Mode: mode, Workload: "headers", Conns: 16},
				Window: result.Window{
					DurationS: 10, Requests: 1000, ReqPerS: 1e6 / cpu * jitter, ExpectStatus: 200,
					Statuses: map[string]int64{"200": 1000},
				},
				CPU:     result.CPU{UsPerRequest: cpu * jitter},
				Memory:  result.Memory{RSSAfterWarmupKiB: rss, RSSEndKiB: int64(float64(rss) * jitter), PeakKiB: rss},
				Startup: &result.Startup{ListenerReadyMs: start * jitter},
			})
			trial++
		}
	}
	s := stats.Summarize(recs)
	m := &md{}
	writeStartup(m, &figures{Records: recs, Summary: s})
	out := m.b.String()
	for _, want := range []string{
		"## Start-up and memory",
		"| `coraza-wasm` | 3 | 30.30 | – | 500 | 505 | 500 |",
		"### coraza-wasm / coraza",
		"| CPU µs/req | headers/c16 | 3 | 2.000 [2.000, 2.000] |",
		"| RSS at end | headers/c16 | 3 | 5.000 [5.000, 5.000] |",
		"| start-up | per trial | 3 | 100.000 [100.000, 100.000] |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteStartupNone(t *testing.T) {
	m := &md{}
	writeStartup(m, &figures{Records: []result.Record{{Case: result.Case{Mode: modes.Coraza, Workload: "headers", Conns: 1}}}, Summary: &stats.Summary{}})
	if m.b.Len() != 0 {
		t.Errorf("wrote %q for records without start-up times", m.b.String())
	}
}

// Two workloads of one trial are one Envoy: the sentence counts trials.
func TestWritePerCPUCaches(t *testing.T) {
	on, off := true, false
	var recs []result.Record
	for trial, v := range []*bool{&off, &off, &on, nil} {
		for _, w := range []string{"headers", "json_4k"} {
			recs = append(recs, result.Record{
				Case:    result.Case{Trial: trial, Mode: modes.ModSecurity, Workload: w},
				Startup: &result.Startup{ListenerReadyMs: 100, TcmallocPerCPU: v},
			})
		}
	}
	m := &md{}
	writePerCPUCaches(m, recs)
	if want := "per-CPU caches in 1 of 3 Envoy trials"; !strings.Contains(m.b.String(), want) {
		t.Errorf("wrote %q, want %q", m.b.String(), want)
	}
	m = &md{}
	writePerCPUCaches(m, recs[6:])
	if m.b.Len() != 0 {
		t.Errorf("wrote %q for trials that did not record it", m.b.String())
	}
}

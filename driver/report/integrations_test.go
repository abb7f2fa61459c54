package report

import (
	"strings"
	"testing"

	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// integrationRecords are three repeats of coraza in four integrations on
// one workload: the module at 100 µs of Envoy CPU, coraza-wasm at 500,
// coraza-extproc at 60 in Envoy and 90 in the server (1.5× the module in
// all), coraza-extauthz at 50 + 70 (1.2×); memory and start-up likewise.
func integrationRecords() []result.Record {
	type spec struct {
		envoy, server   float64
		rss, serverRSS  int64
		start, srvStart float64
		p99             float64
	}
	specs := map[string]spec{
		modes.Coraza:         {100, 0, 100 << 10, 0, 300, 0, 1000},
		modes.CorazaWasm:     {500, 0, 600 << 10, 0, 30000, 0, 5000},
		modes.CorazaExtProc:  {60, 90, 50 << 10, 100 << 10, 200, 250, 2000},
		modes.CorazaExtAuthz: {50, 70, 50 << 10, 50 << 10, 200, 250, 1500},
	}
	var recs []result.Record
	trial := 0
	for rep := range 3 {
		for _, mode := range []string{modes.Coraza, modes.CorazaWasm, modes.CorazaExtProc, modes.CorazaExtAuthz} {
			s := specs[mode]
			j := 1 + 0.01*float64(rep)
			r := result.Record{
				Case: result.Case{Trial: trial, Repeat: rep, Mode: mode, Workload: "headers", Conns: 16},
				Window: result.Window{
					DurationS: 10, Requests: 1000, ReqPerS: 1000, ExpectStatus: 200,
					Statuses: map[string]int64{"200": 1000},
					Latency:  result.Latency{P50Us: s.p99 / 2, P99Us: s.p99 * j},
				},
				CPU:     result.CPU{UsPerRequest: s.envoy * j},
				Memory:  result.Memory{RSSEndKiB: int64(float64(s.rss) * j)},
				Startup: &result.Startup{ListenerReadyMs: s.start * j},
			}
			if s.server > 0 {
				r.Sidecar = &result.Sidecar{Integration: string(modes.IntegrationOf(mode)), Process: "wafbench-extproc",
					Transport: "uds", Placement: "envoy", CPUs: []int{0}, FailureModeAllow: mode == modes.CorazaExtAuthz,
					CPU: result.CPU{UsPerRequest: s.server * j}, Memory: result.Memory{RSSEndKiB: int64(float64(s.serverRSS) * j)},
					ReadyMs: s.srvStart * j}
			}
			recs = append(recs, r)
			trial++
		}
	}
	return recs
}

func TestBuildIntegrations(t *testing.T) {
	recs := integrationRecords()
	model := buildIntegrations(recs, stats.Summarize(recs))
	if model == nil || len(model.Engines) != 1 || model.Engines[0].Engine != modes.Coraza {
		t.Fatalf("model = %+v, want coraza alone", model)
	}
	ways := model.Engines[0].Workloads[0].Ways
	var got []string
	for _, w := range ways {
		got = append(got, string(w.Integration))
	}
	if want := "dynamic module,proxy-wasm,ext_proc,ext_authz"; strings.Join(got, ",") != want {
		t.Fatalf("integrations %v, want %s", got, want)
	}
	tests := []struct {
		way                   int
		cpu, p99, rss, start  float64
		total, server, envoyC float64
	}{
		{1, 5, 5, 6, 100, 505, 0, 505},
		{2, 1.5, 2, 1.5, 1.5, 151.5, 90.9, 60.6},
		{3, 1.2, 1.5, 1, 1.5, 121.2, 70.7, 50.5},
	}
	near := func(a, b float64) bool { return a > b*0.999 && a < b*1.001 }
	for _, tt := range tests {
		w := ways[tt.way]
		if w.CPURatio == nil || !near(w.CPURatio.Geo, tt.cpu) || !near(w.P99Ratio.Geo, tt.p99) || !near(w.RSSRatio.Geo, tt.rss) || !near(w.StartupRatio.Geo, tt.start) {
			t.Errorf("%s: ratios cpu %+v p99 %+v rss %+v start %+v, want %v %v %v %v", w.Mode, w.CPURatio, w.P99Ratio, w.RSSRatio, w.StartupRatio, tt.cpu, tt.p99, tt.rss, tt.start)
		}
		if !near(w.TotalCPU, tt.total) || (tt.server > 0 && !near(w.ServerCPU, tt.server)) || !near(w.EnvoyCPU, tt.envoyC) {
			t.Errorf("%s: CPU envoy %.1f server %.1f total %.1f, want %.1f %.1f %.1f", w.Mode, w.EnvoyCPU, w.ServerCPU, w.TotalCPU, tt.envoyC, tt.server, tt.total)
		}
		if w.CPURatio.N != 3 {
			t.Errorf("%s: %d pairs, want 3", w.Mode, w.CPURatio.N)
		}
	}
	if ways[0].CPURatio != nil {
		t.Errorf("the module has a ratio against itself")
	}
}

func TestWriteIntegrations(t *testing.T) {
	recs := integrationRecords()
	m := &md{}
	writeIntegrations(m, &figures{Records: recs, Summary: stats.Summarize(recs)})
	out := m.b.String()
	for _, want := range []string{
		"## One engine, four ways",
		"### coraza",
		"| headers/c16 | dynamic module | `coraza` | 3 | 101.0 | – | 101.0 | – |",
		"| headers/c16 | ext_proc | `coraza-extproc` | 3 | 60.6 | 90.9 | 151.5 | 1.500 [1.500, 1.500] |",
		"| headers/c16 | ext_authz (fail open) | `coraza-extauthz` |",
		"The server ran ext_authz over uds on Envoy's CPUs, failing open (failure_mode_allow); ext_proc over uds on Envoy's CPUs, failing closed.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	// A run without the module, or with the module alone, has no section.
	for _, keep := range []string{modes.Coraza, modes.CorazaExtProc} {
		var some []result.Record
		for _, r := range recs {
			if r.Mode == keep {
				some = append(some, r)
			}
		}
		m := &md{}
		writeIntegrations(m, &figures{Records: some, Summary: stats.Summarize(some)})
		if m.b.Len() != 0 {
			t.Errorf("records of %s alone: wrote %q", keep, m.b.String())
		}
	}
}

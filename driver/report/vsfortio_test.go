package report

import (
	"strings"
	"testing"
)

// vsFortioRaw is the loadgen.jsonl of a scripts/vs-fortio.sh run of one
// pair: a closed-loop and an open-loop pair.
const vsFortioRaw = `{"kind": "header", "command": "scripts/vs-fortio.sh 1 16 2 /safe", "started_utc": "2026-12-04T19:38:27Z", "pairs": 1, "conns": [16], "seconds": 2, "path": "/safe", "reference": "fortio", "reference_version": "1.68.2", "open_rate_per_s": 4000, "envoy_cpus": "0", "client_cpus": "1", "cpu_method": "user+sys", "startup_method": {"fortio": "fortio load -n 1 -c 1", "wafbench": "one request"}, "notes": ["busy machine"]}
{"kind": "window", "tool": "fortio", "load": "closed", "rate_per_s": 4000, "conns": 16, "pair": 1, "position": 1, "seconds": 2, "client_cpu_s": 0.2, "startup_cpu_s": 0.01, "startup_requests": 1, "requests": 16001, "errors": 0, "req_per_s": 8000, "p50_us": 600, "p90_us": 1000, "p99_us": 2000}
{"kind": "window", "tool": "wafbench", "load": "closed", "rate_per_s": 4000, "conns": 16, "pair": 1, "position": 2, "seconds": 2, "client_cpu_s": 0.13, "startup_cpu_s": 0.01, "startup_requests": 1, "requests": 16001, "errors": 0, "req_per_s": 8000, "p50_us": 630, "p90_us": 1100, "p99_us": 2200, "window_cpu_us_per_req": 7.5}
{"kind": "window", "tool": "fortio", "load": "open", "rate_per_s": 4000, "conns": 16, "pair": 1, "position": 1, "seconds": 2, "client_cpu_s": 0.33, "startup_cpu_s": 0.01, "startup_requests": 1, "requests": 8001, "errors": 0, "req_per_s": 4000, "p50_us": 400, "p90_us": 800, "p99_us": 1600}
{"kind": "window", "tool": "wafbench", "load": "open", "rate_per_s": 4000, "conns": 16, "pair": 1, "position": 2, "seconds": 2, "client_cpu_s": 0.25, "startup_cpu_s": 0.01, "startup_requests": 1, "requests": 8001, "errors": 0, "req_per_s": 4000, "p50_us": 500, "p90_us": 1000, "p99_us": 3000, "from_send_p50_us": 420, "from_send_p90_us": 840, "from_send_p99_us": 1800, "own_p50_us": 20, "own_p90_us": 40, "own_p99_us": 900}
`

// vsFortioGoTimerRaw adds to vsFortioRaw a wafbench open-loop window
// paced by Go timers and a wake-up probe.
const vsFortioGoTimerRaw = vsFortioRaw + `{"kind": "window", "tool": "wafbench", "load": "open", "pacer": "go-timer", "rate_per_s": 4000, "conns": 16, "pair": 1, "position": 3, "seconds": 2, "client_cpu_s": 0.29, "startup_cpu_s": 0.01, "startup_requests": 1, "requests": 8001, "errors": 0, "req_per_s": 4000, "p50_us": 900, "p90_us": 1500, "p99_us": 3000, "from_send_p50_us": 380, "from_send_p90_us": 760, "from_send_p99_us": 1600, "own_p50_us": 300, "own_p90_us": 700, "own_p99_us": 1000}
{"kind": "window", "tool": "wafbench", "load": "wake-probe", "pacer": "timerfd", "rate_per_s": 1000, "conns": 1, "pair": 1, "position": 4, "seconds": 2, "client_cpu_s": 0.05, "startup_cpu_s": 0, "startup_requests": 0, "requests": 2000, "errors": 0, "req_per_s": 1000, "p50_us": 250, "p90_us": 300, "p99_us": 500, "from_send_p50_us": 220, "from_send_p90_us": 260, "from_send_p99_us": 400, "own_p50_us": 26, "own_p90_us": 35, "own_p99_us": 60}
`

// TestVsFortioGoTimer: wafbench's Go-timer window forms a third table
// against the same fortio window (fortio first: it ran before it), and the
// wake-up probe's own send delay is stated; a run without them (above)
// has neither.
func TestVsFortioGoTimer(t *testing.T) {
	out := vsFortioSection(t, vsFortioGoTimerRaw)
	for _, want := range []string{
		"### Open loop\n",
		"| 1 | fortio | 4000 | 4000 | 1.000 | 40.00 | 30.00 | 0.750 | 400 / 800 / 1600 | 420 / 840 / 1800 |",
		"### Open loop, wafbench paced by Go timers as fortio is",
		// CPU: (0.29−0.01)/8000 ÷ (0.33−0.01)/8000 = 0.875; p50 380 ÷ 400.
		"| 1 | fortio | 4000 | 4000 | 1.000 | 40.00 | 35.00 | 0.875 | 400 / 800 / 1600 | 380 / 760 / 1600 | 0.950 | 0.950 | 1.000 | 900 / 1500 / 3000 | 300 / 700 / 1000 | 0 / 0 |",
		"### Wake-up probe",
		"Median over pairs: p50 26 µs, p90 35 µs.",
		"| 1 | 1000 | 26 / 35 / 60 | 220 / 260 / 400 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	if out := vsFortioSection(t, vsFortioRaw); strings.Contains(out, "Go timers") || strings.Contains(out, "Wake-up probe") {
		t.Errorf("a run without Go-timer windows or probes shows their sections:\n%s", out)
	}
}

// TestVsFortioSection: the closed-loop pair compares wafbench's latency as
// measured; the open-loop pair compares its latency from the actual write
// with fortio's and shows the one from the intended time and its own send
// delay beside; CPU ratios are net of start-up.
func TestVsFortioSection(t *testing.T) {
	out := vsFortioSection(t, vsFortioRaw)
	for _, want := range []string{
		"## Load engine vs fortio",
		"closed loop and open loop at 4000 req/s",
		"### Closed loop",
		// CPU: (0.13−0.01)/16000 ÷ (0.2−0.01)/16000 = 0.632.
		"| 1 | fortio | 8000 | 8000 | 1.000 | 11.88 | 7.50 | 0.632 | 600 / 1000 / 2000 | 630 / 1100 / 2200 | 1.050 | 1.100 | 1.100 | 0 / 0 |",
		"### Open loop",
		"| 1 | fortio | 4000 | 4000 | 1.000 | 40.00 | 30.00 | 0.750 | 400 / 800 / 1600 | 420 / 840 / 1800 | 1.050 | 1.050 | 1.125 | 500 / 1000 / 3000 | 20 / 40 / 900 | 0 / 0 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
}

// vsFortioSection is the report section of the loadgen.jsonl raw.
func vsFortioSection(t *testing.T, raw string) string {
	t.Helper()
	h, ws, err := parseLoadgen([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	m := &md{}
	writeLoadgenSection(m, &figures{Loadgen: &loadgenRun{header: h, windows: ws}})
	return m.b.String()
}

package report

import (
	"regexp"
	"strings"
	"testing"

	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// labRecords makes a lab run: three hosts × three paths in both connection
// modes × 5 repeats, every trial's requests at exactly base µs (±1 % by
// repeat; 500 µs more with a new connection per request), so medians and
// ratios are known. nginx takes 4000 µs, Caddy 2000 µs, direct 1000 µs.
func labRecords(t *testing.T) []result.Record {
	t.Helper()
	base := map[string]int64{modes.RefDirect: 1000, modes.RefNginxModSecurity: 4000, modes.RefCaddyCoraza: 2000}
	rss := map[string]int64{modes.RefNginxModSecurity: 60 << 10, modes.RefCaddyCoraza: 50 << 10}
	var recs []result.Record
	trial := 0
	for rep := 1; rep <= 5; rep++ {
		for _, mode := range []string{modes.RefDirect, modes.RefNginxModSecurity, modes.RefCaddyCoraza} {
			trial++
			for pos, w := range []string{"lab_safe_get", "lab_sqli_get", "lab_xss_get", "lab_safe_get_newconn", "lab_sqli_get_newconn", "lab_xss_get_newconn"} {
				us := base[mode] * int64(100+rep%3-1) / 100
				newConn := strings.HasSuffix(w, "_newconn")
				if newConn {
					us += 500
				}
				h := load.NewHistogram()
				for range 200 {
					if err := h.RecordValue(us); err != nil {
						t.Fatal(err)
					}
				}
				enc, err := (&load.Result{Hist: h}).EncodeHist()
				if err != nil {
					t.Fatal(err)
				}
				r := result.Record{
					Case: result.Case{
						Trial: trial, Repeat: rep, Position: pos + 1, Mode: mode, Workload: w, Conns: 1,
						Load: "closed",
					},
					Window: result.Window{
						Requests: 200, ReqPerS: 1e6 / float64(us), HistBase64: enc,
						Latency: result.Latency{P50Us: float64(us), P95Us: float64(us), P99Us: float64(us)},
					},
				}
				if newConn {
					r.ConnMode = string(load.ConnPerRequest)
				}
				if mode != modes.RefDirect {
					r.CPU.UsPerRequest = float64(us) / 2
					r.Memory = result.Memory{RSSAfterWarmupKiB: rss[mode], RSSEndKiB: rss[mode] + 1024, PeakKiB: rss[mode] + 2048}
				}
				recs = append(recs, r)
			}
		}
	}
	return recs
}

// internalName matches the project's internal names for documents and the
// benchmarks it reproduces, which a report must not use.
var internalName = regexp.MustCompile(`(?i)\bseed [AB]\b|\bdesign[ .](md|brief)\b|\banchor\b`)

func TestWriteLab(t *testing.T) {
	recs := labRecords(t)
	s := stats.Summarize(recs)
	var m md
	writeLab(&m, &figures{Lab: analyseLab(&result.Meta{Suite: "seed"}, recs, s)})
	if m.b.Len() != 0 {
		t.Fatalf("a non-lab suite got a lab section:\n%s", m.b.String())
	}
	writeLab(&m, &figures{Lab: analyseLab(&result.Meta{Suite: labSuite, Upstream: "go-httpbin v2.21.0"}, recs, s)})
	got := m.b.String()
	for _, want := range []string{
		"## The Docker lab, reproduced",
		"upstream: **go-httpbin v2.21.0**",
		// nginx's pooled median over trials: 4000 µs ±1 % by repeat
		// (4.001: the HDR histogram's bucket at 3 significant digits).
		"|  | *all paths, keep-alive* | 5 | 4.001 |",
		"|  | *all paths, new connection per request* | 5 | 4.503 |",
		// Beside the lab, with a new connection per request as curl: nginx
		// adds 3 ms to direct (4.5 − 1.5), the lab 2.973 ms; ratio 3.
		"| `ref-nginx-modsecurity` (nginx + ModSecurity 3.0.16) | 3.956 | 5.518 | 4.503 [4.463, 4.543] | 4.503 [4.463, 4.543] | 2.973 | 3.003 [2.973, 3.033] | 4.02 | 3.00 |",
		// Peak RSS: 62 MiB beside the lab's 68.85; 62/52 = 1.192.
		"| `ref-nginx-modsecurity` | 5 | 60.0 [60.0, 60.0] | 61.0 [61.0, 61.0] | 62.0 [62.0, 62.0] | 68.85 |",
		// The lab's open question, answered: nginx / Caddy = 2.
		"| Is nginx + ModSecurity slower than Caddy + Coraza? | `ref-nginx-modsecurity` / `ref-caddy-coraza` | median latency | lab_safe_get/c1 | 5 | 2.000 |",
		"**established**: `ref-nginx-modsecurity` higher (×2.00)",
		"| 5 | 1.499 | [1.494, 1.504] | [1.495, 1.505] | <0.0001 | **established**: new connection per request higher (×1.50) |",
		"| Does Caddy + Coraza hold less memory than nginx + ModSecurity? | `ref-nginx-modsecurity` / `ref-caddy-coraza` | peak RSS | whole trial | 5 | 1.192 |",
		// The same process with a new connection per request: direct 1.5/1.0.
		"| What does a new connection per request add (as curl did)? | `ref-direct` | median latency | new connection per request / keep-alive | 5 | 1.499 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lab section lacks %q", want)
		}
	}
	// The lab's figures are an external study's published values, named
	// as such; the section cites no file of this repository for them.
	for _, want := range []string{"the published figures of the WAFWiki Docker lab, a comparison of NGINX + ModSecurity 3.0.16 and Caddy 2.11.2 + Coraza 3.7.0 over CRS 4.25, an external reference",
		"none of its files are in this repository"} {
		if !strings.Contains(got, want) {
			t.Errorf("lab section lacks %q", want)
		}
	}
	if bad := internalName.FindString(got); bad != "" {
		t.Errorf("lab section says %q, a name that is not public", bad)
	}
	if t.Failed() {
		t.Logf("section:\n%s", got)
	}
}

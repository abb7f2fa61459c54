//go:build integration

package e2e

import (
	"testing"

	"wafbench/driver/envoy"
)

// TestNoRSSGrowth sends the same request many times through the ModSecurity
// module and requires Envoy's resident memory to stay flat once warm. It
// guards the leak the benchmark's own report found: with the phase-1 deny
// ahead of CRS initialization, libmodsecurity 3.0.9 kept ~670 bytes per
// blocked request (10k requests → ~6.5 MiB). A warm Envoy with this module
// keeps its RSS within a few hundred KiB, so the bound is not noise-prone.
//
// Coraza is left to the harness's long-run reports: its Go heap moves in a
// ±5 MiB garbage-collection sawtooth (seen over 100k-request windows with no
// trend), which a 10k-request check cannot tell from a leak.
func TestNoRSSGrowth(t *testing.T) {
	const limitKiB = 2048
	form := append(append([][2]string{}, baseHeaders...), [2]string{"Content-Type", "application/x-www-form-urlencoded"})
	cases := []struct {
		name           string
		req            request
		want           int
		warm, measured int
	}{
		{"phase1_block", request{Method: "GET", Target: "/safe",
			Headers: append(append([][2]string{}, baseHeaders...), [2]string{"X-WAF-Benchmark", "phase1-block"})}, 403, 2000, 10000},
		{"blocked_sqli", request{Method: "POST", Target: "/attack", Headers: form, Body: []byte("user=1234+OR+1%3D1")}, 403, 1000, 5000},
		{"headers", request{Method: "GET", Target: "/safe", Headers: baseHeaders}, 200, 1000, 5000},
	}
	for _, mode := range []envoy.Mode{envoy.ModSecurity} {
		for _, tc := range cases {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				warm, measured := tc.warm, tc.measured
				p := proxy(t, mode)
				c := dial(t, mode)
				defer c.Close()
				raw := tc.req.bytes()
				send := func(n int) {
					for i := range n {
						resp, err := c.do(tc.req.Method, raw)
						if err != nil {
							t.Fatalf("request %d: %v", i, err)
						}
						if resp.Status != tc.want {
							t.Fatalf("request %d: status %d, want %d", i, resp.Status, tc.want)
						}
					}
				}
				send(warm)
				before, err := vmRSS(p.PID)
				if err != nil {
					t.Fatal(err)
				}
				send(measured)
				after, err := vmRSS(p.PID)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s %s: VmRSS %d KiB -> %d KiB over %d requests (%+.0f bytes/request)",
					mode, tc.name, before, after, measured, float64(after-before)*1024/float64(measured))
				if after-before > limitKiB {
					t.Errorf("VmRSS grew %d KiB over %d %s requests (limit %d KiB): a per-request leak",
						after-before, measured, tc.name, limitKiB)
				}
			})
		}
	}
}

//go:build integration

package runner

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"wafbench/driver/modes"
	"wafbench/driver/procstat"
	"wafbench/driver/slowclient"
	"wafbench/internal/http1"
)

func slowRequest(method, target string, body []byte, extra ...[2]string) ([]byte, int) {
	hs := [][2]string{{"Host", "bench.local"}, {"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}}
	if body != nil {
		hs = append(hs, [2]string{"Content-Type", "application/x-www-form-urlencoded"})
	}
	hs = append(hs, extra...)
	raw := http1.AppendRequest(nil, method, target, hs, body)
	return raw, bytes.Index(raw, []byte("\r\n\r\n")) + 4
}

// TestSlowClients sends slow heads and slow bodies through every mode (real
// Envoy, real modules, real CRS): an attack that arrives a few bytes at a
// time is still denied; an attack body that stops mid-way is never answered
// 200; 16 connections held mid-body keep Envoy's RSS growth within 64 MiB.
// Envoy's client timeouts (driver/envoy ClientTimeouts, the shortest 10 s)
// are longer than these exchanges: the client's bound (MaxWait) ends the
// stalled ones here; TestSlowSuite sees Envoy's timeouts end them.
func TestSlowClients(t *testing.T) {
	cfg := setup(t, []string{modes.Passthrough, modes.ModSecurity, modes.Coraza}, []string{"headers@1"}, 1, 1)
	ctx := context.Background()
	sess, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	attackBody := []byte("user=1234+OR+1%3D1")
	for _, mode := range []string{modes.Passthrough, modes.ModSecurity, modes.Coraza} {
		h, err := sess.Start(ctx, mode, "slow-"+mode)
		if err != nil {
			t.Fatal(err)
		}
		waf := modes.IsWAF(mode)
		want := 200
		if waf {
			want = 403
		}
		// Slow head: the XSS in the query arrives 4 bytes every 2 ms.
		raw, hl := slowRequest("GET", "/search?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E", nil)
		r, err := slowclient.Send(ctx, h.Addr, raw, hl, slowclient.Plan{HeadChunk: 4, Interval: 2 * time.Millisecond, StopAfter: -1, MaxWait: 20 * time.Second})
		if err != nil || r.Answer.Status != want {
			t.Errorf("%s slow head attack: answer %s (err %v), want %d", mode, r.Answer.Label(), err, want)
		}
		// Slow body: the SQL injection one byte every 2 ms.
		raw, hl = slowRequest("POST", "/attack", attackBody)
		r, err = slowclient.Send(ctx, h.Addr, raw, hl, slowclient.Plan{BodyChunk: 1, Interval: 2 * time.Millisecond, StopAfter: -1, MaxWait: 20 * time.Second})
		if err != nil || r.Answer.Status != want {
			t.Errorf("%s slow body attack: answer %s (err %v), want %d", mode, r.Answer.Label(), err, want)
		}
		// A body that stops mid-way: the attack is sent, the padding the
		// Content-Length promises never comes. No WAF may answer 200.
		stalled := append(append([]byte(nil), attackBody...), []byte("&pad="+strings.Repeat("a", 2000))...)
		raw, hl = slowRequest("POST", "/attack", stalled)
		r, err = slowclient.Send(ctx, h.Addr, raw, hl, slowclient.Plan{StopAfter: len(attackBody) + 5, MaxWait: 2 * time.Second})
		if err != nil {
			t.Errorf("%s stalled body: %v", mode, err)
		}
		if r.Answer.Status == 200 {
			t.Errorf("%s stalled attack body answered 200", mode)
		}
		t.Logf("%s stalled body: answer %s after %v", mode, r.Answer.Label(), r.Elapsed.Round(time.Millisecond))

		// Memory held by 16 connections stalled mid-body (16 KiB of 64 KiB).
		before, err := procstat.Sample(h.PID)
		if err != nil {
			t.Fatal(err)
		}
		big := []byte("v=" + strings.Repeat("b", 64<<10))
		raw, hl = slowRequest("POST", "/form", big)
		const held = 16
		var sent, done sync.WaitGroup
		release, cancel := context.WithCancel(ctx)
		sent.Add(held)
		done.Add(held)
		answers := make([]string, held)
		for i := 0; i < held; i++ {
			go func(i int) {
				defer done.Done()
				once := sync.OnceFunc(sent.Done)
				r, _ := slowclient.Send(release, h.Addr, raw, hl, slowclient.Plan{BodyChunk: 4096, StopAfter: 16 << 10, MaxWait: 30 * time.Second, OnSent: once})
				once()
				answers[i] = r.Answer.Label()
			}(i)
		}
		sent.Wait()
		during, err := procstat.Sample(h.PID)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		done.Wait()
		growth := float64(during.RSSKiB-before.RSSKiB) / 1024
		t.Logf("%s: %d connections held mid-body: RSS %d → %d KiB (%+.1f MiB)", mode, held, before.RSSKiB, during.RSSKiB, growth)
		if growth > 64 {
			t.Errorf("%s: RSS grew %.1f MiB holding %d stalled bodies, want ≤ 64", mode, growth, held)
		}
		for i, a := range answers {
			if a == "200" {
				t.Errorf("%s: stalled body %d answered 200 before it was complete", mode, i)
			}
		}
		h.Stop()
	}
}

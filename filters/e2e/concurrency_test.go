package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"wafbench/envoy"
)

// TestTwoWorkers runs each WAF module in an Envoy with two worker threads,
// which share one filter config (one rule set) across workers, and sends
// benign and attack requests from many connections at once: every verdict
// must be right and the module's counters must add up exactly.
func TestTwoWorkers(t *testing.T) {
	const conns, perConn = 8, 20
	for _, mode := range wafModes {
		t.Run(string(mode), func(t *testing.T) {
			if fx.setupE != nil {
				t.Fatalf("e2e fixture: %v", fx.setupE)
			}
			p, err := startEnvoyWorkers(mode, 2, string(mode)+"-2workers")
			if err != nil {
				t.Fatalf("envoy %s --concurrency 2: %v", mode, err)
			}
			defer p.Stop(5 * time.Second)
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			for c := 0; c < conns; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					errs <- drive(p.ListenerAddr, c, perConn)
				}(c)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			raw, err := p.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all, err := envoy.ParseStats(raw)
			if err != nil {
				t.Fatal(err)
			}
			prefix := "dynamicmodulescustom.wafbench_" + string(mode) + "_"
			want := map[string]int64{"requests": conns * perConn, "blocked_phase2": conns * perConn / 2, "engine_errors": 0}
			for k, v := range want {
				if got := all[prefix+k]; got != v {
					t.Errorf("%s%s = %d, want %d", prefix, k, got, v)
				}
			}
			// Both workers served: Envoy names each worker's listener stats.
			served := 0
			for k, v := range all {
				if strings.HasPrefix(k, "listener.") && strings.Contains(k, ".worker_") && strings.HasSuffix(k, ".downstream_cx_total") && v > 0 {
					served++
				}
			}
			if served < 2 {
				t.Logf("connections landed on %d worker(s) only; the counters still had to add up", served)
			}
		})
	}
}

// drive sends n requests on one connection, alternating a benign GET and
// an SQL injection in a form body, and checks each status. A blocked
// request may close the connection (Envoy's codec after a local reply), so
// it reconnects when it must.
func drive(addr string, id, n int) error {
	base := [][2]string{{"Host", "bench.local"}, {"User-Agent", "wafbench-e2e/1.0"}, {"Accept", "*/*"}}
	benign := Request{Method: "GET", Target: fmt.Sprintf("/safe?c=%d", id), Headers: base}.Bytes()
	attack := Request{Method: "POST", Target: "/attack", Body: []byte("user=1234+OR+1%3D1"),
		Headers: append(append([][2]string(nil), base...), [2]string{"Content-Type", "application/x-www-form-urlencoded"})}.Bytes()
	var c *Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		if c == nil {
			var err error
			if c, err = Dial(addr, 30*time.Second); err != nil {
				return fmt.Errorf("conn %d: %v", id, err)
			}
		}
		raw, want, method := benign, 200, "GET"
		if i%2 == 1 {
			raw, want, method = attack, 403, "POST"
		}
		resp, err := c.Do(method, raw)
		if err != nil {
			return fmt.Errorf("conn %d request %d: %v", id, i, err)
		}
		if resp.Status != want {
			return fmt.Errorf("conn %d request %d: status %d, want %d", id, i, resp.Status, want)
		}
		if strings.EqualFold(resp.Header.Get("Connection"), "close") {
			c.Close()
			c = nil
		}
	}
	return nil
}

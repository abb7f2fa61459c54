//go:build integration

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wafbench/driver/envoy"
)

// TestTwoWorkers runs each WAF module in an Envoy with two worker threads,
// which share one filter config (one rule set) across workers, and sends
// benign and attack requests from many connections at once, half of them
// accepted by each worker: every verdict must be right, the module's
// counters must add up exactly, and each worker's listener stats must show
// the connections it served.
func TestTwoWorkers(t *testing.T) {
	const workers, perWorker, perConn = 2, 4, 20
	const conns = workers * perWorker
	for _, mode := range wafModes {
		t.Run(string(mode), func(t *testing.T) {
			if fx.setupE != nil {
				t.Fatalf("e2e fixture: %v", fx.setupE)
			}
			p, err := startEnvoyWorkers(mode, workers, string(mode)+"-2workers")
			if err != nil {
				t.Fatalf("envoy %s --concurrency %d: %v", mode, workers, err)
			}
			defer p.Stop(5 * time.Second)
			cs, probes := spreadConns(t, p, workers, perWorker)
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			for i, c := range cs {
				wg.Add(1)
				go func(i int, c *conn) {
					defer wg.Done()
					errs <- drive(p.ListenerAddr, c, i, perConn)
				}(i, c)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			all := processStats(t, p)
			prefix := "dynamicmodulescustom.wafbench_" + string(mode) + "_"
			// Every probe of spreadConns was one benign request too.
			want := map[string]int64{"requests": conns*perConn + int64(probes), "blocked_phase2": conns * perConn / 2, "engine_errors": 0}
			for k, v := range want {
				if got := all[prefix+k]; got != v {
					t.Errorf("%s%s = %d, want %d", prefix, k, got, v)
				}
			}
			got := workerConns(all)
			for w := 0; w < workers; w++ {
				if got[w] < perWorker {
					t.Errorf("worker_%d accepted %d connections, want at least the %d driven on it (per-worker listener stats %v)", w, got[w], perWorker, got)
				}
			}
			t.Logf("%d probe connections; connections accepted per worker: %v", probes, got)
		})
	}
}

// workerStat matches the per-worker listener counter Envoy keeps for the
// proxy's listener: listener.<address>.worker_<n>.downstream_cx_total.
var workerStat = regexp.MustCompile(`^listener\..+\.worker_(\d+)\.downstream_cx_total$`)

// workerConns returns the connections each worker of the proxy's listener
// has accepted, by worker index, from parsed admin stats.
func workerConns(all map[string]int64) map[int]int64 {
	out := map[int]int64{}
	for k, v := range all {
		if strings.HasPrefix(k, "listener.admin.") {
			continue
		}
		if m := workerStat.FindStringSubmatch(k); m != nil {
			w, _ := strconv.Atoi(m[1])
			out[w] += v
		}
	}
	return out
}

// processStats reads p's admin /stats and returns every integer stat.
func processStats(t *testing.T, p *envoy.Process) map[string]int64 {
	t.Helper()
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
	return all
}

// spreadConns opens connections to p's listener, one at a time, until each
// of its workers holds perWorker of them, and returns those connections and
// how many were opened in all. The kernel spreads connections over the
// workers' listen sockets (SO_REUSEPORT, a hash of the client's address and
// port), so which worker gets one is not up to the test: it sends a benign
// request on each new connection (the 200 says Envoy accepted it) and reads
// which worker's downstream_cx_total moved. A connection to a worker that
// already holds enough is closed. Bounded: at most maxProbes connections,
// after which the per-worker counts so far fail the test (with a fair hash,
// 64 connections leave a worker short with probability below 1e-12).
func spreadConns(t *testing.T, p *envoy.Process, workers, perWorker int) ([]*conn, int) {
	t.Helper()
	const maxProbes = 64
	byWorker := make([][]*conn, workers)
	t.Cleanup(func() {
		for _, cs := range byWorker {
			for _, c := range cs {
				c.Close()
			}
		}
	})
	benign := request{Method: "GET", Target: "/safe?probe=1", Headers: baseHeaders}.bytes()
	before := workerConns(processStats(t, p))
	full := func() bool {
		for _, cs := range byWorker {
			if len(cs) < perWorker {
				return false
			}
		}
		return true
	}
	probes := 0
	for ; !full(); probes++ {
		if probes == maxProbes {
			t.Fatalf("after %d connections the workers hold %s, want %d each", probes, holding(byWorker), perWorker)
		}
		c, err := Dial(p.ListenerAddr, 30*time.Second)
		if err != nil {
			t.Fatalf("probe %d: %v", probes, err)
		}
		resp, err := c.do("GET", benign)
		if err != nil || resp.Status != 200 {
			c.Close()
			t.Fatalf("probe %d: benign GET: %+v, %v", probes, resp, err)
		}
		after := workerConns(processStats(t, p))
		var moved []int
		for w := 0; w < workers; w++ {
			if after[w] != before[w] {
				moved = append(moved, w)
			}
		}
		if len(moved) != 1 || after[moved[0]]-before[moved[0]] != 1 {
			c.Close()
			t.Fatalf("probe %d: per-worker accepts went from %v to %v, want one worker +1", probes, before, after)
		}
		before = after
		if w := moved[0]; len(byWorker[w]) < perWorker {
			byWorker[w] = append(byWorker[w], c)
		} else {
			c.Close()
		}
	}
	var out []*conn
	for w := range byWorker {
		out = append(out, byWorker[w]...)
		byWorker[w] = nil // drive owns them now
	}
	return out, probes
}

// holding describes how many connections each worker holds.
func holding(byWorker [][]*conn) string {
	var parts []string
	for w, cs := range byWorker {
		parts = append(parts, fmt.Sprintf("worker_%d: %d", w, len(cs)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// drive sends n requests, starting on connection c, alternating a benign
// GET and an SQL injection in a form body, and checks each status. A
// blocked request may close the connection (Envoy's codec after a local
// reply), so it reconnects when it must. It closes its connection.
func drive(addr string, c *conn, id, n int) error {
	base := [][2]string{{"Host", "bench.local"}, {"User-Agent", "wafbench-e2e/1.0"}, {"Accept", "*/*"}}
	benign := request{Method: "GET", Target: fmt.Sprintf("/safe?c=%d", id), Headers: base}.bytes()
	attack := request{Method: "POST", Target: "/attack", Body: []byte("user=1234+OR+1%3D1"),
		Headers: append(append([][2]string(nil), base...), [2]string{"Content-Type", "application/x-www-form-urlencoded"})}.bytes()
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
		resp, err := c.do(method, raw)
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

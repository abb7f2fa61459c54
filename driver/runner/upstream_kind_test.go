//go:build integration

package runner

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/envoy"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/upstream"
)

// TestGoHTTPBinUpstream starts the real go-httpbin (build/go-httpbin,
// `make modules`) the way a run with --upstream go-httpbin does, pinned,
// and sends every workload of the profiles to it directly (each answers
// what ref-direct expects: 200), and the seed and lab suites' workloads
// through the real Caddy + Coraza host in front of it (each answers what
// ref-caddy-coraza expects: 200, or 403 for the attacks). Three requests per
// workload; counts only.
func TestGoHTTPBinUpstream(t *testing.T) {
	root, err := envoy.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := upstream.GoHTTPBin.Check(root, ""); err != nil {
		t.Fatal(err)
	}
	set, err := profile.LoadDir(filepath.Join(root, "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up, err := startUpstreamKind(ctx, upstream.GoHTTPBin, "", []int{0}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer up.Stop()
	if threads, err := cpu.Verify(up.pid(), []int{0}); err != nil {
		t.Errorf("go-httpbin not pinned to CPU 0: %v (%+v)", err, threads)
	}
	if v, err := upstream.GoHTTPBin.Version(root, ""); err != nil || v != "go-httpbin v2.21.0" {
		t.Errorf("Version: got %q, %v; want go-httpbin v2.21.0", v, err)
	}

	caddyMode := modes.Mode{Name: must(t, modes.RefCaddyCoraza)}
	cfg := &Config{Dir: t.TempDir(), Envoy: EnvoySpec{RulesFile: filepath.Join(root, "build", "crs", "main.conf"), Concurrency: 1},
		Modes: map[string]modes.Mode{caddyMode.String(): caddyMode}}
	p, err := startProxy(ctx, &runner{Config: cfg}, caddyMode.String(), up.Addr, t.TempDir(), "httpbin")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()

	// Every workload of the profiles directly, but the slow-client ones
	// (their 408s are a proxy's client timeouts; here the request goes at
	// once); the seed and lab suites' workloads through Caddy (Coraza takes
	// seconds per request on the largest JSON sweep points).
	var all, suites []string
	for n, w := range set.Workloads {
		if w.Slow == nil {
			all = append(all, n)
		}
	}
	sort.Strings(all)
	for _, name := range []string{"seed", "lab"} {
		cases, err := set.Cases(set.Suites[name].Workloads)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if !slices.Contains(suites, c.Workload.Name) {
				suites = append(suites, c.Workload.Name)
			}
		}
	}
	if len(suites) < 8 {
		t.Fatalf("seed and lab suites list %d workloads: %v", len(suites), suites)
	}
	for _, target := range []struct {
		mode, addr string
		names      []string
	}{{modes.RefDirect, up.Addr, all}, {modes.RefCaddyCoraza, p.Addr, suites}} {
		for _, n := range target.names {
			w := set.Workloads[n]
			t.Run(target.mode+"/"+n, func(t *testing.T) {
				opts := load.Options{Target: target.addr, Conns: 1, Duration: time.Hour, MaxRequests: 3, Timeout: 10 * time.Second}
				if w.IsMix() { // a mix or replay: each class checked against its own status
					classes := set.Classes(w, target.mode)
					opts.MaxRequests = int64(3 * len(classes))
					res, err := load.RunMix(ctx, opts, classes)
					if err != nil {
						t.Fatal(err)
					}
					if res.Requests != opts.MaxRequests || len(res.Errors) != 0 {
						t.Errorf("mix %s: %d valid of %d, statuses %v, errors %v", w.Name, res.Requests, opts.MaxRequests, res.Statuses, res.Errors)
					}
					return
				}
				req := set.Request(w)
				req.ExpectStatus = w.Expected(target.mode)
				res, err := load.Run(ctx, opts, req)
				if err != nil {
					t.Fatal(err)
				}
				if w.MeasureVerdict {
					// An adversarial input's verdict is an outcome (the
					// upstream's own parser may answer 400): every request
					// answered, with any status, is what holds here.
					var answered int64
					for _, n := range res.Statuses {
						answered += n
					}
					for k := range res.Errors {
						if !strings.HasPrefix(k, "status_") {
							t.Errorf("%s %s: errors %v; want every request answered", w.Method, w.FullPath(), res.Errors)
						}
					}
					if answered != 3 {
						t.Errorf("%s %s: %d answered, statuses %v; want 3", w.Method, w.FullPath(), answered, res.Statuses)
					}
					return
				}
				if res.Requests != 3 || len(res.Errors) != 0 {
					t.Errorf("%s %s: %d valid, statuses %v, errors %v; want 3 × %d", w.Method, w.FullPath(), res.Requests, res.Statuses, res.Errors, req.ExpectStatus)
				}
			})
		}
	}
}

func must(t *testing.T, mode string) modes.Name {
	t.Helper()
	n, err := modes.Parse(mode)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

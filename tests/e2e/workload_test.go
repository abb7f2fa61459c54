//go:build integration

package e2e

import (
	"path/filepath"
	"sync"
	"testing"

	"wafbench/driver/profile"
)

// workloadSends is how many times each workload is sent per connection.
const workloadSends = 3

// TestSeedWorkloads sends every workload@conns of the seed suite through
// each mode and checks Workload.Expected(mode). A case with N connections
// opens N persistent connections and sends the request workloadSends times
// on each, concurrently.
func TestSeedWorkloads(t *testing.T) {
	if fx.setupE != nil {
		t.Fatalf("e2e fixture: %v", fx.setupE)
	}
	set, err := profile.LoadDir(filepath.Join(fx.root, "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	suite, ok := set.Suites["seed"]
	if !ok {
		t.Fatal("profiles: no seed suite")
	}
	cases, err := set.Cases(suite.Workloads)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 12 {
		t.Errorf("seed suite: %d cases, want the 12 workloads of the upgle/envoy-modsecurity benchmark", len(cases))
	}
	for _, mode := range fixtureModes {
		t.Run(string(mode), func(t *testing.T) {
			for _, cs := range cases {
				t.Run(cs.Key(), func(t *testing.T) {
					w := cs.Workload
					raw := set.Request(w).Raw // as the driver sends it
					want := w.Expected(string(mode))
					var wg sync.WaitGroup
					errs := make(chan string, cs.Conns*workloadSends)
					for i := 0; i < cs.Conns; i++ {
						c := dial(t, mode)
						wg.Add(1)
						go func() {
							defer wg.Done()
							defer c.Close()
							for j := 0; j < workloadSends; j++ {
								resp, err := c.do(w.Method, raw)
								if err != nil {
									errs <- err.Error()
									return
								}
								if resp.Status != want {
									errs <- "status " + itoa(resp.Status) + ", want " + itoa(want) + ": " + string(resp.Body)
								}
							}
						}()
					}
					wg.Wait()
					close(errs)
					n := 0
					for e := range errs {
						if n++; n <= 3 {
							t.Errorf("%s %s: %s", mode, cs.Key(), e)
						}
					}
				})
			}
		})
	}
}

//go:build integration

package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wafbench/driver/callgrind"
	"wafbench/driver/hosts"
	"wafbench/driver/result"
)

// TestRunCallgrind runs passthrough and modsecurity under callgrind for a
// few requests of headers@1 and checks what run --callgrind records: every
// window answered in full, the whole-process count and, for the module, the
// count with its hooks excluded, where the hooks (libmodsecurity running
// CRS) hold most of Envoy's instructions and Envoy outside them costs about
// what passthrough's whole process does, and the account of the hooks'
// instructions, read from callgrind's real dumps, sums to them. Envoy starts under valgrind in
// 0.5–2 minutes on a busy machine.
func TestRunCallgrind(t *testing.T) {
	if err := callgrind.Available(); err != nil {
		t.Fatal(err)
	}
	root := repoRoot(t)
	meter := filepath.Join(root, "build", "meter")
	if _, err := os.Stat(filepath.Join(meter, "libwafbench_meter.so")); err != nil {
		t.Fatalf("%v: 'make modules' builds the meter", err)
	}
	const warmup, n = 2, 4
	cfg := setup(t, []string{"passthrough", "modsecurity"}, []string{"headers@1"}, 1, 0)
	cfg.Duration, cfg.Timeout = 0, 2*time.Minute
	cfg.Callgrind = &Callgrind{Warmup: warmup, Requests: n, Bound: 5 * time.Minute}
	cfg.Envoy.Callgrind = &hosts.Callgrind{MeterDir: meter, StartTimeout: 10 * time.Minute}
	var log strings.Builder
	cfg.Log = &log
	recs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	per := map[string]float64{}
	for _, r := range recs {
		in := r.Instructions
		if r.Error != "" || in == nil {
			t.Fatalf("%s: error %q, instructions %+v; want counts", r.Mode, r.Error, in)
		}
		if r.Requests != n || in.Requests != n || in.WarmupRequests != warmup {
			t.Errorf("%s: %d requests, counted %d after %d; want %d after %d", r.Mode, r.Requests, in.Requests, in.WarmupRequests, n, warmup)
		}
		if in.Envoy <= 0 {
			t.Errorf("%s: Envoy counted %d instructions", r.Mode, in.Envoy)
		}
		per[r.Mode] = in.EnvoyPerRequest()
		if r.Mode == "passthrough" {
			if in.OutsideHooks != 0 {
				t.Errorf("passthrough: outside hooks %d, want 0 (no module, no second window)", in.OutsideHooks)
			}
			continue
		}
		if in.OutsideHooks <= 0 || in.OutsideHooks >= in.Envoy {
			t.Fatalf("%s: %d instructions outside the hooks of %d in all: want 0 < outside < all", r.Mode, in.OutsideHooks, in.Envoy)
		}
		if share := in.HooksPerRequest() / in.EnvoyPerRequest(); share < 0.5 {
			t.Errorf("%s: hooks hold %.0f%% of Envoy's instructions, want most (CRS runs inside them)", r.Mode, 100*share)
		}
		per["outside"] = in.OutsidePerRequest()
		checkAccount(t, r.Mode, in)
	}
	// Envoy outside the hooks does what passthrough does plus the filter's
	// own plumbing: within a factor of two of passthrough, far below the
	// module's whole count.
	if p, o := per["passthrough"], per["outside"]; o < p/2 || o > 2*p {
		t.Errorf("Envoy outside the hooks %.0f Ir/request, passthrough %.0f: want within 2×", o, p)
	}
	if per["modsecurity"] <= 2*per["passthrough"] {
		t.Errorf("modsecurity %.0f Ir/request, passthrough %.0f: want the WAF to cost more than Envoy itself", per["modsecurity"], per["passthrough"])
	}
}

// checkAccount checks a module's account of the instructions inside its
// hooks: every category known, the categories summing to the hooks' count
// (so the dump reader attributed every cost line of both dumps), our
// module's code, Envoy's callbacks and its allocator each present, and the
// engine costing more than our module and the callbacks together.
func checkAccount(t *testing.T, mode string, in *result.Instructions) {
	t.Helper()
	var sum int64
	for cat, n := range in.Account {
		if !slices.Contains(callgrind.Categories, cat) {
			t.Errorf("%s: account category %q not among %v", mode, cat, callgrind.Categories)
		}
		sum += n
	}
	if want := in.Envoy - in.OutsideHooks; sum != want {
		t.Errorf("%s: account sums to %d, inside the hooks %d (account %v)", mode, sum, want, in.Account)
	}
	for _, cat := range []string{callgrind.CatModule, callgrind.CatCallbacks, callgrind.CatAlloc} {
		if in.Account[cat] <= 0 {
			t.Errorf("%s: account %q = %d, want > 0 (account %v)", mode, cat, in.Account[cat], in.Account)
		}
	}
	if e, g := in.Account[callgrind.CatEngine], in.Account[callgrind.CatModule]+in.Account[callgrind.CatCallbacks]; e <= g {
		t.Errorf("%s: engine %d, our module and the callbacks %d: want the engine's part larger (account %v)", mode, e, g, in.Account)
	}
}

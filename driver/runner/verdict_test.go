//go:build integration

package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"wafbench/driver/modes"
)

// TestAdversarialVerdicts runs a few points of the adversarial suite
// through the real stack in every mode: each record carries its measured
// verdict and the declared one, the request size, and CPU; an attack below
// every limit is denied by both engines and passed by passthrough; above the
// argument limit the engines still do not answer 200.
func TestAdversarialVerdicts(t *testing.T) {
	keys := []string{
		"adv_many_args_query_attack_last@n=16@1",
		"adv_many_args_query_attack_last@n=1001@1",
		"adv_rx_args_sqli_select@n=1k@1",
		"adv_json_deep_object_attack_leaf@n=1100@1",
		"adv_json_wide_keys@n=16@1",
	}
	cfg := setup(t, []string{modes.Passthrough, modes.ModSecurity, modes.Coraza}, keys, 1, 3)
	recs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3*len(keys) {
		t.Fatalf("got %d records, want %d", len(recs), 3*len(keys))
	}
	for _, r := range recs {
		name := fmt.Sprintf("%s %s", r.Mode, r.Workload)
		if r.Error != "" {
			t.Errorf("%s: error %q", name, r.Error)
			continue
		}
		if r.DeclaredStatus == 0 || r.ExpectStatus == 0 || r.RequestBytes == 0 || r.CPU.SchedstatNs == 0 {
			t.Errorf("%s: declared %d, verdict %d, bytes %d, cpu %d ns: want all set", name, r.DeclaredStatus, r.ExpectStatus, r.RequestBytes, r.CPU.SchedstatNs)
		}
		if got := r.Statuses[fmt.Sprint(r.ExpectStatus)]; got != r.Requests || r.Requests != 3 {
			t.Errorf("%s: statuses %v, requests %d: want 3 × the probed verdict %d", name, r.Statuses, r.Requests, r.ExpectStatus)
		}
		waf := modes.IsWAF(r.Mode)
		attack := cfg.Set.Workloads[r.Workload].Attack()
		switch {
		case !waf && r.ExpectStatus != 200:
			t.Errorf("%s: passthrough verdict %d, want 200", name, r.ExpectStatus)
		case waf && attack && r.ExpectStatus == 200:
			t.Errorf("%s: attack answered 200 by a WAF", name)
		case waf && attack && strings.Contains(r.Workload, "@n=16@") && r.ExpectStatus != 403:
			t.Errorf("%s: verdict %d, want 403 below every limit", name, r.ExpectStatus)
		case waf && strings.HasPrefix(r.Workload, "adv_rx_args") && r.ExpectStatus != 403:
			t.Errorf("%s: verdict %d, want 403", name, r.ExpectStatus)
		case waf && !attack && r.ExpectStatus != 200:
			t.Errorf("%s: benign wide JSON got %d, want 200", name, r.ExpectStatus)
		}
	}
}

package profile

import (
	"strings"
	"testing"
)

func TestPrecisionTargets(t *testing.T) {
	const ok = "workloads:\n- {name: a, method: GET, path: /, conns: [1, 16], expect: {default: 200}}\nsuites:\n  s: {repeats: 1, duration: 1s, workloads: [a@16], "
	tests := []struct {
		name, yaml, want string
	}{
		{"not a ratio", ok + "precision_targets: [{ratio: modsecurity}]}\n", "precision_targets: ratio: want <mode>/<mode>"},
		{"unknown mode", ok + "precision_targets: [{ratio: modsecurity/nosuch}]}\n", "precision_targets: ratio modsecurity/nosuch"},
		{"workload not in suite", ok + "precision_targets: [{ratio: modsecurity/coraza, workloads: [a@1]}]}\n", "workload a@1 is not in the suite's workloads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
	set, err := Parse("ok.yaml", []byte(ok+"precision_targets: [{ratio: modsecurity/coraza, workloads: [a@16], metrics: [cpu_us_per_req]}]}\n"))
	if err != nil {
		t.Fatalf("valid targets: %v", err)
	}
	got := set.Suites["s"].PrecisionTargets
	if len(got) != 1 || got[0].Ratio != "modsecurity/coraza" || got[0].Workloads[0] != "a@16" || got[0].Metrics[0] != "cpu_us_per_req" {
		t.Errorf("PrecisionTargets = %+v", got)
	}
}

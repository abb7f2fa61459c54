package envoyhost

import (
	"strings"
	"testing"

	"wafbench/driver/envoy"
)

func TestCheckReady(t *testing.T) {
	tests := []struct {
		line, wantErr string
		want          int
	}{
		{line: "wafbench-extproc ready engine=coraza listen=unix:/run/wafbench/s.sock admin=127.0.0.1:9901 gomaxprocs=2", want: 2},
		{line: "wafbench-extproc ready engine=modsecurity listen=unix:/run/wafbench/s.sock admin=127.0.0.1:9901 gomaxprocs=1", wantErr: `reports engine "modsecurity"`},
		{line: "wafbench-extproc ready engine=coraza admin=127.0.0.1:9901 gomaxprocs=1", wantErr: "lacks listen="},
		{line: "wafbench-extproc ready engine=coraza listen=tcp:127.0.0.1:1 admin=127.0.0.1:9901 gomaxprocs=1", wantErr: "listens elsewhere"},
		{line: "wafbench-extproc ready engine=coraza listen=unix:/run/wafbench/s.sock admin=127.0.0.1:9901", wantErr: "lacks gomaxprocs="},
		{line: "wafbench-extproc ready engine=coraza listen=unix:/run/wafbench/s.sock admin=127.0.0.1:9901 gomaxprocs=0", wantErr: "lacks gomaxprocs="},
	}
	for _, tt := range tests {
		n, err := checkReady(tt.line, "coraza", "unix:/run/wafbench/s.sock", "127.0.0.1:9901")
		if tt.wantErr == "" && (err != nil || n != tt.want) || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("checkReady(%q) = %d, %v, want %d, %q", tt.line, n, err, tt.want, tt.wantErr)
		}
	}
}

// TestMergeStats: the server's counters join Envoy's in one document that
// ParseStats reads, histograms and all.
func TestMergeStats(t *testing.T) {
	envoyStats := `{"stats":[{"name":"http.ingress.downstream_rq_total","value":7},{"histograms":{"computed_quantiles":[]}}]}`
	server := `{"stats":[{"name":"wafbench_coraza_requests","value":5},{"name":"wafbench_coraza_blocked_phase2","value":1}]}`
	b, err := mergeStats([]byte(envoyStats), []byte(server))
	if err != nil {
		t.Fatal(err)
	}
	got, err := envoy.ParseStats(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"http.ingress.downstream_rq_total": 7, "wafbench_coraza_requests": 5, "wafbench_coraza_blocked_phase2": 1} {
		if got[name] != want {
			t.Errorf("%s = %d, want %d (merged %s)", name, got[name], want, b)
		}
	}
	if _, err := mergeStats([]byte(envoyStats), []byte("not json")); err == nil || !strings.Contains(err.Error(), "wafbench-extproc admin /stats") {
		t.Errorf("a bad server document: %v", err)
	}
}

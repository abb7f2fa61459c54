//go:build integration

package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wafbench/driver/modes"
	"wafbench/driver/perf"
	"wafbench/driver/report"
	"wafbench/driver/result"
)

// TestExternalPerfCoversServer: run --perf in an external mode samples
// the wafbench-extproc server beside Envoy, and the report splits their
// CPU into Envoy, the engine, gRPC and protobuf, each with samples.
func TestExternalPerfCoversServer(t *testing.T) {
	if err := perf.Available(); err != nil {
		t.Fatalf("%v", err) // setup.sh installs linux-perf and inferno
	}
	var dir string
	recs, errs := externalRun(t, modes.CorazaExtProc, []string{"blocked_sqli@1"}, nil, func(c *Config) {
		c.PerfFreqHz, c.Duration, dir = 999, time.Second, c.Dir
	})
	if len(recs) != 1 || recs[0].Error != "" || recs[0].PerfFile == "" {
		t.Fatalf("records %+v, want one profiled window; stderr:\n%s", recs, errs)
	}
	folded, err := perf.ReadFolded(filepath.Join(dir, strings.TrimSuffix(recs[0].PerfFile, ".data")+".folded"))
	if err != nil {
		t.Fatal(err)
	}
	parts := folded.Parts()
	t.Logf("sampled CPU by part, ns over %d requests: %v", recs[0].Requests, parts)
	for _, p := range []string{perf.PartEnvoy, perf.PartEngine, perf.PartGRPC, perf.PartProtobuf} {
		if parts[p] == 0 {
			t.Errorf("no samples in %q; parts %v; top: %v", p, parts, folded.Top(10))
		}
	}
	meta := &result.Meta{RunID: "test", Name: "flame", Status: "complete", Suite: "test", Modes: []string{modes.CorazaExtProc}}
	if err := result.WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	if err := report.Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, report.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"In the external modes perf samples Envoy and the wafbench-extproc server together", "| `coraza-extproc` | blocked_sqli@1 |"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

//go:build integration

package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/perf"
	"wafbench/driver/report"
	"wafbench/driver/result"
)

// TestRunPerfFlame is a real short run --perf: passthrough and coraza on
// the real module and CRS, Envoy sampled by perf over each window. Each
// window leaves folded stacks in which the Coraza module's Go frames are
// symbolised; the report draws a flame graph per mode × workload, the
// differential graph run --perf-diff asks for, and lists top functions.
func TestRunPerfFlame(t *testing.T) {
	if err := perf.Available(); err != nil {
		t.Fatalf("%v", err) // setup.sh installs linux-perf and inferno; cpu-clock works in this VM
	}
	const n = 3000
	cfg := setup(t, []string{"passthrough", "coraza"}, []string{"headers@1"}, 1, n)
	cfg.PerfFreqHz = 999
	recs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, r := range recs {
		checkRecord(t, r, n)
		if r.PerfFile == "" {
			t.Fatalf("%s: no perf file", r.Mode)
		}
		folded, err := perf.ReadFolded(filepath.Join(cfg.Dir, strings.TrimSuffix(r.PerfFile, ".data")+".folded"))
		if err != nil {
			t.Fatal(err)
		}
		var goFrames int64
		for s, c := range folded {
			if strings.Contains(s, "github.com/corazawaf/coraza/v3") {
				goFrames += c
			}
		}
		if r.Mode == "coraza" && goFrames == 0 {
			t.Errorf("coraza: no samples in symbolised Coraza Go frames among %d samples; top: %v", folded.Total(), folded.Top(5))
		}
		if r.Mode == "passthrough" && goFrames != 0 {
			t.Errorf("passthrough: %d samples in Coraza frames, want none", goFrames)
		}
	}

	meta := &result.Meta{RunID: "test", Name: "flame", Status: "complete", Suite: "test",
		Modes: []string{"passthrough", "coraza"}, Flags: map[string]string{report.PerfDiffFlag: "passthrough,coraza"}}
	if err := result.WriteMeta(cfg.Dir, meta); err != nil {
		t.Fatal(err)
	}
	if err := report.Build(cfg.Dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"flame-passthrough-headers-c1.svg", "flame-coraza-headers-c1.svg", "diff-passthrough-vs-coraza-headers-c1.svg"} {
		b, err := os.ReadFile(filepath.Join(cfg.Dir, "perf", f))
		if err != nil {
			t.Error(err)
			continue
		}
		if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("corazawaf")) && f != "flame-passthrough-headers-c1.svg" {
			t.Errorf("%s: not an SVG flame graph with Coraza frames (%d bytes)", f, len(b))
		}
	}
	md, err := os.ReadFile(filepath.Join(cfg.Dir, report.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Flame graphs", "[svg](perf/flame-coraza-headers-c1.svg)", "(perf/diff-passthrough-vs-coraza-headers-c1.svg)", "**coraza**"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if t.Failed() {
		i := bytes.Index(md, []byte("## Flame graphs"))
		t.Logf("report section:\n%s", md[max(i, 0):])
	}
}

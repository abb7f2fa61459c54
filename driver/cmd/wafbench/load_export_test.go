package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/export"
	"wafbench/driver/upstream/upstreamtest"
)

// TestLoadExports drives the real upstream with `wafbench load --hgrm
// --fortio-json` and reads both files back: the counts agree with the
// printed summary.
func TestLoadExports(t *testing.T) {
	_, addr := upstreamtest.Start(t)
	dir := t.TempDir()
	hg, fj := filepath.Join(dir, "l.hgrm"), filepath.Join(dir, "l.json")
	var stdout, stderr bytes.Buffer
	args := []string{"load", "--target", "http://" + addr + "/safe", "--conns", "2", "--duration", "1h", "--warmup", "0",
		"--max-requests", "200", "--rate", "2000", "--arrival", "poisson", "--pacer", "go-timer", "--json", "--hgrm", hg, "--fortio-json", fj}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var sum struct {
		Requests int64  `json:"requests"`
		Arrival  string `json:"arrival"`
		Pacer    string `json:"pacer"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || sum.Requests != 200 || sum.Arrival != "poisson" || sum.Pacer != "go-timer" {
		t.Fatalf("summary: %s (%v), want 200 requests, poisson, go-timer pacer", stdout.String(), err)
	}
	h, err := os.ReadFile(hg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(h), " Value\tPercentile\tTotalCount\t1/(1-Percentile)") || !strings.Contains(string(h), "Total count    =          200]") {
		t.Errorf(".hgrm: want the HdrHistogram header and a total count of 200, got\n%s", h)
	}
	b, err := os.ReadFile(fj)
	if err != nil {
		t.Fatal(err)
	}
	var f export.Fortio
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.DurationHistogram.Count != 200 || f.RetCodes["200"] != 200 || f.RequestedQPS != "2000" || f.NumThreads != 2 {
		t.Errorf("fortio: count %d, 200s %d, qps %q, threads %d; want 200, 200, 2000, 2", f.DurationHistogram.Count, f.RetCodes["200"], f.RequestedQPS, f.NumThreads)
	}
}

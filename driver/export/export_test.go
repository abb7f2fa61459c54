package export

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/load"
	"wafbench/driver/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// record returns a measured record whose histogram holds n values of
// base, base+step, … microseconds.
func record(t *testing.T, trial int, mode string, n, base, step int64) result.Record {
	t.Helper()
	h := load.NewHistogram()
	for i := range n {
		if err := h.RecordValue(base + i*step); err != nil {
			t.Fatal(err)
		}
	}
	res := load.Result{Hist: h}
	enc, err := res.EncodeHist()
	if err != nil {
		t.Fatal(err)
	}
	return result.Record{
		Case: result.Case{
			Trial: trial, Repeat: trial, Mode: mode, Workload: "json_4k", Conns: 16, Load: "closed",
		},
		Window: result.Window{
			Requests: n, DurationS: 2, ReqPerS: float64(n) / 2, HistBase64: enc,
			Statuses: map[string]int64{"200": n},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./driver/export -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./driver/export -update rewrites it):\n%s", name, got)
	}
}

// TestWriteRunGolden exports two repeats of one group and a failed record:
// one .hgrm of the merged group, one fortio JSON per measured record, the
// failed record skipped; the files match the golden ones byte for byte.
func TestWriteRunGolden(t *testing.T) {
	dir := t.TempDir()
	recs := []result.Record{
		record(t, 1, "coraza@re2", 1000, 500, 3),
		record(t, 2, "coraza@re2", 1000, 800, 5),
		{Case: result.Case{Trial: 3, Mode: "coraza@re2", Workload: "json_4k", Conns: 16}, Error: "envoy exited"},
	}
	files, err := WriteRun(dir, recs)
	if err != nil {
		t.Fatal(err)
	}
	wantH := []string{filepath.Join("export", "coraza-re2_json_4k_c16.hgrm")}
	wantF := []string{filepath.Join("export", "fortio", "t01-coraza-re2_json_4k_c16.json"), filepath.Join("export", "fortio", "t02-coraza-re2_json_4k_c16.json")}
	if strings.Join(files.HGRM, ",") != strings.Join(wantH, ",") || strings.Join(files.Fortio, ",") != strings.Join(wantF, ",") {
		t.Fatalf("files: got %v %v, want %v %v", files.HGRM, files.Fortio, wantH, wantF)
	}
	hgrm, err := os.ReadFile(filepath.Join(dir, wantH[0]))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "group.hgrm", hgrm)
	if !bytes.Contains(hgrm, []byte("Total count    =         2000]")) {
		t.Errorf(".hgrm: want the merged total count 2000 in its footer")
	}
	fj, err := os.ReadFile(filepath.Join(dir, wantF[0]))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "trial.fortio.json", fj)
	var f Fortio
	if err := json.Unmarshal(fj, &f); err != nil {
		t.Fatal(err)
	}
	if f.DurationHistogram.Count != 1000 || f.RetCodes["200"] != 1000 || f.ActualQPS != 500 || f.RequestedQPS != "max" {
		t.Errorf("fortio: count %d, 200s %d, qps %v, requested %q; want 1000, 1000, 500, max",
			f.DurationHistogram.Count, f.RetCodes["200"], f.ActualQPS, f.RequestedQPS)
	}
	var n int64
	for _, b := range f.DurationHistogram.Data {
		n += b.Count
	}
	if last := f.DurationHistogram.Data[len(f.DurationHistogram.Data)-1]; n != 1000 || last.Percent != 100 {
		t.Errorf("fortio data: counts sum to %d, last percent %v; want 1000, 100", n, last.Percent)
	}
}

// TestWriteRunNothing writes nothing for a run with no measured record.
func TestWriteRunNothing(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteRun(dir, []result.Record{{Case: result.Case{Mode: "passthrough"}, Error: "x"}})
	if err != nil || len(files.HGRM)+len(files.Fortio) != 0 {
		t.Fatalf("got %v, %v; want no files", files, err)
	}
	if _, err := os.Stat(filepath.Join(dir, Dir)); !os.IsNotExist(err) {
		t.Errorf("export dir: want none, got %v", err)
	}
}

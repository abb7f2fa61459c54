package flame

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"wafbench/driver/result"
)

// TestRead: windows are merged per mode × workload × conns from .folded
// files and from the .folded.gz of a kept run; windows without stacks or
// samples are counted, failed windows skipped.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "perf"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, "perf", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("t01.folded", "main;a 10\nmain;b 5\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("main;a 7\n"))
	zw.Close()
	write("t02.folded.gz", gz.String())
	write("t03.folded", "")
	rec := func(trial int, mode, file, errText string) result.Record {
		return result.Record{Case: result.Case{Trial: trial, Mode: mode, Workload: "headers", Conns: 16}, Window: result.Window{Requests: 100}, PerfFile: file, Error: errText}
	}
	recs := []result.Record{
		rec(1, "coraza", "perf/t01.data", ""),
		rec(2, "coraza", "perf/t02.data", ""),
		rec(3, "passthrough", "perf/t03.data", ""),
		rec(4, "passthrough", "perf/t04.data", ""),
		rec(5, "passthrough", "perf/t05.data", "failed"),
		rec(6, "passthrough", "", ""),
	}
	fl, err := read(dir, recs)
	if err != nil {
		t.Fatal(err)
	}
	if fl.Missing != 1 || fl.Empty != 1 || len(fl.Groups) != 1 {
		t.Fatalf("got missing %d, empty %d, %d groups; want 1, 1, 1", fl.Missing, fl.Empty, len(fl.Groups))
	}
	g := fl.Groups[0]
	if g.Key() != "headers@16" || g.Base() != "flame-coraza-headers-c16" || g.Windows != 2 || g.Requests != 200 || g.Stacks["main;a"] != 17 || g.Stacks.Total() != 22 {
		t.Errorf("group: got %s %s, %d windows, %d requests, stacks %v", g.Key(), g.Base(), g.Windows, g.Requests, g.Stacks)
	}
	if fl, err := read(dir, recs[5:]); fl != nil || err != nil {
		t.Errorf("no profiles: got %+v, %v; want nil, nil", fl, err)
	}
}

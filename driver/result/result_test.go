package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAppendAndRead(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 3; i++ {
		if err := Append(dir, &Record{Case: Case{Trial: i, Mode: "passthrough", Workload: "headers", Conns: 16}, Window: Window{Requests: int64(100 * i)}}); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := ReadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].Trial != 3 || got[2].Requests != 300 {
		t.Errorf("got %+v, want 3 records with trial 3 last", got)
	}
}

func TestReadRecordsTornLastLine(t *testing.T) {
	dir := t.TempDir()
	if err := Append(dir, &Record{Case: Case{Trial: 1, Mode: "coraza"}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, RawFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"trial":2,"mo`) // a crash mid-write
	f.Close()
	got, dropped, err := ReadRecords(dir)
	if err != nil || len(got) != 1 || dropped != 1 {
		t.Errorf("torn last line: got %d records, %d dropped, err %v; want the 1 whole record and 1 dropped", len(got), dropped, err)
	}
}

func TestReadRecordsBadMiddleLine(t *testing.T) {
	dir := t.TempDir()
	raw := "{\"trial\":1}\nnot json\n{\"trial\":3}\n"
	if err := os.WriteFile(filepath.Join(dir, RawFile), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := ReadRecords(dir)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("got %v, want an error naming line 2", err)
	}
}

func TestMetaRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := &Meta{Name: "x", Status: "running", Modes: []string{"passthrough"}, Seed: 7}
	if err := WriteMeta(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != want.Name || got.Seed != 7 || got.Status != "running" {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, MetaFile+".tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary meta file left behind")
	}
}

func TestClientBound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		own, p99 float64
		want     bool
	}{
		{name: "own delay a tenth of the tail", own: 100, p99: 1000, want: false},
		{name: "exactly the share", own: 250, p99: 1000, want: false},
		{name: "over the share", own: 551, p99: 1200, want: true},
		{name: "no latency", own: 10, p99: 0, want: false},
	} {
		s := &SendDelay{Own: Latency{P99Us: tc.own}}
		if got := s.ClientBound(tc.p99); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	var closed *SendDelay
	if closed.ClientBound(1000) {
		t.Error("a closed-loop record (no send delay) is client-bound")
	}
}

package result

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"wafbench/internal/diskfull"
)

func TestWriteMetaDiskFullKeepsOldAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	if err := WriteMeta(dir, &Meta{Name: "x", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	diskfull.At(t, filepath.Join(dir, MetaFile+".tmp"))
	err := WriteMeta(dir, &Meta{Name: "x", Status: "failed"})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v, want ENOSPC", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, MetaFile+".tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary file left after a failed write (lstat: %v)", err)
	}
	m, err := ReadMeta(dir)
	if err != nil || m.Status != "running" {
		t.Errorf("meta.json after a failed write: got %+v, %v; want the old content", m, err)
	}
}

func TestAppendDiskFullLeavesNoPartialLine(t *testing.T) {
	dir := t.TempDir()
	if err := Append(dir, &Record{Case: Case{Trial: 1}}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, RawFile))
	// Swap raw.jsonl for /dev/full: the next append fails as on a full disk.
	os.Rename(filepath.Join(dir, RawFile), filepath.Join(dir, "kept"))
	diskfull.At(t, filepath.Join(dir, RawFile))
	if err := Append(dir, &Record{Case: Case{Trial: 2}}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v, want ENOSPC", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "kept"))
	if string(after) != string(before) {
		t.Errorf("kept rows changed: got %q, want %q", after, before)
	}
}

func TestReserveReleased(t *testing.T) {
	dir := t.TempDir()
	release, err := Reserve(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, reserveFile))
	if err != nil || st.Size() != reserveSize {
		t.Fatalf("reserve: got %v, %v; want %d bytes", st, err, reserveSize)
	}
	release()
	if _, err := os.Stat(filepath.Join(dir, reserveFile)); !os.IsNotExist(err) {
		t.Errorf("reserve left after release: %v", err)
	}
}

func TestFellBehind(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		due, responses, stalled int64
		want                    bool
	}{
		{"closed loop", 0, 100, 0, false},
		{"held", 1000, 999, 0, false},
		{"slow", 1000, 900, 0, true},
		{"edge slack", 100, 94, 0, false}, // 95 − 1
		{"short", 100, 93, 0, true},
		{"client stalled", 1000, 1000, 50, true},
		{"few stalled", 1000, 1000, 5, false},
		{"one stalled in a short window", 72, 72, 1, false},
		{"two stalled in a short window", 72, 72, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FellBehind(tc.due, tc.responses, tc.stalled); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRunIDsDiffer(t *testing.T) {
	a, b := NewRunID(), NewRunID()
	if len(a) != 32 || a == b {
		t.Errorf("got %q and %q, want two different 32-hex-digit IDs", a, b)
	}
}

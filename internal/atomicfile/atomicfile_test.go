package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// fullAt makes path a symlink to /dev/full, whose writes fail with ENOSPC
// (a full disk, from the real kernel).
func fullAt(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("this test needs /dev/full (Linux): %v", err)
	}
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFileLeavesNoEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "chart.svg")
	fullAt(t, path+".tmp")
	if err := WriteFile(path, []byte("<svg/>")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v, want ENOSPC", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("got %d files left (%s…), want none", len(ents), ents[0].Name())
	}
}

func TestWriteFileReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	for _, want := range []string{"old", "new"} {
		if err := WriteFile(path, []byte(want)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("got %q, %v; want %q", got, err, want)
		}
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
}

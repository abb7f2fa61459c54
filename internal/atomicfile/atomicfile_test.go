package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"wafbench/internal/diskfull"
)

func TestWriteFileLeavesNoEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "chart.svg")
	diskfull.At(t, path+".tmp")
	if err := WriteFile(path, []byte("<svg/>")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v, want ENOSPC", err)
	}
	diskfull.NothingLeft(t, dir)
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

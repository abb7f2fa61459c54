// Package diskfull lets a test make one path behave like a full disk: the
// path becomes a symbolic link to /dev/full, whose writes fail with ENOSPC
// from the real kernel. Tests of what a full disk leaves behind use it.
package diskfull

import (
	"os"
	"testing"
)

// At makes path a symbolic link to /dev/full; the test fails if the
// machine has no /dev/full (Linux only) or the link cannot be made.
func At(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("this test needs /dev/full (Linux): %v", err)
	}
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
}

// NothingLeft fails the test for every entry left in dir: after a write
// that failed on a full disk, no empty or partial file may remain.
func NothingLeft(t testing.TB, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

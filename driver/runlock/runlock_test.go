package runlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecondAcquireRefusedNamingHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), fileName)
	l, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	l.SetRun("/results/20261130T000000Z-seed")
	// flock locks belong to an open file description: a second Acquire in
	// this process is refused exactly as another process would be.
	_, err = Acquire(path)
	if !errors.Is(err, errHeld) {
		t.Fatalf("second acquire: got %v, want ErrHeld", err)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", os.Getpid()), "run /results/20261130T000000Z-seed", path} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	l.Release()
	l2, err := Acquire(path)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	l2.Release()
}

func TestPathFromEnvironment(t *testing.T) {
	t.Setenv(EnvPath, "/tmp/x.lock")
	if got := Path(); got != "/tmp/x.lock" {
		t.Errorf("got %q, want /tmp/x.lock", got)
	}
}

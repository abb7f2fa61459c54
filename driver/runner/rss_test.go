package runner

import (
	"os"
	"testing"
	"time"
)

// TestRSSSampler reads this test process's VmRSS once a second: a reading
// at the start, one per second after, each a plausible size.
func TestRSSSampler(t *testing.T) {
	s := startRSS(os.Getpid())
	time.Sleep(2500 * time.Millisecond)
	kib, err := s.stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(kib) < 2 || len(kib) > 4 {
		t.Fatalf("%d readings in 2.5 s, want 3 (one at the start, one a second): %v", len(kib), kib)
	}
	for _, v := range kib {
		if v < 1024 || v > 64<<20 {
			t.Errorf("VmRSS %d KiB: not a Go test process's", v)
		}
	}
	if _, err := startRSS(1 << 22).stop(); err == nil {
		t.Error("no such process: want an error")
	}
}

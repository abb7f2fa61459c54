package runner

import (
	"os"
	"testing"
	"time"
)

// TestRSSSampler reads this test process's VmRSS, CPU time, run-queue
// wait and the machine's steal time once a second: a reading at the start,
// one per second after, each a plausible size, the cumulative series never
// falling and the CPU time growing by the work done between.
func TestRSSSampler(t *testing.T) {
	s := startRSS(os.Getpid())
	spin := time.Now()
	for time.Since(spin) < 300*time.Millisecond { // CPU time for the readings to count
	}
	time.Sleep(2200 * time.Millisecond)
	ss, err := s.stop()
	if err != nil {
		t.Fatal(err)
	}
	kib, cpu := ss.kib, ss.cpu
	for name, c := range map[string][]int64{"CPU": cpu, "wait": ss.wait, "steal": ss.steal} {
		if len(c) != len(kib) {
			t.Fatalf("%d %s readings for %d RSS readings, want one each", len(c), name, len(kib))
		}
		for i := 1; i < len(c); i++ {
			if c[i] < c[i-1] {
				t.Errorf("%s time fell: %v", name, c)
			}
		}
	}
	if len(cpu) > 1 && cpu[len(cpu)-1]-cpu[0] < 10_000 {
		t.Errorf("CPU time grew %d µs over a 300-ms spin, want ≥ 10000 (a loaded machine gives the spin a share of a CPU): %v", cpu[len(cpu)-1]-cpu[0], cpu)
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

package perf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wafbench/driver/child"
	"wafbench/driver/procstat"
)

// The test binary doubles as the profiled process: with PERF_TEST_BURN=1 it
// spins in burnLoop until killed.
func TestMain(m *testing.M) {
	if os.Getenv("PERF_TEST_BURN") == "1" {
		burnLoop()
	}
	os.Exit(m.Run())
}

//go:noinline
func burnLoop() {
	x := 0
	for {
		for i := range 1 << 20 {
			x ^= i
		}
		if x == -1 {
			break
		}
	}
	os.Exit(x)
}

// requirePerf fails the test unless `perf record -e cpu-clock` works here:
// ./scripts/setup.sh installs linux-perf, and this machine kind (root in a
// VM without hardware counters) supports the software clock event.
func requirePerf(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Fatalf("perf: %v", err)
	}
	out := filepath.Join(t.TempDir(), "probe.data")
	cmd := exec.Command("perf", "record", "-e", "cpu-clock", "-o", out, "--quiet", "--", "true")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("perf record -e cpu-clock does not work here (%v): %s; install linux-perf (./scripts/setup.sh) and run as root or lower kernel.perf_event_paranoid",
			err, bytes.TrimSpace(b))
	}
}

// waitFor polls an explicit condition; only a hung process fails it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited two minutes for %s", what)
		}
	}
}

// TestRecordReport profiles a process burning a fixed 200 ms of CPU after
// perf attached, and checks the data file and the flat report: samples of
// cpu-clock, the burning function at the top, rows without padding.
func TestRecordReport(t *testing.T) {
	requirePerf(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "PERF_TEST_BURN=1")
	target, err := child.Start(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Stop(syscall.SIGKILL, time.Minute)

	dir := t.TempDir()
	data := filepath.Join(dir, "burn.data")
	rec, err := Start(target.PID(), data, 999, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "perf to attach", func() bool { return attached(rec.proc.PID()) })
	// Fixed work in the target's own CPU time, after the attach.
	start, err := procstat.Sample(target.PID())
	if err != nil {
		t.Fatal(err)
	}
	const work = 200 * time.Millisecond
	waitFor(t, "the target to burn 200 ms of CPU", func() bool {
		s, err := procstat.Sample(target.PID())
		return err == nil && s.ClockNs-start.ClockNs >= int64(work)
	})
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	txt := filepath.Join(dir, "burn.txt")
	if err := Report(data, txt); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(txt)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	m := regexp.MustCompile(`Samples: (\d+)\s+of event 'cpu-clock'`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("report has no cpu-clock sample count:\n%s", report)
	}
	if n, _ := strconv.Atoi(m[1]); n < 1 {
		t.Errorf("report counts %d samples, want > 0 after %v of CPU", n, work)
	}
	// The burn is the target's own code. `go test` strips the symbol table
	// of the binaries it runs, so rows name the shared object (this
	// binary) and an address rather than burnLoop.
	if !regexp.MustCompile(`(?m)^ +[0-9.]+% +` + regexp.QuoteMeta(filepath.Base(self)) + ` `).MatchString(report) {
		t.Errorf("report has no row for the target %s:\n%s", filepath.Base(self), report)
	}
	for i, l := range strings.Split(report, "\n") {
		if strings.TrimRight(l, " -") != l {
			t.Errorf("report line %d keeps its padding: %q", i+1, l)
		}
	}
	// Report also folded the stacks: cpu-clock samples weigh their period
	// in ns, so the profile holds at least most of the burned CPU time.
	folded, err := ReadFolded(filepath.Join(dir, "burn.folded"))
	if err != nil {
		t.Fatal(err)
	}
	if got := folded.Total(); got < int64(work)/2 {
		t.Errorf("folded stacks weigh %d ns, want most of the %v burned", got, work)
	}
	svg := filepath.Join(dir, "burn.svg")
	if err := Flamegraph(filepath.Join(dir, "burn.folded"), svg, "burn"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("flame graph %s: %v, want an SVG", svg, err)
	}
}

// TestStopWithoutData: perf attached to a process that does not exist
// exits at once; Stop says no data was written, with perf's message.
func TestStopWithoutData(t *testing.T) {
	requirePerf(t)
	data := filepath.Join(t.TempDir(), "none.data")
	rec, err := Start(1<<22+1, data, 99, nil) // above pid_max's ceiling: never a process
	if err != nil {
		t.Fatal(err)
	}
	<-rec.proc.Done()
	err = rec.Stop()
	if err == nil || !strings.Contains(err.Error(), "perf record wrote no data") {
		t.Errorf("Stop: got %v, want 'perf record wrote no data'", err)
	}
}

func TestReportMissingData(t *testing.T) {
	requirePerf(t)
	dir := t.TempDir()
	err := Report(filepath.Join(dir, "missing.data"), filepath.Join(dir, "out.txt"))
	if err == nil || !strings.Contains(err.Error(), "missing.data") {
		t.Errorf("Report of a missing file: got %v, want an error naming it", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "out.txt")); serr == nil {
		t.Error("Report wrote an output file for missing data")
	}
}

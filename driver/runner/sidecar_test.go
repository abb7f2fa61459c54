package runner

import (
	"os"
	"strings"
	"testing"
	"time"

	"wafbench/driver/procstat"
	"wafbench/driver/result"
)

// The log line of an external mode's window shows the server's CPU per
// request beside Envoy's.
func TestLogLineShowsTheServer(t *testing.T) {
	rec := result.Record{
		Case:   result.Case{Mode: "coraza-extproc", Workload: "headers", Conns: 1},
		Window: result.Window{ReqPerS: 100}, CPU: result.CPU{UsPerRequest: 120},
		Sidecar: &result.Sidecar{Process: "wafbench-extproc", CPU: result.CPU{UsPerRequest: 480.5}},
	}
	if got, want := logLine(&rec), "+ wafbench-extproc 480.5 µs-cpu/req"; !strings.Contains(got, want) {
		t.Errorf("logLine = %q, want it to contain %q", got, want)
	}
}

// fillSidecar leaves a record of a mode without a server alone, and
// records a server's CPU and memory from its two samples.
func TestFillSidecar(t *testing.T) {
	var none result.Record
	fillSidecar(&none, procstat.Snapshot{}, procstat.Snapshot{})
	if none.Sidecar != nil {
		t.Fatalf("fillSidecar made a sidecar for a mode without one")
	}
	rec := result.Record{Window: result.Window{Requests: 1000}, Sidecar: &result.Sidecar{}}
	before, err := procstat.Sample(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spend some CPU between the samples: this process stands in for the
	// server (schedstat counts every thread).
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := procstat.Sample(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	fillSidecar(&rec, before, after)
	if rec.Sidecar.CPU.SchedstatNs <= 0 || rec.Sidecar.CPU.UsPerRequest <= 0 || rec.Sidecar.Memory.RSSEndKiB <= 0 {
		t.Errorf("sidecar CPU %+v memory %+v, want both filled", rec.Sidecar.CPU, rec.Sidecar.Memory)
	}
	if rec.CPU.SchedstatNs != 0 {
		t.Errorf("fillSidecar wrote Envoy's CPU: %+v", rec.CPU)
	}
}

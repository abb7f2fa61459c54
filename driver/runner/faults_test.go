package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wafbench/driver/load"
	"wafbench/driver/result"
)

var (
	selfOnce sync.Once
	selfPath string
	selfErr  error
)

// wafbenchBinary builds the wafbench command once per test binary: the
// runner starts `wafbench upstream` as a child of its own.
func wafbenchBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("WAFBENCH_BIN"); bin != "" { // make test builds it first
		return bin
	}
	selfOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wafbench-runner-test-")
		if err != nil {
			selfErr = err
			return
		}
		selfPath = filepath.Join(dir, "wafbench")
		out, err := exec.Command("go", "build", "-o", selfPath, "wafbench/driver/cmd/wafbench").CombinedOutput()
		if err != nil {
			selfErr = err
			selfPath = string(out)
		}
	})
	if selfErr != nil {
		t.Fatalf("go build wafbench: %v\n%s", selfErr, selfPath)
	}
	return selfPath
}

func TestEmptyWindowNamesTheMismatch(t *testing.T) {
	for _, tt := range []struct {
		name string
		res  *load.Result
		want string
	}{
		{"detection only", &load.Result{Statuses: map[int]int64{200: 1234}}, "status 200 where 403 expected (1234 of 1234 responses)"},
		{"two statuses", &load.Result{Statuses: map[int]int64{502: 3, 503: 7}}, "status 503 where 403 expected (7 of 10 responses), status 502 where 403 expected (3 of 10 responses)"},
		{"nothing answered", &load.Result{Errors: map[string]int64{"timeout": 2, "closed": 1}}, "no response in the measured window (errors: closed 1, timeout 2)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := emptyWindow(tt.res, 403); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSlowWindowGoesOn: a window in which nothing completed, failed or
// timed out (each request outlasts the window) lets the trial measure its
// next workload; one with errors or wrong statuses still ends the trial.
func TestSlowWindowGoesOn(t *testing.T) {
	for _, tt := range []struct {
		name string
		res  *load.Result
		want bool
	}{
		{"nothing finished", &load.Result{}, true},
		{"timeouts", &load.Result{Errors: map[string]int64{"timeout": 1}}, false},
		{"wrong status", &load.Result{Statuses: map[int]int64{200: 3}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := result.Record{Error: emptyWindow(tt.res, 403)}
			for code, n := range tt.res.Statuses {
				if rec.Statuses == nil {
					rec.Statuses = map[string]int64{}
				}
				rec.Statuses[strconv.Itoa(code)] = n
			}
			rec.Errors = tt.res.Errors
			if got := slowWindow(&rec); got != tt.want {
				t.Errorf("slowWindow(%q) = %v, want %v", rec.Error, got, tt.want)
			}
		})
	}
}

// TestFillLoadKeepsOpenLoop: what the load engine measured about an open
// loop's pacing reaches the record, and a window that fell behind its rate
// is flagged there and in its log line.
func TestFillLoadKeepsOpenLoop(t *testing.T) {
	res := &load.Result{Requests: 800, Elapsed: time.Second, RateRequested: 1000, RateAchieved: 800, Late: 120, Lagged: 3, Stalled: 2, Due: 1000,
		WarmupErrors: 4, Statuses: map[int]int64{200: 800}}
	var rec result.Record
	fillLoad(&rec, res)
	if rec.Late != 120 || rec.Lagged != 3 || rec.Stalled != 2 || rec.Due != 1000 || rec.WarmupErrors != 4 || !rec.BehindRate || rec.RateAchievedPerS != 800 {
		t.Errorf("got late %d, lagged %d, stalled %d, due %d, warmup errors %d, behind %v, achieved %v; want 120, 3, 2, 1000, 4, true, 800",
			rec.Late, rec.Lagged, rec.Stalled, rec.Due, rec.WarmupErrors, rec.BehindRate, rec.RateAchievedPerS)
	}
	rec.RateRequestedPerS = 1000
	if got := logLine(&rec); !strings.Contains(got, "BEHIND RATE (achieved 800 of 1000 req/s, 1000 due, 120 sends late, 3 lagged by the client, 2 stalled)") {
		t.Errorf("log line %q does not flag the window", got)
	}
	held := &load.Result{Requests: 1000, Elapsed: time.Second, RateRequested: 1000, RateAchieved: 1000, Due: 1000, Statuses: map[int]int64{200: 1000}}
	rec = result.Record{}
	fillLoad(&rec, held)
	if rec.BehindRate {
		t.Error("a window that held its rate is flagged")
	}
}

// TestLogLineNamesTheCause: the line of a failed window says why.
func TestLogLineNamesTheCause(t *testing.T) {
	rec := result.Record{
		Case:  result.Case{Trial: 3, Mode: "coraza", Workload: "blocked_sqli", Conns: 1},
		Error: emptyWindow(&load.Result{Statuses: map[int]int64{200: 1234}}, 403),
	}
	if got, want := logLine(&rec), "ERROR status 200 where 403 expected (1234 of 1234 responses)"; !strings.HasSuffix(got, want) {
		t.Errorf("got %q, want it to end in %q", got, want)
	}
}

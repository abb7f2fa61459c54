package main

import (
	"errors"
	"strings"
	"testing"
)

// recorder is a failCloser that records what rescue asked of it.
type recorder struct {
	calls int
	err   error
	reply bool
}

func (r *recorder) failClosed(err error, reply bool) { r.calls, r.err, r.reply = r.calls+1, err, reply }

type status uint32

const (
	statusContinue status = 0
	statusStop     status = 1
)

// hook behaves like an exported hook: it defers rescue and returns
// statusContinue unless it panics.
func hook(r *recorder, reply bool, body func()) (st status) {
	defer rescue(r, &st, statusStop, reply)
	body()
	return statusContinue
}

func TestRescue(t *testing.T) {
	for _, tc := range []struct {
		name      string
		body      func()
		reply     bool
		want      status
		wantCalls int
		wantErr   string
	}{
		{name: "no panic", body: func() {}, reply: true, want: statusContinue},
		{name: "panic string", body: func() { panic("boom") }, reply: true, want: statusStop, wantCalls: 1, wantErr: "panic: boom"},
		{name: "panic error", body: func() { panic(errors.New("engine exploded")) }, reply: true, want: statusStop, wantCalls: 1, wantErr: "panic: engine exploded"},
		{name: "nil map write", body: func() {
			var m map[string]int
			m["x"] = 1
		}, reply: true, want: statusStop, wantCalls: 1, wantErr: "assignment to entry in nil map"},
		{name: "after the response", body: func() { panic("late") }, reply: false, want: statusStop, wantCalls: 1, wantErr: "panic: late"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			got := hook(r, tc.reply, tc.body)
			if got != tc.want || r.calls != tc.wantCalls {
				t.Fatalf("got status %d, %d failClosed calls; want %d, %d", got, r.calls, tc.want, tc.wantCalls)
			}
			if tc.wantCalls == 0 {
				return
			}
			if !strings.Contains(r.err.Error(), tc.wantErr) || !strings.Contains(r.err.Error(), "rescue_test.go") {
				t.Errorf("error: got %q, want it to contain %q and the panicking frame", r.err, tc.wantErr)
			}
			if r.reply != tc.reply {
				t.Errorf("reply: got %v, want %v", r.reply, tc.reply)
			}
		})
	}
}

// TestCounterNames pins the counter names of the shared contract (the C++
// module defines the same suffixes).
func TestCounterNames(t *testing.T) {
	want := []string{"requests", "blocked_phase1", "blocked_phase2", "body_too_large", "engine_errors",
		"phase1_ns", "body_ns", "phase2_ns", "logging_ns"}
	for i, w := range want {
		if got := counterNames[i]; got != "wafbench_coraza_"+w {
			t.Errorf("counter %d: got %q, want %q", i, got, "wafbench_coraza_"+w)
		}
	}
	if counterNames[firstTimer] != "wafbench_coraza_phase1_ns" {
		t.Errorf("first timer: got %q", counterNames[firstTimer])
	}
}

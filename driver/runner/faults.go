package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wafbench/driver/load"
	"wafbench/driver/result"
)

// exitStatus describes how a process ended, from exec.Cmd.Wait's error:
// "signal 9", "exit status 1", or "exit status 0".
func exitStatus(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "signal " + strconv.Itoa(int(ws.Signal()))
		}
		return "exit status " + strconv.Itoa(ee.ExitCode())
	}
	if err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// exited reports whether done is closed, waiting up to grace for it: a
// process killed at the end of a window may not be reaped yet when the
// load engine returns.
func exited(done <-chan struct{}, grace time.Duration) bool {
	if done == nil {
		return false
	}
	if grace <= 0 {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// deathDuring names the process — the upstream first, as the cause of
// anything the proxy then did, else the proxy — that exited during the
// window of workload, or returns "". grace applies only when the window
// saw errors (a healthy window does not wait).
func deathDuring(p *proxy, up *Upstream, name, workload string, hadErrors bool) string {
	grace := time.Duration(0)
	if hadErrors {
		grace = time.Second
	}
	if up != nil && exited(up.proc.Done(), grace) {
		return fmt.Sprintf("upstream (pid %d) exited (%s) during %s", up.pid(), exitStatus(up.proc.ExitErr()), workload)
	}
	if sc := p.Sidecar; sc != nil && exited(sc.Done, grace) {
		return fmt.Sprintf("%s server (pid %d) beside %s exited (%s) during %s", sc.Name, sc.PID, name, exitStatus(sc.ExitErr()), workload)
	}
	if p.Done != nil && exited(p.Done, grace) {
		return fmt.Sprintf("%s exited (%s) during %s", name, exitStatus(p.ExitErr()), workload)
	}
	return ""
}

// emptyWindow says why a measured window has no valid response: the
// statuses answered instead of the expected one, with their counts, or the
// errors when nothing answered at all.
func emptyWindow(res *load.Result, expect int) string {
	if res == nil {
		return "no request completed in the measured window"
	}
	var total int64
	type sc struct {
		code int
		n    int64
	}
	var other []sc
	for code, n := range res.Statuses {
		total += n
		if code != expect && n > 0 {
			other = append(other, sc{code, n})
		}
	}
	if len(other) > 0 {
		sort.Slice(other, func(i, j int) bool {
			return other[i].n > other[j].n || other[i].n == other[j].n && other[i].code < other[j].code
		})
		var parts []string
		for _, o := range other {
			parts = append(parts, fmt.Sprintf("status %d where %d expected (%d of %d responses)", o.code, expect, o.n, total))
		}
		return strings.Join(parts, ", ")
	}
	var kinds []string
	for k, n := range res.Errors {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	if len(kinds) == 0 {
		return slowWindowError
	}
	return "no response in the measured window (errors: " + strings.Join(kinds, ", ") + ")"
}

// slowWindowError is a window in which no request completed, failed or
// timed out: every request took longer than the window (a slow mode on a
// heavy workload), which says nothing against the process.
const slowWindowError = "no response in the measured window (no request completed, failed or timed out: each takes longer than the window; lengthen --duration)"

// slowWindow reports whether rec failed only because its window was shorter
// than one request of its mode: the trial goes on with its next workload.
func slowWindow(rec *result.Record) bool {
	return rec.Error == slowWindowError && rec.Requests == 0 && len(rec.Errors) == 0 && len(rec.Statuses) == 0
}

// writeError is a failure to write the run directory (a full disk): the
// run cannot go on, since nothing more it measures could be kept.
type writeError struct{ err error }

func (e *writeError) Error() string { return "run directory: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// removeIfEmpty removes the file at path if it exists and is empty ("" is
// ignored): a run directory keeps no empty files.
func removeIfEmpty(path string) {
	if path == "" {
		return
	}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		os.Remove(path)
	}
}

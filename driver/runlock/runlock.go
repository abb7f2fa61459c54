// Package runlock lets one wafbench run measure a machine at a time. Two
// runs at once would share CPUs and each report half its throughput with no
// warning; instead the second is refused, naming the holder. The lock is an
// exclusive flock(2) on a lock file, so it is released by the kernel when
// the holder exits, however it exits; the file's content (PID and run
// directory) only serves the refusal message.
package runlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// EnvPath names the environment variable that overrides the lock file's
// path (tests give each script its own).
const EnvPath = "WAFBENCH_LOCK"

// fileName is the lock file's name inside its directory.
const fileName = "wafbench.lock"

// Path returns the lock file to use: $WAFBENCH_LOCK if set, else
// /run/lock/wafbench.lock where /run/lock is writable, else
// $XDG_RUNTIME_DIR/wafbench.lock, else wafbench.lock in os.TempDir().
func Path() string {
	if p := os.Getenv(EnvPath); p != "" {
		return p
	}
	if syscall.Access("/run/lock", 2 /* W_OK */) == nil {
		return filepath.Join("/run/lock", fileName)
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, fileName)
	}
	return filepath.Join(os.TempDir(), fileName)
}

// lock is a held run lock.
type lock struct {
	f    *os.File
	path string
}

// errHeld reports that another process holds the lock.
var errHeld = errors.New("another wafbench run holds the lock")

// Acquire takes the lock at path without waiting. When another process
// holds it, the error wraps ErrHeld and names the holder's PID and run
// directory as the holder recorded them.
func Acquire(path string) (*lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if errors.Is(err, os.ErrPermission) {
		f, err = os.Open(path) // another user's file: flock works read-only too
	}
	if err != nil {
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s; lock file %s): wait for it to finish, one run at a time keeps figures comparable", errHeld, holder, path)
		}
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	l := &lock{f: f, path: path}
	l.record("")
	return l, nil
}

// SetRun records the run directory in the lock file, for the refusal
// message of a second run.
func (l *lock) SetRun(dir string) { l.record(dir) }

func (l *lock) record(dir string) {
	if dir == "" {
		dir = "(not created yet)"
	}
	s := fmt.Sprintf("pid %d\nrun %s\nsince %s\n", os.Getpid(), dir, time.Now().UTC().Format(time.RFC3339))
	if err := l.f.Truncate(0); err == nil {
		l.f.WriteAt([]byte(s), 0) // best effort: the flock is the lock
	}
}

// readHolder describes the holder from the lock file's content.
func readHolder(f *os.File) string {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	var parts []string
	for _, line := range strings.Split(string(b[:n]), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && (k == "pid" || k == "run" || k == "since") {
			parts = append(parts, k+" "+v)
		}
	}
	if len(parts) == 0 {
		return "holder unknown"
	}
	return "held by " + strings.Join(parts, ", ")
}

// Release gives the lock up. The file stays, so its inode is the same for
// every run.
func (l *lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

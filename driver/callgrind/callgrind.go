// Package callgrind counts the instructions a process executes over a
// measured window with valgrind's callgrind tool (wafbench run --callgrind):
// the command line that starts a program under it, zeroing and dumping its
// counters from outside (vgdb), reading a dump (ParseProfile: each
// function's self cost and each call edge), the meter (filters/meter) that
// splits the count into inside and outside a WAF module's hooks, and the
// account of the instructions inside them by who executed them (Account). Instruction counts repeat from run to run where time does
// not, on a machine without hardware counters.
package callgrind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Available reports whether valgrind (with callgrind) and vgdb can be run,
// with how to install them when not.
func Available() error {
	for _, tool := range []string{"valgrind", "vgdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found: install valgrind (./scripts/setup.sh does)", tool)
		}
	}
	return nil
}

// Version is `valgrind --version` ("valgrind-3.19.0"), or "" when it cannot
// be run.
func Version() string {
	out, err := exec.Command("valgrind", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Env is what a program under callgrind needs in its environment. Go's
// asynchronous preemption signals (SIGURG) trip an assertion in callgrind
// 3.19's signal handling (threads.c: "sigNum == current_state.sig") within
// seconds of a Go module's start, so goroutines are preempted at function
// calls only. Go's collector is off: a cycle (about 18 million
// instructions with CRS loaded) lands in whichever window its allocation
// trigger falls, so a count over tens of requests would hold one or none
// and differ by up to a million instructions per request between repeats;
// without it the Go module's counts leave garbage collection out. The C++
// engine reads neither variable.
var Env = []string{"GODEBUG=asyncpreemptoff=1", "GOGC=off"}

// Process is one program started under callgrind: where its dumps go and
// how many it has written.
type Process struct {
	PID   int
	out   string // --callgrind-out-file; dump n is out + "." + n
	dumps int
}

// Command returns the command line that runs argv under callgrind, with
// dumps written to outFile.N, collection on from the start (zero before
// counting) and no per-instruction detail.
func Command(outFile string, argv ...string) []string {
	return append([]string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + outFile,
		"--dump-instr=no", "--compress-strings=no", "--compress-pos=no", "--vgdb=yes"}, argv...)
}

// Attach is the started process pid whose command line came from
// Command(outFile, …).
func Attach(pid int, outFile string) *Process { return &Process{PID: pid, out: outFile} }

// vgdbTimeout bounds one vgdb command: valgrind answers at its next
// scheduling point, which a busy or blocked process reaches within seconds.
const vgdbTimeout = 2 * time.Minute

// monitor sends callgrind monitor command cmd through vgdb.
func (p *Process) monitor(ctx context.Context, cmd ...string) error {
	ctx, cancel := context.WithTimeout(ctx, vgdbTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "vgdb", append([]string{"--pid=" + strconv.Itoa(p.PID)}, cmd...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("vgdb %s (pid %d): %v: %s", strings.Join(cmd, " "), p.PID, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Zero resets every counter of the process (all threads).
func (p *Process) Zero(ctx context.Context) error { return p.monitor(ctx, "zero") }

// Dump writes the counters since the last Zero to the next dump file and
// returns what it holds (all threads): its total and per-function costs.
// The file is removed once read.
func (p *Process) Dump(ctx context.Context) (*Profile, error) {
	if err := p.monitor(ctx, "dump"); err != nil {
		return nil, err
	}
	p.dumps++
	path := p.out + "." + strconv.Itoa(p.dumps)
	prof, err := ReadProfile(path)
	if err != nil {
		return nil, err
	}
	return prof, os.Remove(path)
}

// Meter is the flag file of the meter module (filters/meter): while it reads
// '1' the meter stops collection inside every outermost hook call.
type Meter struct{ path string }

// Meter environment: the module the meter loads and forwards to, and its
// flag file.
const (
	MeterTargetEnv = "WAFBENCH_METER_TARGET"
	MeterFlagEnv   = "WAFBENCH_METER_FLAG"
	// MeterModule is the meter's dynamic-module name (libwafbench_meter.so).
	MeterModule = "wafbench_meter"
)

// NewMeter writes a flag file reading '0' (hooks counted) at path.
func NewMeter(path string) (*Meter, error) {
	m := &Meter{path: path}
	return m, m.set('0')
}

// Path is the flag file, for MeterFlagEnv.
func (m *Meter) Path() string { return m.path }

// ExcludeHooks makes the meter stop collection inside hooks (on) or count
// them again (off). The meter maps the file shared, so it sees the byte at
// its next hook call.
func (m *Meter) ExcludeHooks(on bool) error {
	if on {
		return m.set('1')
	}
	return m.set('0')
}

func (m *Meter) set(b byte) error {
	if m == nil {
		return errors.New("callgrind: no meter")
	}
	f, err := os.OpenFile(m.path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte{b}, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

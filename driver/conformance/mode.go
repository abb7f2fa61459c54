package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"wafbench/driver/modes"
	"wafbench/driver/procstat"
	"wafbench/driver/runner"
)

// modeResult is the suite through one mode.
type modeResult struct {
	Mode   string `json:"mode"`
	Engine string `json:"engine"`
	Host   string `json:"host"`
	Build  string `json:"build,omitempty"` // the engine build (coraza@re2); "" for the default build
	// Error says why the mode did not run or stopped (start, preflight,
	// host died); its unfinished tests are NotRun.
	Error        string `json:"error,omitempty"`
	ModuleSHA256 string `json:"module_sha256,omitempty"`
	EngineLib    string `json:"engine_lib,omitempty"`
	// EngineVersion is the engine version the run's meta.json records for
	// the mode (how a host without a module file of its own is matched).
	EngineVersion string  `json:"engine_version,omitempty"`
	WallSeconds   float64 `json:"wall_seconds"`
	// StartSeconds is the part of WallSeconds before the first test: the
	// host's start-up, its preflight and the logging proof (0 in runs
	// recorded before it).
	StartSeconds float64 `json:"start_seconds,omitempty"`
	// HostCPU is the host process's CPU time from its start to its last
	// test (0: unknown, or a run recorded before it).
	HostCPU    float64      `json:"host_cpu_seconds,omitempty"`
	Counts     counts       `json:"counts"`
	ByRuleFile []fileCounts `json:"by_rule_file"`
	Stale      []string     `json:"stale_overrides,omitempty"` // override entries whose tests all pass here
	Tests      []testResult `json:"tests"`
}

// counts are a mode's outcomes.
type counts struct {
	Passed     int `json:"passed"`
	Failed     int `json:"failed"`
	Overridden int `json:"overridden"`
	NotRun     int `json:"not_run"`
	// ByCause splits Overridden by the override's cause (engine, envoy, host).
	ByCause map[string]int `json:"overridden_by_cause,omitempty"`
}

// total is every test counted.
func (c counts) total() int { return c.Passed + c.Failed + c.Overridden + c.NotRun }

// fileCounts are the outcomes of one rule file's tests.
type fileCounts struct {
	RuleFile string `json:"rule_file"`
	counts
}

// Proof is the request pair that shows a crs-test host logs what it
// matches before the suite runs: a marker request is logged under rule
// 999999, and a classic SQL injection under 942100.
var proofAttack = []byte("GET /wafbench-crs-test-proof?id=1%27%20OR%20%271%27%3D%271 HTTP/1.1\r\nHost: localhost\r\n" +
	"User-Agent: wafbench-crs-test\r\nAccept: */*\r\nConnection: close\r\n\r\n")

// proveLogging sends a marker, the canary attack and a marker, and wants
// 942100 between them: the host is in DetectionOnly (the attack is
// forwarded, 200) and logs matches.
func proveLogging(ctx context.Context, t target, o options) error {
	tail, err := openTail(t.LogPath)
	if err != nil {
		return err
	}
	defer tail.Close()
	if err := mark(ctx, tail, t, o, "wafbench-proof-start"); err != nil {
		return fmt.Errorf("the marker rule 999999 is not logged (is match_log on?): %v", err)
	}
	st, _, err := exchange(ctx, t.Addr, proofAttack, "GET", o.Timeout)
	if err = statusOnly(err); err != nil {
		return fmt.Errorf("canary attack: %v", err)
	}
	if st != 200 {
		return fmt.Errorf("canary attack answered %d, want 200 (crs-test runs DetectionOnly)", st)
	}
	if err := mark(ctx, tail, t, o, "wafbench-proof-end"); err != nil {
		return err
	}
	if ids := iDs(tail.last); !slices.Contains(ids, 942100) {
		return fmt.Errorf("canary attack: rule 942100 not logged (logged %v)", ids)
	}
	return nil
}

// runModes runs the suite through each mode of ms, one fresh host per mode
// started by sess (whose Config has Conformance set). A mode that cannot
// start, fails its preflight or dies mid-suite is recorded in its
// ModeResult; the others still run. progress, when set, gets one line per
// finished mode and is called per test.
func runModes(ctx context.Context, sess *runner.Session, ms []modes.Mode, s *suite, ov *overrides, o options, status func(string)) ([]modeResult, error) {
	o = o.withDefaults()
	var out []modeResult
	for _, m := range ms {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		name := m.String()
		mr := modeResult{Mode: name, Engine: m.Engine, Host: string(m.Host), EngineVersion: o.engineVersions[name]}
		if m.Build != nil {
			mr.Build = m.Build.Mode()
		}
		start := time.Now()
		h, err := sess.Start(ctx, name, "crs-test-"+strings.ReplaceAll(name, "@", "_"))
		if err == nil {
			if h.Preflight != nil {
				mr.ModuleSHA256, mr.EngineLib = h.Preflight.ModuleSHA256, h.Preflight.EngineLib
			}
			t := target{Addr: h.Addr, LogPath: h.LogPath, Exited: h.Exited, CPU: processCPU(h.PID), Waiting: processWaiting(h.PID)}
			o := o
			switch {
			case m.Base == modes.CorazaWasm && o.WasmTimeout > o.Timeout:
				o.idle, o.Timeout = o.WasmIdle, o.WasmTimeout
			case o.BusyTimeout > o.Timeout:
				o.idle, o.Timeout = o.Timeout, o.BusyTimeout
			}
			err = proveLogging(ctx, t, o)
			mr.StartSeconds = time.Since(start).Seconds()
			if err != nil {
				err = fmt.Errorf("%s: preflight: %v", name, err)
			} else {
				var res []testResult
				res, err = runSuite(ctx, s, t, o)
				mr.Tests = res
			}
			if cpu, err := hostCPU(t); err == nil {
				mr.HostCPU = seconds(cpu)
			}
			h.Stop()
		}
		if ctx.Err() != nil && len(mr.Tests) == 0 {
			return out, ctx.Err()
		}
		if err != nil {
			mr.Error = err.Error()
		}
		mr.WallSeconds = time.Since(start).Seconds()
		fillNotRun(&mr, s, o)
		mr.judge(ov, m)
		out = append(out, mr)
		if status != nil {
			status(summaryLine(&mr))
		}
		if ctx.Err() != nil {
			return out, ctx.Err() // the interrupted mode's finished tests are kept
		}
	}
	return out, nil
}

// judge applies ov to mr's observed outcomes and counts them.
func (mr *modeResult) judge(ov *overrides, m modes.Mode) {
	ov.apply(mr, m)
	mr.count()
	for _, r := range mr.Tests {
		if e := ov.entry(r.Override); r.Outcome == overridden && e != nil {
			if mr.Counts.ByCause == nil {
				mr.Counts.ByCause = map[string]int{}
			}
			mr.Counts.ByCause[e.Cause]++
		}
	}
}

// fillNotRun adds every selected test the mode did not reach as NotRun.
func fillNotRun(mr *modeResult, s *suite, o options) {
	have := map[string]bool{}
	for _, r := range mr.Tests {
		have[r.ID] = true
	}
	for _, tt := range s.Tests {
		if (o.Only == nil || o.Only.MatchString(tt.ID)) && !have[tt.ID] {
			mr.Tests = append(mr.Tests, testResult{ID: tt.ID, RuleFile: tt.RuleFile, Outcome: notRun, Why: mr.Error})
		}
	}
}

func (mr *modeResult) count() {
	mr.Counts = counts{}
	files := map[string]*fileCounts{}
	var order []string
	for _, r := range mr.Tests {
		fc := files[r.RuleFile]
		if fc == nil {
			fc = &fileCounts{RuleFile: r.RuleFile}
			files[r.RuleFile] = fc
			order = append(order, r.RuleFile)
		}
		for _, c := range []*counts{&mr.Counts, &fc.counts} {
			switch r.Outcome {
			case passed:
				c.Passed++
			case Failed:
				c.Failed++
			case overridden:
				c.Overridden++
			default:
				c.NotRun++
			}
		}
	}
	slices.Sort(order)
	mr.ByRuleFile = nil
	for _, f := range order {
		mr.ByRuleFile = append(mr.ByRuleFile, *files[f])
	}
}

func summaryLine(mr *modeResult) string {
	s := fmt.Sprintf("crs-test %s: %d passed, %d failed, %d overridden", mr.Mode, mr.Counts.Passed, mr.Counts.Failed, mr.Counts.Overridden)
	if mr.Counts.NotRun > 0 {
		s += fmt.Sprintf(", %d not run", mr.Counts.NotRun)
	}
	s += fmt.Sprintf(" in %.0fs", mr.WallSeconds)
	if mr.Error != "" {
		s += " — " + mr.Error
	}
	return s
}

// processWaiting reads process pid's run-queue wait; nil for pid ≤ 0.
func processWaiting(pid int) func() (time.Duration, error) {
	if pid <= 0 {
		return nil
	}
	return func() (time.Duration, error) { return procstat.RunQueueWait(pid) }
}

// processCPU reads pid's CPU time (every thread, exited ones included);
// nil for no process (ref-direct).
func processCPU(pid int) func() (time.Duration, error) {
	if pid <= 0 {
		return nil
	}
	return func() (time.Duration, error) { return procstat.CPUTime(pid) }
}

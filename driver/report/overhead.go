package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/perf/benchfmt"

	"wafbench/driver/account"
	"wafbench/driver/perf"
	"wafbench/driver/stats"
)

// engineBenchFile is the output of the in-process engine benchmarks
// (BenchmarkEngine/<engine>/<workload>, Go benchmark format) that
// scripts/overhead.sh writes into a run directory. When it is present the
// report gains an "Integration overhead" section.
const engineBenchFile = "engine-bench.txt"

// overheadGoal is the integration overhead the project aims for: a WAF mode
// may cost at most this multiple of the engine's own CPU per request over
// passthrough.
const overheadGoal = 1.10

// engineBenchBase is the top-level benchmark name, without "Benchmark".
const engineBenchBase = "Engine"

// engineBench is the in-process cost of one engine on one workload under
// one allocator: the ns/op values of every BenchmarkEngine/<engine>/<workload>
// result in the file with the same "allocator: …" configuration line,
// summarized by their median.
type engineBench struct {
	Engine   string
	Workload string
	// Allocator is the value of the file configuration line "allocator: …"
	// in force for these results ("" when the file does not say). Inside
	// Envoy, libmodsecurity allocates with Envoy's exported tcmalloc.
	Allocator string
	// Caches is the file configuration line "caches: …" in force ("" or
	// "hot": the engine's data stays cached between requests, as in a
	// hot loop; "cold N": N bytes written between requests, untimed,
	// tests/enginebench.ThrashEnv).
	Caches  string
	NsPerOp stats.Estimate
	// Parts is the benchmark's CPU per op split as Envoy's cost account
	// splits the hooks (account.Alone of its perf profile,
	// perf/engine-<engine>-<workload>-<allocator>-<hot|coldN>.folded), µs
	// by account.Part; nil without a profile.
	Parts  []float64
	BPerOp float64 // median B/op; NaN when not reported
	Allocs float64 // median allocs/op; NaN when not reported
}

// OverheadRow compares one WAF mode on one workload × conns of the run with
// the engine benchmark of the same engine and workload.
type OverheadRow struct {
	Mode      string
	Workload  string
	Conns     int
	Allocator string // of the engine benchmark, see EngineBench
	Caches    string // of the engine benchmark, see EngineBench
	// EngineUs is the engine-only CPU per request in µs (median over the
	// benchmark's -count samples).
	EngineUs stats.Estimate
	// ModeReqPerS and PassReqPerS are the run's group medians.
	ModeReqPerS, PassReqPerS float64
	// ModeCPUUs and PassCPUUs are the run's group medians of Envoy CPU µs
	// per request; ModeN and PassN the records behind them.
	ModeCPUUs, PassCPUUs float64
	ModeN, PassN         int
	// AddedUs is ModeCPUUs − PassCPUUs; RestUs is AddedUs − EngineUs.Median,
	// the CPU per request the mode adds beyond the engine itself.
	AddedUs, RestUs float64
	// Overhead is AddedUs ÷ EngineUs.Median.
	Overhead float64
	// PerRepeat is, per repeat with both modes, (mode − passthrough CPU in
	// that repeat) ÷ EngineUs.Median; Repeats names the repeats.
	PerRepeat []float64
	Repeats   []int
	// Meets reports Overhead ≤ OverheadGoal.
	Meets bool
}

// overhead is the integration-overhead section of a report.
type overhead struct {
	File    string   // EngineBenchFile
	Config  []string // the file's configuration lines ("key: value"), in order
	Engines []engineBench
	Rows    []OverheadRow
}

// readOverhead reads dir/engine-bench.txt and pairs it with s. It returns
// nil and no error when the file does not exist.
func readOverhead(dir string, s *stats.Summary) (*overhead, error) {
	f, err := os.Open(filepath.Join(dir, engineBenchFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ebs, cfg, err := parseEngineBench(f, engineBenchFile)
	if err != nil {
		return nil, err
	}
	for i := range ebs {
		if ebs[i].Parts, err = benchParts(dir, &ebs[i]); err != nil {
			return nil, err
		}
	}
	return &overhead{File: engineBenchFile, Config: cfg, Engines: ebs, Rows: overheadRows(ebs, s)}, nil
}

// benchProfile is the folded profile scripts/overhead.sh writes for eb,
// relative to the run directory, without the .gz keep adds.
func benchProfile(eb *engineBench) string {
	tag := "hot"
	if eb.Caches != "" {
		tag = strings.ReplaceAll(eb.Caches, " ", "")
	}
	return filepath.Join("perf", "engine-"+eb.Engine+"-"+eb.Workload+"-"+eb.Allocator+"-"+tag+".folded")
}

// benchParts reads eb's profile, if the run has one, and returns its CPU
// per op in µs by account part.
func benchParts(dir string, eb *engineBench) ([]float64, error) {
	var st perf.Folded
	var err error
	for _, name := range []string{benchProfile(eb), benchProfile(eb) + ".gz"} {
		if st, err = perf.ReadFolded(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	a := account.Alone(st)
	if a.Total() == 0 {
		return nil, nil
	}
	parts := make([]float64, account.NParts)
	for p := range parts {
		parts[p] = a.Share(account.Part(p)) * eb.NsPerOp.Median / 1e3
	}
	return parts, nil
}

// parseEngineBench reads Go benchmark output and returns one EngineBench per
// BenchmarkEngine/<engine>/<workload> and allocator (a -N GOMAXPROCS suffix
// is ignored), sorted by engine (passthrough, modsecurity, coraza order),
// workload and allocator, plus the distinct file configuration lines (goos,
// cpu, pkg…; not allocator, which is a field) in order of appearance. Other benchmarks are skipped; a syntax error or an Engine
// result without ns/op is an error naming the line.
func parseEngineBench(r io.Reader, name string) ([]engineBench, []string, error) {
	type key struct{ engine, workload, allocator, caches string }
	ns, bs, allocs := map[key][]float64{}, map[key][]float64{}, map[key][]float64{}
	var cfg []string
	seen := map[string]bool{}
	br := benchfmt.NewReader(r, name)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, nil, fmt.Errorf("%s: %w", name, rec)
		case *benchfmt.Result:
			allocator, caches := engineBenchConfig(rec, seen, &cfg)
			sub, ok := engineBenchSub(rec)
			if !ok {
				continue
			}
			file, line := rec.Pos()
			v, ok := rec.Value("sec/op") // benchfmt normalizes ns/op to sec/op
			if !ok {
				return nil, nil, fmt.Errorf("%s:%d: %s has no ns/op", file, line, rec.Name)
			}
			k := key{sub[0], sub[1], allocator, caches}
			ns[k] = append(ns[k], v*1e9)
			if b, ok := rec.Value("B/op"); ok {
				bs[k] = append(bs[k], b)
			}
			if a, ok := rec.Value("allocs/op"); ok {
				allocs[k] = append(allocs[k], a)
			}
		}
	}
	if err := br.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []engineBench
	for k, v := range ns {
		out = append(out, engineBench{Engine: k.engine, Workload: k.workload, Allocator: k.allocator, Caches: k.caches, NsPerOp: stats.Median(v),
			BPerOp: stats.MedianOf(bs[k]), Allocs: stats.MedianOf(allocs[k])})
	}
	sortEngineBench(out)
	return out, cfg, nil
}

// engineBenchConfig reads rec's allocator and cache state ("" for hot) from its
// file configuration, and appends every other configuration line not seen
// before to cfg.
func engineBenchConfig(rec *benchfmt.Result, seen map[string]bool, cfg *[]string) (allocator, caches string) {
	for _, c := range rec.Config {
		if !c.File {
			continue
		}
		switch c.Key {
		case "allocator":
			allocator = string(c.Value)
			continue
		case "caches":
			if v := string(c.Value); v != "hot" {
				caches = v
			}
			continue
		}
		line := c.Key + ": " + string(c.Value)
		if !seen[line] {
			seen[line] = true
			*cfg = append(*cfg, line)
		}
	}
	return allocator, caches
}

// engineBenchSub is the engine and workload of a
// BenchmarkEngine/<engine>/<workload> result; ok is false for any other.
func engineBenchSub(rec *benchfmt.Result) (sub []string, ok bool) {
	base, parts := rec.Name.Parts()
	if string(base) != engineBenchBase {
		return nil, false
	}
	for _, p := range parts {
		if len(p) > 1 && p[0] == '/' {
			sub = append(sub, string(p[1:]))
		}
	}
	return sub, len(sub) == 2
}

// sortEngineBench orders benchmarks by engine (passthrough, modsecurity,
// coraza order), workload, allocator and caches.
func sortEngineBench(out []engineBench) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := stats.ModeRank(a.Engine), stats.ModeRank(b.Engine); ra != rb {
			return ra < rb
		}
		if a.Engine != b.Engine {
			return a.Engine < b.Engine
		}
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		if a.Allocator != b.Allocator {
			return a.Allocator < b.Allocator
		}
		return a.Caches < b.Caches
	})
}

// overheadRows pairs every WAF mode × workload × conns group of s that has
// a passthrough group with each engine benchmark of the same name (the mode
// name is the engine name): one row per allocator benchmarked.
func overheadRows(ebs []engineBench, s *stats.Summary) []OverheadRow {
	var rows []OverheadRow
	for _, mode := range s.Modes {
		if mode == stats.Baseline {
			continue
		}
		for _, wl := range s.Workloads {
			g := s.Group(stats.Key{Mode: mode, Workload: wl.Workload, Conns: wl.Conns})
			pg := s.Group(stats.Key{Mode: stats.Baseline, Workload: wl.Workload, Conns: wl.Conns})
			if g == nil || pg == nil {
				continue
			}
			for i := range ebs {
				if ebs[i].Engine == mode && ebs[i].Workload == wl.Workload {
					rows = append(rows, overheadRow(&ebs[i], mode, wl, g, pg, s))
				}
			}
		}
	}
	return rows
}

func overheadRow(eb *engineBench, mode string, wl stats.WorkloadKey, g, pg *stats.Group, s *stats.Summary) OverheadRow {
	us := scaleEstimate(eb.NsPerOp, 1e-3)
	r := OverheadRow{
		Mode: mode, Workload: wl.Workload, Conns: wl.Conns, Allocator: eb.Allocator, Caches: eb.Caches, EngineUs: us,
		ModeReqPerS: g.ReqPerS.Median, PassReqPerS: pg.ReqPerS.Median,
		ModeCPUUs: g.CPUUsPerReq.Median, PassCPUUs: pg.CPUUsPerReq.Median, ModeN: g.N, PassN: pg.N,
	}
	r.AddedUs = r.ModeCPUUs - r.PassCPUUs
	r.RestUs = r.AddedUs - us.Median
	r.Overhead = r.AddedUs / us.Median
	r.Meets = r.Overhead <= overheadGoal
	for _, b := range s.Baseline {
		if b.Mode == mode && b.WorkloadKey == wl {
			r.Repeats = b.Repeats
			for _, v := range b.Values {
				r.PerRepeat = append(r.PerRepeat, v/us.Median)
			}
		}
	}
	return r
}

func scaleEstimate(e stats.Estimate, k float64) stats.Estimate {
	out := e
	out.Median, out.Lo, out.Hi = e.Median*k, e.Lo*k, e.Hi*k
	out.Values = make([]float64, len(e.Values))
	for i, v := range e.Values {
		out.Values[i] = v * k
	}
	return out
}

// overheadScope says what the engine-only number includes and excludes.
const overheadScope = "Engine-only is the in-process Go benchmark `BenchmarkEngine/<engine>/<workload>` " +
	"(median ns/op over its `-count` samples) on the same CRS files and the request the module sees in Envoy " +
	"(lower-case header names, Host from :authority, content-length, x-forwarded-proto). It includes a new " +
	"transaction, connection, URI, request headers and phase 1, the body and phase 2, logging (phase 5) and " +
	"freeing the transaction; for ModSecurity also one cgo call and the C API's header parsing, for Coraza the " +
	"Go allocations and the GC work they cause (GOMAXPROCS=1 on the Envoy CPU). It excludes everything Envoy " +
	"does around the engine: HTTP parsing, routing and the upstream request (in passthrough as well, so " +
	"subtracted), and what only a WAF mode adds: holding headers and buffering the body until end of stream, " +
	"the ABI callbacks (header and body-chunk reads, attribute getters, counters, local replies), copying " +
	"headers into engine strings, the Envoy→Go cgo transitions of the Coraza module and its Go runtime " +
	"(scheduler, GC) running on Envoy's thread, and cache and branch-predictor pollution between Envoy and " +
	"the engine. Allocator: inside Envoy, libmodsecurity's malloc/free resolve to the allocator Envoy's " +
	"executable exports (tcmalloc); each engine-only row names the allocator its benchmark ran with " +
	"(scripts/overhead.sh runs ModSecurity under glibc malloc and under Debian's tcmalloc_minimal by " +
	"LD_PRELOAD; Coraza's Go heap does not use malloc, labelled go)."

func writeOverhead(m *md, fig *figures) {
	ov := fig.Overhead
	if ov == nil {
		return
	}
	m.p("## Integration overhead")
	m.nl()
	m.p("Overhead = (mode Envoy CPU µs/req − passthrough Envoy CPU µs/req) ÷ engine-only CPU µs/req, from the group medians above and the engine benchmarks in `%s`; goal ≤ %s. Rest = added CPU − engine-only: what the integration costs beyond the engine. Per-repeat overheads divide each repeat's paired added CPU by the same engine-only median. The engine benchmarks ran in a different process at a different time, so the ratio has no confidence interval; read it with the ±30%% run-to-run noise of these hosts in mind.",
		ov.File, f(overheadGoal, 2))
	m.nl()
	if len(ov.Rows) == 0 {
		m.p("No WAF mode × workload of this run has an engine benchmark of the same name.")
		m.nl()
	} else {
		m.head("mode", "workload", "engine-only allocator", "req/s", "passthrough req/s", "engine-only µs/req (n)", "Envoy CPU µs/req", "passthrough CPU µs/req",
			"added µs/req", "rest µs/req", "overhead", "per repeat", "goal ≤ "+f(overheadGoal, 2))
		for _, r := range ov.Rows {
			goal := "**met**"
			if !r.Meets {
				goal = "not met"
			}
			m.row(r.Mode, stats.WorkloadKey{Workload: r.Workload, Conns: r.Conns}.String(), benchLabel(r.Allocator, r.Caches), f(r.ModeReqPerS, 0), f(r.PassReqPerS, 0),
				f(r.EngineUs.Median, 1)+" ("+itoa(r.EngineUs.N)+")", f(r.ModeCPUUs, 1)+" ("+itoa(r.ModeN)+")", f(r.PassCPUUs, 1)+" ("+itoa(r.PassN)+")",
				f(r.AddedUs, 1), f(r.RestUs, 1), f(r.Overhead, 3), orNone(floats(r.PerRepeat, 3)), goal)
		}
		m.nl()
	}
	m.p("%s", overheadScope)
	m.nl()
	if len(ov.Engines) > 0 {
		m.p("Engine benchmarks (µs/op: median and range over the samples):")
		m.nl()
		m.head("benchmark", "allocator", "n", "median µs/op", "min–max µs/op", "B/op", "allocs/op")
		for _, e := range ov.Engines {
			us := scaleEstimate(e.NsPerOp, 1e-3)
			lo, hi := math.NaN(), math.NaN()
			if len(us.Values) > 0 {
				lo, hi = us.Values[0], us.Values[len(us.Values)-1]
			}
			m.row("Engine/"+e.Engine+"/"+e.Workload, benchLabel(e.Allocator, e.Caches), itoa(e.NsPerOp.N), f(us.Median, 1), f(lo, 1)+"–"+f(hi, 1), f(e.BPerOp, 0), f(e.Allocs, 0))
		}
		m.nl()
	}
	if len(ov.Config) > 0 {
		m.p("Benchmark configuration: %s.", "`"+strings.Join(ov.Config, "`, `")+"`")
		m.nl()
	}
	writeOverheadCauses(m, fig)
}

// benchLabel names an engine benchmark's allocator, and its caches when
// they were cold, for the tables.
func benchLabel(allocator, caches string) string {
	if allocator == "" {
		allocator = "unrecorded"
	}
	if caches != "" {
		return allocator + ", caches " + caches
	}
	return allocator
}

type overheadRowJSON struct {
	Mode              string `json:"mode"`
	Workload          string `json:"workload"`
	Conns             int    `json:"conns"`
	Allocator         string `json:"engine_only_allocator"`
	Caches            string `json:"engine_only_caches,omitempty"`
	ReqPerS           num    `json:"req_per_s"`
	PassReqPerS       num    `json:"passthrough_req_per_s"`
	EngineUsPerReq    num    `json:"engine_only_us_per_req"`
	EngineN           int    `json:"engine_only_n"`
	EnvoyCPUUsPerReq  num    `json:"envoy_cpu_us_per_req"`
	EnvoyCPUN         int    `json:"envoy_cpu_n"`
	PassCPUUsPerReq   num    `json:"passthrough_cpu_us_per_req"`
	PassCPUN          int    `json:"passthrough_cpu_n"`
	AddedUsPerReq     num    `json:"added_cpu_us_per_req"`
	RestUsPerReq      num    `json:"rest_cpu_us_per_req"`
	Overhead          num    `json:"overhead"`
	PerRepeatOverhead []num  `json:"per_repeat_overhead"`
	PerRepeatRepeats  []int  `json:"per_repeat_repeats"`
	MeetsGoal         bool   `json:"meets_goal"`
}

type engineBenchJSON struct {
	Engine    string `json:"engine"`
	Workload  string `json:"workload"`
	Allocator string `json:"allocator"`
	Caches    string `json:"caches,omitempty"`
	N         int    `json:"n"`
	MedianNs  num    `json:"median_ns_per_op"`
	ValuesNs  []num  `json:"ns_per_op"`
	BPerOp    num    `json:"b_per_op"`
	Allocs    num    `json:"allocs_per_op"`
}

type overheadJSON struct {
	Source  string            `json:"source"`
	Goal    num               `json:"goal"`
	Formula string            `json:"formula"`
	Scope   string            `json:"engine_only_scope"`
	Config  []string          `json:"benchmark_config"`
	Rows    []overheadRowJSON `json:"rows"`
	Engines []engineBenchJSON `json:"engine_benchmarks"`
}

func overheadSummary(ov *overhead) *overheadJSON {
	if ov == nil {
		return nil
	}
	out := &overheadJSON{
		Source: ov.File, Goal: num(overheadGoal),
		Formula: "(mode envoy_cpu_us_per_req median − passthrough median) / engine-only median µs per request",
		Scope:   overheadScope, Config: append([]string{}, ov.Config...),
		Rows: []overheadRowJSON{}, Engines: []engineBenchJSON{},
	}
	for _, r := range ov.Rows {
		out.Rows = append(out.Rows, overheadRowJSON{
			Mode: r.Mode, Workload: r.Workload, Conns: r.Conns, Allocator: r.Allocator, Caches: r.Caches, ReqPerS: num(r.ModeReqPerS), PassReqPerS: num(r.PassReqPerS),
			EngineUsPerReq: num(r.EngineUs.Median), EngineN: r.EngineUs.N,
			EnvoyCPUUsPerReq: num(r.ModeCPUUs), EnvoyCPUN: r.ModeN, PassCPUUsPerReq: num(r.PassCPUUs), PassCPUN: r.PassN,
			AddedUsPerReq: num(r.AddedUs), RestUsPerReq: num(r.RestUs), Overhead: num(r.Overhead),
			PerRepeatOverhead: nums(r.PerRepeat), PerRepeatRepeats: append([]int{}, r.Repeats...), MeetsGoal: r.Meets,
		})
	}
	for _, e := range ov.Engines {
		out.Engines = append(out.Engines, engineBenchJSON{
			Engine: e.Engine, Workload: e.Workload, Allocator: e.Allocator, Caches: e.Caches, N: e.NsPerOp.N, MedianNs: num(e.NsPerOp.Median),
			ValuesNs: nums(e.NsPerOp.Values), BPerOp: num(e.BPerOp), Allocs: num(e.Allocs),
		})
	}
	return out
}

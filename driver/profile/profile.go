// Package profile reads workload and suite descriptions from profiles/*.yaml.
//
// A workload is one HTTP request (method, path, headers, body literal or
// generated to a size) with the status each mode is expected to answer and
// the connection counts it runs at. A suite names workload@conns pairs and the
// trial timing. Files are parsed strictly: an unknown field is an error that
// names the file and the field.
package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"wafbench/driver/downstream"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/driver/replay"
)

// duration is a time.Duration written as a Go duration string ("500ms").
type duration time.Duration

// UnmarshalJSON accepts a Go duration string.
func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string like \"2s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration string like \"2s\", got %q", s)
	}
	*d = duration(v)
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// body describes a request body: a literal, or prefix + fill repeated +
// suffix so that the whole body is exactly Size bytes, or a generated
// Shape (shapes.go) of Size bytes (0 = empty) or, for a form, Args fields.
type body struct {
	Literal string `json:"literal,omitempty"`
	Prefix  string `json:"prefix,omitempty"`
	Fill    string `json:"fill,omitempty"`
	Suffix  string `json:"suffix,omitempty"`
	Size    int    `json:"size,omitempty"`  // bytes, whole body
	Shape   string `json:"shape,omitempty"` // json_value, json_real, form, multipart
	Args    int    `json:"args,omitempty"`  // fields of a form shape
}

// repeat appends Text Count times.
type repeat struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
}

// Workload is one request shape.
type Workload struct {
	Name       string         `json:"name"`
	Method     string         `json:"method"`
	Path       string         `json:"path"`
	PathRepeat *repeat        `json:"path_repeat,omitempty"`
	Headers    []string       `json:"headers,omitempty"` // "Name: value", after the base headers
	Body       *body          `json:"body,omitempty"`
	Conns      []int          `json:"conns"`
	Expect     map[string]int `json:"expect"` // mode, "waf" or "default" -> status
	NoBase     bool           `json:"no_base_headers,omitempty"`
	// HeaderSet names one of the file's header_sets, sent instead of its
	// base_headers (a realistic client's 10–20 headers); Headers follow.
	HeaderSet string `json:"header_set,omitempty"`
	// Sweep declares one parameter over a range (sweep.go): the workload
	// expands into one named point per value, e.g. json_real@size=4k.
	Sweep map[string][]value `json:"sweep,omitempty"`
	// CapacityFrom names the closed-loop workload whose throughput, measured
	// earlier in the same trial at the same conns, is 100% of a load sweep;
	// Capacity gives that figure instead (req/s, every mode).
	CapacityFrom string  `json:"capacity_from,omitempty"`
	Capacity     float64 `json:"capacity,omitempty"`
	// MaxWindow caps this workload's measured window below the suite's
	// duration (or run --duration): the capacity measured before a soak
	// needs seconds, not the soak's ten minutes. 0 = no cap. With
	// MinResponses it also bounds how far the window may stretch.
	MaxWindow duration `json:"max_window,omitempty"`
	// MinResponses, with measure_verdict, stretches the measured window to
	// about this many times the verdict probe's response time when that is
	// longer than the suite's window, up to MaxWindow (required with it),
	// and gives its requests MaxWindow to answer: an input that costs the
	// engine seconds is measured over a few responses instead of ending a
	// window with none. 0 = the suite's window.
	MinResponses int `json:"min_responses,omitempty"`
	// ConnMode is "keepalive" (persistent connections, the default) or
	// "per-request" (a new connection per request); it wins over the
	// suite's and run --conn-mode.
	ConnMode string `json:"conn_mode,omitempty"`
	// Generate builds the input with a driver/adversarial family
	// (generated.go): its query, headers and body are added to the path
	// and headers above; sweep generate.size ranges over its N.
	Generate *generate `json:"generate,omitempty"`
	// MeasureVerdict makes the verdict an outcome: the runner sends the
	// request once before the window and validates the window against the
	// status that probe got; Expect stays what a correct answer is.
	MeasureVerdict bool `json:"measure_verdict,omitempty"`
	// AttackStream names a workload sent as a second, concurrent stream
	// during this workload's measured window, AttackRate times a second
	// (each on a new connection, its answer recorded); overload.
	AttackStream string  `json:"attack_stream,omitempty"`
	AttackRate   float64 `json:"attack_rate,omitempty"`
	// Mix makes the workload a weighted mix of other workloads of the same
	// set (mix.go): one trial drives them all, each response validated
	// against its own workload's expect. A mix has no request of its own.
	Mix []mixEntry `json:"mix,omitempty"`
	// Replay reads the workload's requests from a file, or selects them
	// from the CRS regression suite (mix.go): each request is a class of
	// weight 1, all expected to get Expect (for the suite: 403 in WAF
	// modes, 200 without a WAF).
	Replay *Replay `json:"replay,omitempty"`
	// Slow sends the request slowly on each connection at once instead of
	// as load (slow.go): the slow-client suite.
	Slow *SlowPlan `json:"slow,omitempty"`
	// Point is set on the workloads a sweep expanded into.
	Point *point `json:"-"`

	file    string
	entries []replay.Entry // Replay's requests, read on load
}

// Suite is a named selection of workloads with trial timing.
type Suite struct {
	Name        string   `json:"-"`
	Description string   `json:"description,omitempty"`
	Repeats     int      `json:"repeats"`
	TrialWarmup duration `json:"trial_warmup"` // once per fresh Envoy, before the first workload
	Warmup      duration `json:"warmup"`       // before each workload's measured window
	Duration    duration `json:"duration"`     // measured window per workload
	Workloads   []string `json:"workloads"`    // "name@conns"
	// Modes are the modes the suite compares when the command line names
	// none (run --modes); empty means run's default.
	Modes []string `json:"modes,omitempty"`
	// ConnMode is the connection mode of the suite's workloads that set
	// none: "keepalive" (default) or "per-request"; run --conn-mode
	// replaces it.
	ConnMode string `json:"conn_mode,omitempty"`
	// Downstream is the protocol the suite's client speaks to its host
	// ("h1", "h1-tls", "h2-tls" or "h2c"; "" = h1) and Streams its HTTP/2
	// streams per connection (0 = 1); run --downstream and --streams
	// replace them.
	Downstream string `json:"downstream,omitempty"`
	Streams    int    `json:"streams,omitempty"`
	// PrecisionTargets are the paired ratios the suite aims to measure to
	// a CI half-width target (the report's precision section; run
	// --precision adds repeats until they reach it).
	PrecisionTargets []PrecisionTarget `json:"precision_targets,omitempty"`
}

// PrecisionTarget names paired ratios: Ratio "num/den" (mode names),
// Metrics (none = req_per_s and cpu_us_per_req), Workloads "name@conns"
// (none = every workload the run measures).
type PrecisionTarget struct {
	Ratio     string   `json:"ratio"`
	Metrics   []string `json:"metrics,omitempty"`
	Workloads []string `json:"workloads,omitempty"`
}

type file struct {
	BaseHeaders []string            `json:"base_headers,omitempty"`
	HeaderSets  map[string][]string `json:"header_sets,omitempty"`
	Workloads   []Workload          `json:"workloads,omitempty"`
	Suites      map[string]Suite    `json:"suites,omitempty"`
}

// Set is every workload and suite found in a profiles directory.
type Set struct {
	BaseHeaders map[string][]string // by file
	// HeaderSets are the files' named header sets, by file then name.
	HeaderSets map[string]map[string][]string
	Workloads  map[string]*Workload
	Suites     map[string]*Suite
	Sweeps     map[string][]string // sweep name -> its point workloads, in range order
}

// Case is one workload at one connection count, as a suite runs it.
type Case struct {
	Workload *Workload
	Conns    int
}

// Window is the case's measured window when the run's is d: d, or the
// workload's max_window if that is shorter.
func (c Case) Window(d time.Duration) time.Duration {
	if m := time.Duration(c.Workload.MaxWindow); m > 0 && m < d {
		return m
	}
	return d
}

// Stretched is the case's window when the run's is d and one request took
// took (its verdict probe): Window(d), or, for a workload with
// min_responses, long enough for that many responses at took each (plus a
// tenth), up to its max_window.
func (c Case) Stretched(d, took time.Duration) time.Duration {
	w := c.Window(d)
	if n := c.Workload.MinResponses; n > 0 {
		want := time.Duration(float64(n) * 1.1 * float64(took))
		w = max(w, min(want, time.Duration(c.Workload.MaxWindow)))
	}
	return w
}

// Key is "name@conns", the suite notation.
func (c Case) Key() string { return c.Workload.Name + "@" + strconv.Itoa(c.Conns) }

// LoadDir parses every *.yaml file in dir.
func LoadDir(dir string) (*Set, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("profiles: no *.yaml files in %s", dir)
	}
	sort.Strings(paths)
	set := &Set{BaseHeaders: map[string][]string{}, HeaderSets: map[string]map[string][]string{}, Workloads: map[string]*Workload{}, Suites: map[string]*Suite{}, Sweeps: map[string][]string{}}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := set.add(filepath.Base(p), dir, b); err != nil {
			return nil, err
		}
	}
	return set, set.check()
}

// Parse reads one profile file's contents; name is used in errors.
func Parse(name string, data []byte) (*Set, error) {
	set := &Set{BaseHeaders: map[string][]string{}, HeaderSets: map[string]map[string][]string{}, Workloads: map[string]*Workload{}, Suites: map[string]*Suite{}, Sweeps: map[string][]string{}}
	if err := set.add(name, ".", data); err != nil {
		return nil, err
	}
	return set, set.check()
}

func (s *Set) add(name, dir string, data []byte) error {
	var f file
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return yamlError(name, data, err)
	}
	for _, h := range f.BaseHeaders {
		if _, _, err := splitHeader(h); err != nil {
			return fmt.Errorf("profile %s: base_headers: %v", name, err)
		}
	}
	s.BaseHeaders[name] = f.BaseHeaders
	for _, n := range sortedKeys(f.HeaderSets) {
		if len(f.HeaderSets[n]) == 0 {
			return fmt.Errorf("profile %s: header_sets.%s: want at least one header", name, n)
		}
		for _, h := range f.HeaderSets[n] {
			if _, _, err := splitHeader(h); err != nil {
				return fmt.Errorf("profile %s: header_sets.%s: %v", name, n, err)
			}
		}
	}
	s.HeaderSets[name] = f.HeaderSets
	for i := range f.Workloads {
		if _, dup := s.Sweeps[f.Workloads[i].Name]; dup {
			return fmt.Errorf("profile %s: workload %s defined twice", name, f.Workloads[i].Name)
		}
		points, err := f.Workloads[i].expand()
		if err != nil {
			return fmt.Errorf("profile %s: %v", name, err)
		}
		for _, w := range points {
			w.file = name
			if err := w.validate(); err != nil {
				return fmt.Errorf("profile %s: %v", name, err)
			}
			if _, ok := f.HeaderSets[w.HeaderSet]; w.HeaderSet != "" && !ok {
				return fmt.Errorf("profile %s: workload %s: header_set: no set %q in this file (known: %s)", name, w.Name, w.HeaderSet, strings.Join(sortedKeys(f.HeaderSets), ", "))
			}
			if w.HeaderSet != "" && w.NoBase {
				return fmt.Errorf("profile %s: workload %s: header_set excludes no_base_headers", name, w.Name)
			}
			if err := w.readReplay(dir); err != nil {
				return fmt.Errorf("profile %s: workload %s: replay: %v", name, w.Name, err)
			}
			if _, dup := s.Workloads[w.Name]; dup {
				return fmt.Errorf("profile %s: workload %s defined twice", name, w.Name)
			}
			s.Workloads[w.Name] = &w
			if w.Point != nil {
				s.Sweeps[w.Point.Base] = append(s.Sweeps[w.Point.Base], w.Name)
			}
		}
	}
	for n, su := range f.Suites {
		su := su
		su.Name = n
		if _, dup := s.Suites[n]; dup {
			return fmt.Errorf("profile %s: suite %s defined twice", name, n)
		}
		s.Suites[n] = &su
	}
	return nil
}

func (s *Set) check() error {
	for _, n := range sortedKeys(s.Workloads) {
		if err := s.checkMix(s.Workloads[n]); err != nil {
			return err
		}
	}
	for _, n := range sortedKeys(s.Workloads) {
		w := s.Workloads[n]
		if err := s.checkAttackStream(w); err != nil {
			return err
		}
		if w.MaxWindow < 0 {
			return fmt.Errorf("workload %s: max_window: want ≥ 0, got %v", n, time.Duration(w.MaxWindow))
		}
		if w.MinResponses < 0 || (w.MinResponses > 0 && (!w.MeasureVerdict || w.MaxWindow <= 0)) {
			return fmt.Errorf("workload %s: min_responses: want ≥ 0, and > 0 only with measure_verdict and a max_window, got %d", n, w.MinResponses)
		}
		if w.CapacityFrom == "" {
			continue
		}
		if src, ok := s.Workloads[w.CapacityFrom]; !ok || src.Point != nil {
			return fmt.Errorf("workload %s: capacity_from: want a plain closed-loop workload, got %q", n, w.CapacityFrom)
		}
	}
	for _, n := range sortedKeys(s.Suites) {
		su := s.Suites[n]
		if err := su.validate(); err != nil {
			return fmt.Errorf("suite %s: %v", n, err)
		}
		if _, err := s.Cases(su.Workloads); err != nil {
			return fmt.Errorf("suite %s: %v", n, err)
		}
	}
	return nil
}

func (w *Workload) validate() error {
	if w.Name == "" {
		return fmt.Errorf("workload without a name")
	}
	where := "workload " + w.Name
	if len(w.Mix) > 0 {
		return w.validateMix(where)
	}
	if w.Replay != nil {
		return w.validateReplay(where)
	}
	switch w.Method {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH":
	default:
		return fmt.Errorf("%s: method: want GET, HEAD, POST, PUT, DELETE, OPTIONS or PATCH, got %q", where, w.Method)
	}
	if !strings.HasPrefix(w.Path, "/") {
		return fmt.Errorf("%s: path: want it to start with /, got %q", where, w.Path)
	}
	if _, err := load.ParseConnMode(w.ConnMode); err != nil {
		return fmt.Errorf("%s: conn_mode: %v", where, err)
	}
	if w.PathRepeat != nil && w.PathRepeat.Count < 0 {
		return fmt.Errorf("%s: path_repeat.count: want ≥ 0, got %d", where, w.PathRepeat.Count)
	}
	for _, h := range w.Headers {
		if _, _, err := splitHeader(h); err != nil {
			return fmt.Errorf("%s: headers: %v", where, err)
		}
	}
	if w.Generate != nil {
		if err := w.validateGenerate(where); err != nil {
			return err
		}
	}
	if w.Slow != nil {
		if err := w.validateSlow(where); err != nil {
			return err
		}
	}
	if b := w.Body; b != nil && b.Shape != "" {
		if err := b.validateShape(where, w.Headers); err != nil {
			return err
		}
	} else if b != nil {
		if b.Args != 0 {
			return fmt.Errorf("%s: body: args applies to shape form only", where)
		}
		if b.Literal != "" && (b.Fill != "" || b.Size != 0 || b.Prefix != "" || b.Suffix != "") {
			return fmt.Errorf("%s: body: literal excludes prefix, fill, suffix and size", where)
		}
		if b.Literal == "" {
			if b.Fill == "" || b.Size <= 0 {
				return fmt.Errorf("%s: body: want literal, or fill with size > 0 (bytes)", where)
			}
			if len(b.Prefix)+len(b.Suffix) > b.Size {
				return fmt.Errorf("%s: body: size %d is smaller than prefix+suffix (%d bytes)", where, b.Size, len(b.Prefix)+len(b.Suffix))
			}
		}
	}
	return w.checkConnsExpect(where)
}

// checkConnsExpect checks the connection counts and the expect map.
func (w *Workload) checkConnsExpect(where string) error {
	if len(w.Conns) == 0 {
		return fmt.Errorf("%s: conns: want at least one connection count", where)
	}
	for _, c := range w.Conns {
		if c < 1 || c > load.MaxConns {
			return fmt.Errorf("%s: conns: want 1..%d, got %d", where, load.MaxConns, c)
		}
	}
	return w.checkExpect(where)
}

// checkExpect checks the expect map: a status per mode, "default" given.
func (w *Workload) checkExpect(where string) error {
	if len(w.Expect) == 0 {
		return fmt.Errorf("%s: expect: want a status per mode (at least \"default\")", where)
	}
	for k, v := range w.Expect {
		if k != "default" && k != "waf" {
			if _, err := modes.Parse(k); err != nil {
				return fmt.Errorf("%s: expect.%s: want \"default\", \"waf\" or a mode name: %v", where, k, err)
			}
		}
		if v < 100 || v > 599 {
			return fmt.Errorf("%s: expect.%s: want an HTTP status 100..599, got %d", where, k, v)
		}
	}
	if _, ok := w.Expect["default"]; !ok {
		return fmt.Errorf("%s: expect: want a \"default\" status", where)
	}
	return nil
}

func (su *Suite) validate() error {
	if su.Repeats < 1 {
		return fmt.Errorf("repeats: want ≥ 1, got %d", su.Repeats)
	}
	if su.Duration <= 0 {
		return fmt.Errorf("duration: want > 0")
	}
	if su.Warmup < 0 || su.TrialWarmup < 0 {
		return fmt.Errorf("warmup: want ≥ 0")
	}
	if len(su.Workloads) == 0 {
		return fmt.Errorf("workloads: want at least one")
	}
	for _, m := range su.Modes {
		if _, err := modes.Parse(m); err != nil {
			return fmt.Errorf("modes: %v", err)
		}
	}
	if _, err := load.ParseConnMode(su.ConnMode); err != nil {
		return fmt.Errorf("conn_mode: %v", err)
	}
	if _, err := downstream.Parse(su.Downstream); err != nil {
		return fmt.Errorf("downstream: %v", err)
	}
	if su.Streams < 0 || su.Streams > load.MaxStreams {
		return fmt.Errorf("streams: want 1..%d (0 = 1), got %d", load.MaxStreams, su.Streams)
	}
	for _, t := range su.PrecisionTargets {
		num, den, ok := strings.Cut(t.Ratio, "/")
		if !ok {
			return fmt.Errorf("precision_targets: ratio: want <mode>/<mode>, got %q", t.Ratio)
		}
		for _, m := range []string{num, den} {
			if _, err := modes.Parse(m); err != nil {
				return fmt.Errorf("precision_targets: ratio %s: %v", t.Ratio, err)
			}
		}
		for _, w := range t.Workloads {
			if !slices.Contains(su.Workloads, w) {
				return fmt.Errorf("precision_targets: ratio %s: workload %s is not in the suite's workloads", t.Ratio, w)
			}
		}
	}
	return nil
}

// ConnModeIn returns the connection mode of w in a run whose default is def
// (run --conn-mode, else the suite's conn_mode): w's own conn_mode if it
// has one, else def, else keep-alive. The values were validated on load.
func (w *Workload) ConnModeIn(def string) load.ConnMode {
	s := w.ConnMode
	if s == "" {
		s = def
	}
	m, _ := load.ParseConnMode(s)
	return m
}

// Cases resolves "name@conns" (or "name", meaning every conns the workload
// lists) into cases, in the order given. A sweep's name stands for all its
// points (json_real@1: every size at one connection); a point is named in
// full (json_real@size=4k@1). A rate-sweep point must come after the
// closed-loop case that gives its capacity.
func (s *Set) Cases(keys []string) ([]Case, error) {
	var out []Case
	seen := map[string]bool{}
	for _, k := range keys {
		ws, connStr, hasConns := s.lookup(k)
		if ws == nil {
			return nil, fmt.Errorf("unknown workload %q (known: %s)", k, strings.Join(s.knownNames(), ", "))
		}
		for _, w := range ws {
			conns := w.Conns
			if hasConns {
				c, err := strconv.Atoi(connStr)
				if err != nil || c < 1 || c > load.MaxConns {
					return nil, fmt.Errorf("workload %s: conns: want 1..%d, got %q", k, load.MaxConns, connStr)
				}
				conns = []int{c}
			}
			for _, c := range conns {
				cs := Case{Workload: w, Conns: c}
				if seen[cs.Key()] {
					return nil, fmt.Errorf("workload %s listed twice", cs.Key())
				}
				seen[cs.Key()] = true
				out = append(out, cs)
			}
		}
	}
	if err := checkCapacity(out); err != nil {
		return nil, err
	}
	return out, nil
}

// lookup finds the workloads k names: a workload or sweep, with or without
// a trailing "@conns".
func (s *Set) lookup(k string) (ws []*Workload, conns string, hasConns bool) {
	named := func(name string) []*Workload {
		if w, ok := s.Workloads[name]; ok {
			return []*Workload{w}
		}
		var out []*Workload
		for _, p := range s.Sweeps[name] {
			out = append(out, s.Workloads[p])
		}
		return out
	}
	if ws := named(k); ws != nil {
		return ws, "", false
	}
	if i := strings.LastIndex(k, "@"); i >= 0 {
		if ws := named(k[:i]); ws != nil {
			return ws, k[i+1:], true
		}
	}
	return nil, "", false
}

// knownNames lists workloads and sweeps, sweep points left out.
func (s *Set) knownNames() []string {
	var out []string
	for _, n := range sortedKeys(s.Workloads) {
		if s.Workloads[n].Point == nil {
			out = append(out, n)
		}
	}
	out = append(out, sortedKeys(s.Sweeps)...)
	sort.Strings(out)
	return out
}

// Expected is the status the workload should get in mode: the first of the
// mode's expect keys (modes.ExpectKeys: its own name, its engine's default
// build, "waf" for any engine, "default") that the workload lists.
func (w *Workload) Expected(mode string) int {
	for _, k := range modes.ExpectKeys(mode) {
		if v, ok := w.Expect[k]; ok {
			return v
		}
	}
	return 0
}

// FullPath is the path with its generated repeat appended.
func (w *Workload) FullPath() string {
	if in, ok := w.generated(); ok && in.Query != "" {
		sep := "?"
		if strings.Contains(w.Path, "?") {
			sep = "&"
		}
		return w.Path + sep + in.Query
	}
	if w.PathRepeat == nil {
		return w.Path
	}
	return w.Path + strings.Repeat(w.PathRepeat.Text, w.PathRepeat.Count)
}

// BodyBytes builds the body once; nil for none.
func (w *Workload) BodyBytes() []byte {
	if in, ok := w.generated(); ok {
		return in.Body
	}
	b := w.Body
	if b == nil {
		return nil
	}
	if b.Shape != "" {
		body, _ := shapeBody(b.Shape, b.Size, b.Args) // checked by validate
		return body
	}
	if b.Literal != "" {
		return []byte(b.Literal)
	}
	var buf bytes.Buffer
	buf.Grow(b.Size)
	buf.WriteString(b.Prefix)
	n := b.Size - len(b.Prefix) - len(b.Suffix)
	for buf.Len() < len(b.Prefix)+n {
		buf.WriteString(b.Fill)
	}
	buf.Truncate(len(b.Prefix) + n)
	buf.WriteString(b.Suffix)
	return buf.Bytes()
}

// HeaderPairs is the base headers of the workload's file (or its header
// set) followed by its own, as name/value pairs in order. Host is included.
func (s *Set) HeaderPairs(w *Workload) [][2]string {
	var out [][2]string
	var hs []string
	switch {
	case w.HeaderSet != "":
		hs = append(hs, s.HeaderSets[w.file][w.HeaderSet]...)
	case !w.NoBase:
		hs = append(hs, s.BaseHeaders[w.file]...)
	}
	hs = append(hs, w.Headers...)
	for _, h := range hs {
		k, v, _ := splitHeader(h)
		out = append(out, [2]string{k, v})
	}
	if b := w.Body; b != nil && b.Shape != "" {
		out = append(out, [2]string{"Content-Type", shapes[b.Shape]})
	}
	if in, ok := w.generated(); ok {
		out = append(out, in.Headers...)
		if in.ContentType != "" {
			out = append(out, [2]string{"Content-Type", in.ContentType})
		}
	}
	return out
}

// Request is workload w serialized once as the driver sends it
// (load.Build): the request line, Host first, the other headers in order,
// Content-Length and the body. Its Name is w's name and its ExpectStatus
// 200; the caller sets both for a case and a mode.
func (s *Set) Request(w *Workload) load.Request {
	var host string
	var hs [][2]string
	for _, h := range s.HeaderPairs(w) {
		if strings.EqualFold(h[0], "Host") {
			host = h[1]
			continue
		}
		hs = append(hs, h)
	}
	r := load.Build(w.Method, w.FullPath(), hs, w.BodyBytes(), host)
	r.Name = w.Name
	return r
}

func splitHeader(h string) (string, string, error) {
	k, v, ok := strings.Cut(h, ":")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") {
		return "", "", fmt.Errorf("want \"Name: value\", got %q", h)
	}
	return k, strings.TrimSpace(v), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SuiteNames lists the suites, sorted.
func (s *Set) SuiteNames() []string { return sortedKeys(s.Suites) }

// WorkloadNames lists the workloads, sorted.
func (s *Set) WorkloadNames() []string { return sortedKeys(s.Workloads) }

// unknownField is how the strict decoder names a key no struct field takes.
var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// yamlError is err from decoding profile file name as "profile
// name:LINE: unknown key "k"" where the decoder names an unknown key: the
// YAML is decoded through JSON, which has lost the line, so the key's
// first line in data is the one named (the line is left out where the key
// is not found as a key).
func yamlError(name string, data []byte, err error) error {
	m := unknownField.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("profile %s: %v", name, err)
	}
	key := regexp.MustCompile(`(^|[{,]|^\s*-)\s*"?` + regexp.QuoteMeta(m[1]) + `"?\s*:`)
	for i, line := range strings.Split(string(data), "\n") {
		if key.MatchString(strings.TrimSpace(line)) {
			return fmt.Errorf("profile %s:%d: unknown key %q", name, i+1, m[1])
		}
	}
	return fmt.Errorf("profile %s: unknown key %q", name, m[1])
}

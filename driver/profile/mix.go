package profile

import (
	"fmt"
	"maps"
	"path/filepath"

	"wafbench/driver/load"
	"wafbench/driver/replay"
)

// mixEntry is one class of a mix: a workload of the set and its weight.
type mixEntry struct {
	Workload string `json:"workload"`
	Weight   int    `json:"weight"` // relative share, ≥ 1; the weights of a mix sum to ≤ load.MaxMixWeight
}

// validateMix checks what a mix workload can check alone: it names
// classes with weights and has no request of its own.
func (w *Workload) validateMix(where string) error {
	if w.Method != "" || w.Path != "" || w.PathRepeat != nil || len(w.Headers) > 0 || w.Body != nil || w.HeaderSet != "" || w.NoBase {
		return fmt.Errorf("%s: mix: a mix has no method, path, headers or body of its own (its classes do)", where)
	}
	if len(w.Expect) > 0 {
		return fmt.Errorf("%s: mix: expect belongs to each class's workload, not to the mix", where)
	}
	if len(w.Sweep) > 0 || w.CapacityFrom != "" || w.Capacity != 0 {
		return fmt.Errorf("%s: mix: sweeps and capacity do not apply to a mix", where)
	}
	if len(w.Mix) > 255 {
		return fmt.Errorf("%s: mix: want at most 255 classes, got %d", where, len(w.Mix))
	}
	sum := 0
	seen := map[string]bool{}
	for i, e := range w.Mix {
		if e.Workload == "" {
			return fmt.Errorf("%s: mix[%d].workload: want a workload name", where, i)
		}
		if seen[e.Workload] {
			return fmt.Errorf("%s: mix[%d].workload: %s listed twice", where, i, e.Workload)
		}
		seen[e.Workload] = true
		if e.Weight < 1 {
			return fmt.Errorf("%s: mix[%d].weight: want an integer ≥ 1, got %d", where, i, e.Weight)
		}
		sum += e.Weight
	}
	if sum > load.MaxMixWeight {
		return fmt.Errorf("%s: mix: weights sum to %d, want ≤ %d", where, sum, load.MaxMixWeight)
	}
	if len(w.Conns) == 0 {
		return fmt.Errorf("%s: conns: want at least one connection count", where)
	}
	for _, c := range w.Conns {
		if c < 1 || c > load.MaxConns {
			return fmt.Errorf("%s: conns: want 1..%d, got %d", where, load.MaxConns, c)
		}
	}
	if _, err := load.ParseConnMode(w.ConnMode); err != nil {
		return fmt.Errorf("%s: conn_mode: %v", where, err)
	}
	return nil
}

// checkMix checks a mix's classes against the set: each names a workload
// that is itself no mix (a replay is allowed: its requests share the
// entry's weight), and the expanded mix fits load's bounds.
func (s *Set) checkMix(w *Workload) error {
	for i, e := range w.Mix {
		c, ok := s.Workloads[e.Workload]
		if !ok {
			return fmt.Errorf("workload %s: mix[%d].workload: unknown workload %q", w.Name, i, e.Workload)
		}
		if len(c.Mix) > 0 {
			return fmt.Errorf("workload %s: mix[%d].workload: %s is itself a mix", w.Name, i, e.Workload)
		}
	}
	if len(w.Mix) == 0 {
		return nil
	}
	scale := s.mixScale(w)
	classes, sum := 0, 0
	for _, e := range w.Mix {
		if n := len(s.Workloads[e.Workload].entries); n > 0 {
			classes += n
		} else {
			classes++
		}
		sum += e.Weight * scale
	}
	if classes > 255 {
		return fmt.Errorf("workload %s: mix: want at most 255 classes with every replay's requests, got %d", w.Name, classes)
	}
	if sum > load.MaxMixWeight {
		return fmt.Errorf("workload %s: mix: weights sum to %d once each replay's weight is split among its requests, want ≤ %d", w.Name, sum, load.MaxMixWeight)
	}
	return nil
}

// mixScale is the factor a mix's weights are multiplied by so that every
// replay entry's weight W splits into equal integer weights over its N
// requests (W·scale/N each): the least common multiple of N/gcd(W, N).
func (s *Set) mixScale(w *Workload) int {
	scale := 1
	for _, e := range w.Mix {
		if n := len(s.Workloads[e.Workload].entries); n > 0 {
			need := n / gcd(e.Weight, n)
			scale = scale / gcd(scale, need) * need
		}
	}
	return scale
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// IsMix reports whether w sends several classes: a weighted mix or a
// replay.
func (w *Workload) IsMix() bool { return len(w.Mix) > 0 || w.Replay != nil }

// Classes serializes a mix's classes for mode, in the mix's order: each
// class's request (Set.Request) named after its workload, with that
// workload's expected status in mode and its weight. A replay's classes
// are its requests in file (or suite) order, each of weight 1, named
// "<n> METHOD path" ("<test> METHOD path" for the CRS suite) and expected
// to get w's status in mode. A replay inside a mix contributes all its
// requests, its weight split equally among them (the other weights scaled
// by Set.mixScale so that every weight stays an integer).
func (s *Set) Classes(w *Workload, mode string) []load.Class {
	if w.Replay != nil {
		return w.replayClasses(mode, 1)
	}
	scale := s.mixScale(w)
	out := make([]load.Class, 0, len(w.Mix))
	for _, e := range w.Mix {
		cw := s.Workloads[e.Workload]
		if cw.Replay != nil {
			out = append(out, cw.replayClasses(mode, e.Weight*scale/len(cw.entries))...)
			continue
		}
		r := s.Request(cw)
		r.Name = cw.Name
		r.ExpectStatus = cw.Expected(mode)
		out = append(out, load.Class{Request: r, Weight: e.Weight * scale})
	}
	return out
}

// replayClasses are a replay's requests as classes of weight each.
func (w *Workload) replayClasses(mode string, weight int) []load.Class {
	out := make([]load.Class, 0, len(w.entries))
	for i, e := range w.entries {
		r := load.Build(e.Method, e.Target, e.Headers, e.Body, e.Host)
		name := e.Name
		if name == "" {
			name = fmt.Sprint(i + 1)
		}
		r.Name = fmt.Sprintf("%s %s %s", name, e.Method, shortTarget(e.Target))
		r.ExpectStatus = w.Expected(mode)
		out = append(out, load.Class{Request: r, Weight: weight})
	}
	return out
}

// Replay names the source of a replay's requests: File relative to the
// profiles directory with Format "vegeta" (targets, text or JSON lines) or
// "har"; or Format "crs" with Select, a seeded selection of the CRS
// regression suite's attacks (replay.ReadCRS), no file.
type Replay struct {
	File   string            `json:"file,omitempty"`
	Format string            `json:"format"`
	Select *replay.CRSSelect `json:"select,omitempty"`
}

// crsExpect is every CRS replay's expectation: the selection keeps only
// tests the benchmark configuration denies (403 from every WAF mode); with
// no WAF the upstream answers 200.
var crsExpect = map[string]int{"default": 200, "waf": 403}

// validateReplay checks a replay workload alone: a file and format (or
// the crs format and a selection), and no request of its own.
func (w *Workload) validateReplay(where string) error {
	if w.Method != "" || w.Path != "" || w.PathRepeat != nil || len(w.Headers) > 0 || w.Body != nil || w.HeaderSet != "" || w.NoBase {
		return fmt.Errorf("%s: replay: a replay has no method, path, headers or body of its own (its file does)", where)
	}
	switch w.Replay.Format {
	case replay.CRS:
		if w.Replay.File != "" {
			return fmt.Errorf("%s: replay.file: format crs reads the suite embedded in the coraza-coreruleset module, no file", where)
		}
		if w.Replay.Select == nil {
			return fmt.Errorf("%s: replay.select: format crs wants {count: 1..255, seed: N, rules: [rule-ID prefixes]}", where)
		}
		if len(w.Expect) > 0 {
			return fmt.Errorf("%s: expect: a crs replay's statuses follow from its selection (403 in WAF modes, 200 without a WAF)", where)
		}
		w.Expect = maps.Clone(crsExpect)
	case replay.Vegeta, replay.HAR:
		if w.Replay.File == "" {
			return fmt.Errorf("%s: replay.file: want a file relative to the profiles directory", where)
		}
		if w.Replay.Select != nil {
			return fmt.Errorf("%s: replay.select: only format crs selects", where)
		}
	default:
		return fmt.Errorf("%s: replay.format: want %s, %s or %s, got %q", where, replay.Vegeta, replay.HAR, replay.CRS, w.Replay.Format)
	}
	if len(w.Sweep) > 0 || w.CapacityFrom != "" || w.Capacity != 0 {
		return fmt.Errorf("%s: replay: sweeps and capacity do not apply to a replay", where)
	}
	return w.checkConnsExpect(where)
}

// readReplay reads a replay workload's file (relative to dir).
func (w *Workload) readReplay(dir string) error {
	if w.Replay == nil {
		return nil
	}
	if w.Replay.Format == replay.CRS {
		es, err := replay.ReadCRS(*w.Replay.Select)
		if err != nil {
			return err
		}
		w.entries = es
		return nil
	}
	p := w.Replay.File
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	es, err := replay.ReadFile(p, w.Replay.Format)
	if err != nil {
		return err
	}
	w.entries = es
	return nil
}

// shortTarget keeps a class name readable: a request-target cut to 48
// bytes.
func shortTarget(t string) string {
	if len(t) > 48 {
		return t[:45] + "..."
	}
	return t
}

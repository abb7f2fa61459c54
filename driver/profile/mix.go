package profile

import (
	"fmt"
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
// that is itself no mix.
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
	return nil
}

// IsMix reports whether w sends several classes: a weighted mix or a
// replay.
func (w *Workload) IsMix() bool { return len(w.Mix) > 0 || w.Replay != nil }

// Classes serializes a mix's classes for mode, in the mix's order: each
// class's request (Set.Request) named after its workload, with that
// workload's expected status in mode and its weight. A replay's classes
// are its file's requests in file order, each of weight 1, named
// "<n> METHOD path" and expected to get w's status in mode.
func (s *Set) Classes(w *Workload, mode string) []load.Class {
	if w.Replay != nil {
		out := make([]load.Class, 0, len(w.entries))
		for i, e := range w.entries {
			r := load.Build(e.Method, e.Target, e.Headers, e.Body, e.Host)
			r.Name = fmt.Sprintf("%d %s %s", i+1, e.Method, shortTarget(e.Target))
			r.ExpectStatus = w.Expected(mode)
			out = append(out, load.Class{Request: r, Weight: 1})
		}
		return out
	}
	out := make([]load.Class, 0, len(w.Mix))
	for _, e := range w.Mix {
		cw := s.Workloads[e.Workload]
		r := s.Request(cw)
		r.Name = cw.Name
		r.ExpectStatus = cw.Expected(mode)
		out = append(out, load.Class{Request: r, Weight: e.Weight})
	}
	return out
}

// Replay names a file of requests: File relative to the profiles
// directory, Format "vegeta" (targets, text or JSON lines) or "har".
type Replay struct {
	File   string `json:"file"`
	Format string `json:"format"`
}

// validateReplay checks a replay workload alone: a file and format, and
// no request of its own.
func (w *Workload) validateReplay(where string) error {
	if w.Method != "" || w.Path != "" || w.PathRepeat != nil || len(w.Headers) > 0 || w.Body != nil || w.HeaderSet != "" || w.NoBase {
		return fmt.Errorf("%s: replay: a replay has no method, path, headers or body of its own (its file does)", where)
	}
	if w.Replay.File == "" {
		return fmt.Errorf("%s: replay.file: want a file relative to the profiles directory", where)
	}
	if w.Replay.Format != replay.Vegeta && w.Replay.Format != replay.HAR {
		return fmt.Errorf("%s: replay.format: want %s or %s, got %q", where, replay.Vegeta, replay.HAR, w.Replay.Format)
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

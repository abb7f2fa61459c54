// Package plan lays out a run: which mode runs in which position of each
// repeat, and which trials (fresh Envoy processes) measure which workloads.
package plan

import (
	"fmt"
	"math/rand/v2"
)

// Order rotation schemes.
const (
	Latin   = "latin"   // repeat r runs the modes rotated right by r: (A,B,C), (C,A,B), (B,C,A)
	shuffle = "shuffle" // every repeat is an independent shuffle seeded by Seed
)

// Trial scopes.
const (
	PerModeRepeat = "mode-repeat" // a fresh Envoy per (mode, repeat) runs every workload (the upgle/envoy-modsecurity benchmark's choice)
	perWorkload   = "workload"    // a fresh Envoy per (mode, repeat, workload)
)

// Trial is one Envoy process lifetime.
type Trial struct {
	Index    int // 1-based over the whole run
	Repeat   int // 1-based
	Position int // 1-based position of Mode inside its repeat
	Mode     string
	Cases    []int // indexes into the run's case list, in order
}

// Options selects the plan.
type Options struct {
	Modes   []string
	Cases   int // number of workload cases
	Repeats int
	Order   string
	Seed    int64
	Scope   string
}

// Validate names the first bad field.
func (o Options) Validate() error {
	if len(o.Modes) == 0 {
		return fmt.Errorf("modes: want at least one")
	}
	seen := map[string]bool{}
	for _, m := range o.Modes {
		if seen[m] {
			return fmt.Errorf("modes: %s listed twice", m)
		}
		seen[m] = true
	}
	if o.Cases < 1 {
		return fmt.Errorf("workloads: want at least one")
	}
	if o.Repeats < 1 {
		return fmt.Errorf("repeats: want ≥ 1, got %d", o.Repeats)
	}
	if o.Order != Latin && o.Order != shuffle {
		return fmt.Errorf("order: want %s or %s, got %q", Latin, shuffle, o.Order)
	}
	if o.Scope != PerModeRepeat && o.Scope != perWorkload {
		return fmt.Errorf("trial-scope: want %s or %s, got %q", PerModeRepeat, perWorkload, o.Scope)
	}
	return nil
}

// ModeOrder returns the mode order of every repeat.
func ModeOrder(o Options) [][]string {
	out := make([][]string, o.Repeats)
	n := len(o.Modes)
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x9e3779b97f4a7c15))
	for r := range out {
		order := make([]string, n)
		switch o.Order {
		case shuffle:
			copy(order, o.Modes)
			rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		default:
			for i := range order {
				order[i] = o.Modes[((i-r)%n+n)%n]
			}
		}
		out[r] = order
	}
	return out
}

// Build returns the trials of a run in execution order.
func Build(o Options) ([]Trial, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var out []Trial
	all := make([]int, o.Cases)
	for i := range all {
		all[i] = i
	}
	for r, order := range ModeOrder(o) {
		for p, m := range order {
			if o.Scope == perWorkload {
				for _, c := range all {
					out = append(out, Trial{Repeat: r + 1, Position: p + 1, Mode: m, Cases: []int{c}})
				}
				continue
			}
			out = append(out, Trial{Repeat: r + 1, Position: p + 1, Mode: m, Cases: all})
		}
	}
	for i := range out {
		out[i].Index = i + 1
	}
	return out, nil
}

package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one slice of a run's repeats, for running one design on several
// machines (CI matrix jobs): shard Index (0-based) of Count. The design —
// modes, rotation, seed, repeats — is the whole run's; a shard runs a
// contiguous block of its repeats, so the union of all Count shards is
// exactly the trials one unsharded run would make, and every shard keeps
// the rotation's balance as well as its number of repeats allows.
type Shard struct {
	Index int // 0-based
	Count int // ≥ 1
}

// ParseShard parses "i/N" (0 ≤ i < N). The error names the problem.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("--shard: want i/N (e.g. 0/4), got %q", s)
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	switch {
	case err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("--shard: want i/N with whole numbers (e.g. 0/4), got %q", s)
	case n < 1:
		return Shard{}, fmt.Errorf("--shard %s: want N ≥ 1 shards, got %d", s, n)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("--shard %s: want 0 ≤ i < N (shards are numbered from 0), got i=%d", s, i)
	}
	return Shard{Index: i, Count: n}, nil
}

// String is "i/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Repeats returns the 1-based repeat numbers, out of a design of total
// repeats, that the shard runs: a contiguous block; the blocks' sizes
// differ by at most one (the first total mod Count shards get one more).
// A shard of a design with fewer repeats than shards may get none.
func (s Shard) Repeats(total int) []int {
	base, extra := total/s.Count, total%s.Count
	first := s.Index*base + min(s.Index, extra)
	n := base
	if s.Index < extra {
		n++
	}
	out := make([]int, n)
	for i := range out {
		out[i] = first + i + 1
	}
	return out
}

// Select keeps the trials of the shard's repeats (Build's output for a
// design of o.Repeats repeats) and the mode orders of those repeats. Trial
// and Repeat keep the design's numbering of repeats; Index is renumbered
// 1.. within the shard (the shard's own execution order). It fails when
// the design has fewer repeats than shards (some shard would run nothing).
func (s Shard) Select(o Options, trials []Trial) ([]Trial, [][]string, error) {
	if o.Repeats < s.Count {
		return nil, nil, fmt.Errorf("--shard %s: %d repeats cannot fill %d shards (want at least one repeat per shard)", s, o.Repeats, s.Count)
	}
	reps := s.Repeats(o.Repeats)
	lo, hi := reps[0], reps[len(reps)-1]
	var out []Trial
	for _, t := range trials {
		if t.Repeat >= lo && t.Repeat <= hi {
			t.Index = len(out) + 1
			out = append(out, t)
		}
	}
	orders := ModeOrder(o)[lo-1 : hi]
	return out, orders, nil
}

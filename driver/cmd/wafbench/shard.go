package main

import (
	"wafbench/driver/internal/host"
	"wafbench/driver/plan"
	"wafbench/driver/result"
)

// shardSel is a run's slice of its design (run --shard); the zero value
// runs the whole design.
type shardSel struct {
	shard  *plan.Shard
	orders [][]string // mode orders of the repeats run
	reps   []int      // the design's repeat numbers run
}

// selectShard applies --shard (arg "" = the whole design) to the trials of
// the design o. Bad input is a usage error naming it.
func selectShard(arg string, o plan.Options, trials []plan.Trial) ([]plan.Trial, shardSel, error) {
	if arg == "" {
		return trials, shardSel{}, nil
	}
	s, err := plan.ParseShard(arg)
	if err != nil {
		return nil, shardSel{}, usageError{err.Error()}
	}
	kept, orders, err := s.Select(o, trials)
	if err != nil {
		return nil, shardSel{}, usageError{err.Error()}
	}
	return kept, shardSel{shard: &s, orders: orders, reps: s.Repeats(o.Repeats)}, nil
}

// record fills what meta.json says about the machine and the shard: a
// shard's Repeats and ModeOrder are those of the repeats it runs.
func (s shardSel) record(m *result.Meta) {
	m.Machine = host.MachineID()
	if s.shard == nil {
		return
	}
	m.Shard = &result.Shard{Index: s.shard.Index, Count: s.shard.Count, DesignRepeats: m.Repeats, Repeats: s.reps}
	m.Repeats, m.ModeOrder = len(s.reps), s.orders
}

// name is the shard id the records carry ("" when not sharded).
func (s shardSel) name() string {
	if s.shard == nil {
		return ""
	}
	return s.shard.String()
}

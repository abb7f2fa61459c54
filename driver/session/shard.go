package session

import (
	"wafbench/driver/internal/host"
	"wafbench/driver/internal/usage"
	"wafbench/driver/plan"
	"wafbench/driver/result"
)

// shard is a run's slice of its design (run --shard).
type shard struct {
	plan.Shard
	Orders  [][]string `json:"orders"`  // mode orders of the repeats run
	Repeats []int      `json:"repeats"` // the design's repeat numbers run
}

// selectShard applies --shard (arg "" = the whole design, a nil Shard) to
// the trials of the design o.
func selectShard(arg string, o plan.Options, trials []plan.Trial) ([]plan.Trial, *shard, error) {
	if arg == "" {
		return trials, nil, nil
	}
	s, err := plan.ParseShard(arg)
	if err != nil {
		return nil, nil, usage.Wrap(err)
	}
	kept, orders, err := s.Select(o, trials)
	if err != nil {
		return nil, nil, usage.Wrap(err)
	}
	return kept, &shard{Shard: s, Orders: orders, Repeats: s.Repeats(o.Repeats)}, nil
}

// record fills what meta.json says about the machine and the shard: a
// shard's Repeats and ModeOrder are those of the repeats it runs.
func (s *shard) record(m *result.Meta) {
	m.Machine = host.MachineID()
	if s == nil {
		return
	}
	m.Shard = &result.Shard{Index: s.Index, Count: s.Count, DesignRepeats: m.Repeats, Repeats: s.Repeats}
	m.Repeats, m.ModeOrder = len(s.Repeats), s.Orders
}

// name is the shard id the records carry ("" when not sharded).
func (s *shard) name() string {
	if s == nil {
		return ""
	}
	return s.String()
}

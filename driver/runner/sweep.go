package runner

import (
	"fmt"
	"strconv"

	"wafbench/driver/plan"
	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// maxSweepRate bounds the offered rate of a rate-sweep point (req/s), so a
// wild capacity figure cannot ask the client for an unbounded send rate.
const maxSweepRate = 1e6

// capacityKey identifies a closed-loop measurement a later rate-sweep point
// of the same mode and repeat takes its capacity from.
func capacityKey(tr plan.Trial, key string) string {
	return tr.Mode + "|" + strconv.Itoa(tr.Repeat) + "|" + key
}

// caseRate is the open-loop rate of case c in trial tr: for a rate-sweep
// point its load fraction of the capacity (the profile's figure, or the
// throughput its capacity_from case achieved earlier in this mode and
// repeat); otherwise the run's --rate (0 = closed loop).
func caseRate(cfg *runner, tr plan.Trial, c profile.Case) (rate, capacity float64, err error) {
	f := c.LoadFraction()
	if f == 0 {
		return cfg.Rate, 0, nil
	}
	capacity = c.Workload.Capacity
	if k := c.CapacityKey(); k != "" {
		capacity = cfg.capacity[capacityKey(tr, k)]
		if capacity <= 0 {
			return 0, 0, fmt.Errorf("rate sweep %s: no capacity: its closed-loop case %s was not measured in %s repeat %d", c.Key(), k, tr.Mode, tr.Repeat)
		}
	}
	return min(f*capacity, maxSweepRate), capacity, nil
}

// noteCapacity remembers the throughput of a valid closed-loop record for
// the rate-sweep points that follow it.
func noteCapacity(cfg *runner, tr plan.Trial, c profile.Case, rec *result.Record) {
	if rec.Load != "closed" || rec.Error != "" || rec.Interrupted || rec.ReqPerS <= 0 {
		return
	}
	if cfg.capacity == nil {
		cfg.capacity = map[string]float64{}
	}
	cfg.capacity[capacityKey(tr, c.Key())] = rec.ReqPerS
}

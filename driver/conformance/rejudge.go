package conformance

import (
	"fmt"

	"wafbench/driver/modes"
)

// rejudge applies ov afresh to the outcomes r observed: every overridden
// test becomes failed again with its first failing stage's reason, the
// stale list is emptied, then ov is applied and the counts redone. Nothing
// observed changes (statuses, IDs, stage verdicts): an override file only
// explains failures, so a run's judgement can follow a corrected override
// file without sending the suite again. resolve names each mode's Mode.
func (r *run) rejudge(ov *overrides, resolve func(string) (modes.Mode, error)) error {
	for i := range r.Modes {
		mr := &r.Modes[i]
		m, err := resolve(mr.Mode)
		if err != nil {
			return fmt.Errorf("mode %s: %w", mr.Mode, err)
		}
		mr.Stale = nil
		for j := range mr.Tests {
			t := &mr.Tests[j]
			if t.Outcome != overridden && t.Outcome != Failed {
				continue
			}
			t.Outcome, t.Override = Failed, ""
			for si, st := range t.Stages {
				if !st.Pass {
					t.Why = fmt.Sprintf("stage %d: %s", si+1, st.Why)
					break
				}
			}
		}
		mr.judge(ov, m)
	}
	r.Overrides = ov.Entries
	return nil
}

// unexplained counts the failed tests no override explains, over every mode.
func (r *run) unexplained() int {
	n := 0
	for _, m := range r.Modes {
		n += m.Counts.Failed
	}
	return n
}

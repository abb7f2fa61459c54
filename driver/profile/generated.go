package profile

import (
	"fmt"

	"wafbench/driver/adversarial"
)

// paramN is the sweep parameter of a generated input (Workload.Generate):
// its family's N (bytes, depth, keys, arguments, parts or layers; a size
// suffix k or m is accepted).
const paramN = "generate.size"

// generate names an input built by a driver/adversarial family: the
// family, one of its shapes and N (what N counts depends on the family).
type generate struct {
	Family string `json:"family"`
	Shape  string `json:"shape"`
	N      int    `json:"size,omitempty"`
}

func (w *Workload) validateGenerate(where string) error {
	g := w.Generate
	if w.Body != nil || w.PathRepeat != nil {
		return fmt.Errorf("%s: generate excludes body and path_repeat", where)
	}
	if err := adversarial.Check(g.Family, g.Shape, g.N, w.Method); err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	return nil
}

// generated is the workload's generated input; ok false without one.
func (w *Workload) generated() (adversarial.Input, bool) {
	if w.Generate == nil {
		return adversarial.Input{}, false
	}
	g := w.Generate
	return adversarial.Generate(g.Family, g.Shape, g.N), true
}

// Attack reports whether the workload is a generated input that carries an
// attack (a correct WAF answers 403).
func (w *Workload) Attack() bool {
	return w.Generate != nil && adversarial.IsAttack(w.Generate.Family, w.Generate.Shape)
}

// maxAttackRate bounds an attack stream (attacks per second).
const maxAttackRate = 1000

func (s *Set) checkAttackStream(w *Workload) error {
	if w.AttackStream == "" {
		if w.AttackRate != 0 {
			return fmt.Errorf("workload %s: attack_rate without attack_stream", w.Name)
		}
		return nil
	}
	if a, ok := s.Workloads[w.AttackStream]; !ok || a.Point != nil {
		return fmt.Errorf("workload %s: attack_stream: want a plain workload, got %q", w.Name, w.AttackStream)
	}
	if w.AttackRate <= 0 || w.AttackRate > maxAttackRate {
		return fmt.Errorf("workload %s: attack_rate: want 0 < attacks/s ≤ %d, got %g", w.Name, maxAttackRate, w.AttackRate)
	}
	return nil
}

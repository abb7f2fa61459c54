package report

import (
	"fmt"
	"strings"

	"wafbench/driver/adversarial"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// advPoint is one measured-verdict record of the adversarial suite.
type advPoint struct {
	mode, family, shape, label string
	n                          float64
	bytes                      int
	responses                  int64
	cpuNs                      int64
	verdict                    int // status the probe and window got; 0 = none
	declared                   int // what a correct answer is
	err                        string
	amp                        float64 // per-byte CPU over passthrough's on the same input; 0: none
}

func (p *advPoint) cpuPerReqUs() float64 {
	if p.responses == 0 {
		return 0
	}
	return float64(p.cpuNs) / 1e3 / float64(p.responses)
}

func (p *advPoint) cpuPerByteNs() float64 {
	if p.responses == 0 || p.bytes == 0 {
		return 0
	}
	return float64(p.cpuNs) / float64(p.responses) / float64(p.bytes)
}

// passed: an attack a WAF mode answered 200.
func (p *advPoint) passed() bool {
	return modes.IsWAF(p.mode) && p.declared == 403 && p.verdict == 200
}

// splitFamily reads "adv_<family>_<shape>" back into its family and shape.
func splitFamily(base string) (family, shape string, ok bool) {
	rest, ok := strings.CutPrefix(base, "adv_")
	if !ok {
		return "", "", false
	}
	best := ""
	for _, f := range adversarial.Families() {
		if strings.HasPrefix(rest, f+"_") && len(f) > len(best) {
			best = f
		}
	}
	if best == "" {
		return "", "", false
	}
	return best, rest[len(best)+1:], true
}

func advPoints(recs []result.Record) []advPoint {
	var out []advPoint
	for i := range recs {
		r := &recs[i]
		if r.DeclaredStatus == 0 || r.Interrupted {
			continue
		}
		pt, ok := profile.ParsePoint(r.Workload)
		if !ok {
			continue
		}
		fam, shape, ok := splitFamily(pt.Base)
		if !ok {
			continue
		}
		var resp int64
		for _, v := range r.Statuses {
			resp += v
		}
		out = append(out, advPoint{mode: r.Mode, family: fam, shape: shape, label: pt.Label, n: pt.Value,
			bytes: r.RequestBytes, responses: resp, cpuNs: r.CPU.SchedstatNs, verdict: r.ExpectStatus,
			declared: r.DeclaredStatus, err: r.Error})
	}
	return out
}

// writeAdversarial is the adversarial suite's answer to "what can an
// attacker make each engine spend?": per mode and family the worst input
// found (highest CPU per request byte among the points measured), its
// amplification over passthrough on the same input, and where the verdict
// changed along N (a limit cutting in); then every attack a WAF mode let
// through; then every point. Nothing is written for a run without
// measured-verdict records.
func writeAdversarial(m *md, fig *figures) {
	a := buildAdversarial(fig.Records)
	if a == nil {
		return
	}
	m.p("## Adversarial inputs")
	m.nl()
	m.p(adversarialMethod)
	m.nl()
	m.p("### Worst input per family")
	m.nl()
	m.head("mode", "family", "worst input", "request bytes", "CPU µs/req", "CPU ns/byte", "amplification", "verdict", "verdicts along N")
	for _, w := range a.worst {
		var series []string
		for _, sh := range w.along {
			var labels []string
			for _, p := range sh.pts {
				labels = append(labels, p.label+"→"+verdictLabel(p))
			}
			series = append(series, sh.shape+": "+strings.Join(labels, " "))
		}
		p := w.pt
		m.row("`"+p.mode+"`", p.family, p.shape+" n="+p.label, itoa(p.bytes), f(p.cpuPerReqUs(), 0),
			f(p.cpuPerByteNs(), 1), ampCell(p.amp), verdictLabel(p), strings.Join(series, "; "))
	}
	m.nl()
	m.p("### Attacks answered 200 by a WAF mode")
	m.nl()
	if len(a.passed) == 0 {
		m.p("None: every input carrying an attack got a status other than 200 in every WAF mode.")
	} else {
		var passed []string
		for _, p := range a.passed {
			passed = append(passed, fmt.Sprintf("`%s` %s/%s n=%s", p.mode, p.family, p.shape, p.label))
		}
		m.p("**Finding**: %d attack input(s) passed a WAF (a limit or an evaluation error turned the attack into a pass): %s.", len(passed), strings.Join(passed, ", "))
	}
	m.nl()
	m.p("### Every point")
	m.nl()
	m.head("mode", "family", "shape", "N", "request bytes", "responses", "CPU µs/req", "CPU ns/byte", "amplification", "verdict", "declared", "error")
	for i := range a.all {
		p := &a.all[i]
		m.row("`"+p.mode+"`", p.family, p.shape, p.label, itoa(p.bytes), fmt.Sprint(p.responses), f(p.cpuPerReqUs(), 0),
			f(p.cpuPerByteNs(), 1), ampCell(p.amp), verdictLabel(p), itoa(p.declared), strings.ReplaceAll(p.err, "|", "/"))
	}
	m.nl()
}

func ampCell(v float64) string {
	if v > 0 {
		return f(v, 1) + "×"
	}
	return noValue
}

// adversarialMethod says how the adversarial points are measured.
const adversarialMethod = "Each point is one generated input (driver/adversarial: family, shape, N) sent for a fixed window on one connection; its verdict was probed before the window and every response of the window was checked against it. CPU is Envoy's (schedstat, all threads) per response; per byte divides by the request's size as sent; amplification is that per-byte CPU over passthrough's on the same input in the same run. Absolute times are from a shared 2-core machine and pessimistic; ratios within the run are what carries."

func verdictLabel(p *advPoint) string {
	if p.verdict == 0 {
		return "none"
	}
	s := itoa(p.verdict)
	if p.passed() {
		s += " (attack passed)"
	}
	return s
}

package report

import (
	"sort"

	"wafbench/driver/adversarial"
	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// advModel is the adversarial section's content: the worst input per mode
// and family, the attacks a WAF mode let through, and every point sorted
// by family, shape, N and mode.
type advModel struct {
	worst  []advWorst
	passed []*advPoint
	all    []advPoint
}

// advWorst is one mode and family's worst input and, per shape in order of
// first appearance, its points along N.
type advWorst struct {
	pt    *advPoint
	along []advShape
}

type advShape struct {
	shape string
	pts   []*advPoint
}

// buildAdversarial computes the section; nil when the run has no
// measured-verdict records.
func buildAdversarial(recs []result.Record) *advModel {
	pts := advPoints(recs)
	if len(pts) == 0 {
		return nil
	}
	pass := map[string]*advPoint{} // family/shape/label → passthrough
	var modeList []string
	seenMode := map[string]bool{}
	for i := range pts {
		p := &pts[i]
		if !seenMode[p.mode] {
			seenMode[p.mode] = true
			modeList = append(modeList, p.mode)
		}
		if p.mode == modes.Passthrough {
			pass[p.family+"/"+p.shape+"/"+p.label] = p
		}
	}
	modes.Sort(modeList)
	for i := range pts {
		p := &pts[i]
		if b := pass[p.family+"/"+p.shape+"/"+p.label]; b != nil && b.cpuPerByteNs() != 0 && p.cpuPerByteNs() != 0 {
			p.amp = p.cpuPerByteNs() / b.cpuPerByteNs()
		}
	}
	a := &advModel{}
	for _, mode := range modeList {
		for _, fam := range adversarial.Families() {
			if w, ok := worstInput(pts, mode, fam); ok {
				a.worst = append(a.worst, w)
			}
		}
	}
	for i := range pts {
		if p := &pts[i]; p.passed() {
			a.passed = append(a.passed, p)
		}
	}
	a.all = sortedPoints(pts, modeList)
	return a
}

// worstInput is the point of mode and family with the highest CPU per
// request byte, and its points along N by shape.
func worstInput(pts []advPoint, mode, fam string) (advWorst, bool) {
	var w advWorst
	byShape := map[string]int{}
	for i := range pts {
		p := &pts[i]
		if p.mode != mode || p.family != fam {
			continue
		}
		if w.pt == nil || p.cpuPerByteNs() > w.pt.cpuPerByteNs() {
			w.pt = p
		}
		k, ok := byShape[p.shape]
		if !ok {
			k = len(w.along)
			byShape[p.shape] = k
			w.along = append(w.along, advShape{shape: p.shape})
		}
		w.along[k].pts = append(w.along[k].pts, p)
	}
	return w, w.pt != nil
}

func sortedPoints(pts []advPoint, modeList []string) []advPoint {
	sorted := append([]advPoint(nil), pts...)
	rank := map[string]int{}
	for i, md := range modeList {
		rank[md] = i
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := &sorted[i], &sorted[j]
		if a.family != b.family {
			return a.family < b.family
		}
		if a.shape != b.shape {
			return a.shape < b.shape
		}
		if a.n != b.n {
			return a.n < b.n
		}
		return rank[a.mode] < rank[b.mode]
	})
	return sorted
}

package stats

import (
	"fmt"
	"strings"

	"wafbench/driver/modes"
)

// ModePair is a comparison a run asks for besides the ones its modes imply
// (run --compare): Num ÷ Den, e.g. the best build of one engine against
// the best build of the other, which no rule of pairSpecs pairs.
type ModePair struct{ Num, Den string }

// ParsePairs reads "A/B,C/D" (empty: none). Each side is a mode as the
// run names it (builds, configurations and ~releases included).
func ParsePairs(arg string) ([]ModePair, error) {
	if arg == "" {
		return nil, nil
	}
	var out []ModePair
	seen := map[ModePair]bool{}
	for _, item := range strings.Split(arg, ",") {
		num, den, ok := strings.Cut(item, "/")
		if !ok || num == "" || den == "" || strings.Contains(den, "/") {
			return nil, fmt.Errorf("want pairs A/B of two modes, got %q", item)
		}
		pr := ModePair{num, den}
		if num == den {
			return nil, fmt.Errorf("%q compares a mode with itself", item)
		}
		if seen[pr] {
			return nil, fmt.Errorf("%q listed twice", item)
		}
		seen[pr] = true
		out = append(out, pr)
	}
	return out, nil
}

// withPairs adds pairs to specs, each once: in the engine-vs-engine family
// when its two modes run different engines, else among the builds; on
// req/s, CPU per request and p99.
func withPairs(specs []pairSpec, pairs []ModePair) []pairSpec {
	have := map[ModePair]bool{}
	for _, sp := range specs {
		have[ModePair{sp.num, sp.den}] = true
	}
	for _, pr := range pairs {
		if have[pr] {
			continue
		}
		have[pr] = true
		f := FamilyBuilds
		if modes.Engine(modes.Unversioned(pr.Num)) != modes.Engine(modes.Unversioned(pr.Den)) {
			f = FamilyEngines
		}
		specs = append(specs, pairSpec{num: pr.Num, den: pr.Den, family: f, metrics: []metric{MetricReqPerS, MetricCPU, metricP99}})
	}
	return specs
}

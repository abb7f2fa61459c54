package report

import (
	"slices"

	"wafbench/driver/modes"
	"wafbench/driver/stats"
)

// labQuestions asks the lab's open questions of the trials: one paired
// comparison per question, metric and path that has pairs, a question
// named on its first row only, p Holm-adjusted over all of them.
func labQuestions(trials map[string][]*labTrial, hosts, paths, pools []string, labPool string) []labComparison {
	var cs []labComparison
	asked := map[string]bool{}
	add := func(question, num, den, metric string, perPath bool) {
		ps := []string{labPool}
		if perPath {
			ps = append(slices.Clone(paths), pools...)
		}
		for _, p := range ps {
			c := labCompare(trials, question, num, den, p, metric)
			if len(c.ratios) == 0 {
				continue
			}
			if asked[question] {
				c.question = ""
			}
			asked[question] = true
			cs = append(cs, c)
		}
	}
	const slower, memory, added, inEnvoy = "Is nginx + ModSecurity slower than Caddy + Coraza?",
		"Does Caddy + Coraza hold less memory than nginx + ModSecurity?",
		"What does a WAF host add to the direct path?",
		"Is the same engine cheaper inside Envoy than in its own host?"
	add(slower, modes.RefNginxModSecurity, modes.RefCaddyCoraza, "median latency", true)
	add(slower, modes.RefNginxModSecurity, modes.RefCaddyCoraza, "p95 latency", false)
	add(slower, modes.RefNginxModSecurity, modes.RefCaddyCoraza, "CPU µs/req", false)
	add(memory, modes.RefNginxModSecurity, modes.RefCaddyCoraza, "peak RSS", false)
	add(added, modes.RefNginxModSecurity, modes.RefDirect, "median latency", false)
	add(added, modes.RefCaddyCoraza, modes.RefDirect, "median latency", false)
	add(inEnvoy, modes.ModSecurity, modes.RefNginxModSecurity, "median latency", false)
	add(inEnvoy, modes.ModSecurity, modes.RefNginxModSecurity, "CPU µs/req", false)
	add(inEnvoy, modes.Coraza, modes.RefCaddyCoraza, "median latency", false)
	add(inEnvoy, modes.Coraza, modes.RefCaddyCoraza, "CPU µs/req", false)
	if len(pools) == 2 {
		// Within one trial: the same process, one connection mode against
		// the other.
		const conn = "What does a new connection per request add (as curl did)?"
		for _, h := range hosts {
			c := labCompareWithin(trials[h], conn, h, pools[1], pools[0])
			if len(c.ratios) == 0 {
				continue
			}
			if asked[conn] {
				c.question = ""
			}
			asked[conn] = true
			cs = append(cs, c)
		}
	}
	ps := make([]float64, len(cs))
	for i, c := range cs {
		ps[i] = c.p
	}
	for i, adj := range stats.Holm(ps) {
		cs[i].pHolm = adj
	}
	return cs
}

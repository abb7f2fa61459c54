package main

import (
	"fmt"
	"strings"

	"wafbench/driver/cpu"
	"wafbench/driver/modes"
)

// sharedCPUs refuses a CPU partition where Envoy (or the reference proxy)
// shares a CPU with the load client or the upstream: the proxy would then
// compete with them, and its figures would measure that contention rather
// than its own cost. allow (--allow-shared-cpus) accepts it; the returned
// note then records it in meta.json. Runs with no proxy at all (only
// ref-direct) have nothing to keep apart.
func sharedCPUs(st *resolved, ms []modes.Mode, online int, allow bool) (note string, err error) {
	proxied := false
	for _, m := range ms {
		if m.Host != modes.Direct {
			proxied = true
		}
	}
	if !proxied {
		return "", nil
	}
	var clashes []string
	for _, o := range []struct {
		name string
		cpus []int
	}{{"client", st.clientCPUs}, {"upstream", st.upstreamCPUs}} {
		if both := overlap(st.spec.CPUs, o.cpus); len(both) > 0 {
			clashes = append(clashes, fmt.Sprintf("the %s's (--%s-cpus %s) on CPU %s", o.name, o.name, cpu.Format(o.cpus), cpu.Format(both)))
		}
	}
	if len(clashes) == 0 {
		return "", nil
	}
	what := fmt.Sprintf("Envoy's CPUs (--envoy-cpus %s) overlap %s", cpu.Format(st.spec.CPUs), strings.Join(clashes, " and "))
	if allow {
		return what + " (--allow-shared-cpus): the proxy's figures include competing with them", nil
	}
	if online == 1 {
		return "", usagef("this machine has 1 online CPU, so Envoy, the client and the upstream must share it and the figures would measure their contention; pass --allow-shared-cpus to measure anyway (recorded in meta.json)")
	}
	return "", usagef("%s: the figures would measure their contention, not the proxy; give them separate CPUs, or pass --allow-shared-cpus to measure anyway (recorded in meta.json)", what)
}

func overlap(a, b []int) []int {
	var out []int
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

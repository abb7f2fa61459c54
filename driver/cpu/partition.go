package cpu

import (
	"fmt"
	"slices"
	"strings"
)

// PartitionRequest says how to split the online CPUs between the proxy,
// the load client and the upstream. The lists are Linux CPU lists as given
// on the command line (--envoy-cpus, --client-cpus, --upstream-cpus); an
// empty one takes its default.
type PartitionRequest struct {
	Online      []int // the online CPUs (Online)
	Concurrency int   // proxy worker threads, at least 1
	Envoy       string
	Client      string
	Upstream    string
}

// Partition is which CPUs each part of a benchmark stack runs on.
type Partition struct {
	Envoy, Client, Upstream []int
}

// Plan decides the partition. Defaults: Envoy gets the first Concurrency
// online CPUs (leaving at least one free when there are two or more). When
// two or more CPUs are left and neither the client's nor the upstream's
// list is given, the client gets the first half of them (rounded up) and
// the upstream the rest, so that the client has CPUs of its own: an
// open-loop client that shares its CPU with the upstream waits for it, and
// that wait is in its send delay. Otherwise the client gets every online
// CPU Envoy does not use (all of them on a one-CPU machine) and the
// upstream the client's: on two CPUs, client and upstream share one. An
// error names the flag whose list is malformed or not usable here.
func Plan(r PartitionRequest) (Partition, error) {
	pick := func(flagName, v string, def []int) ([]int, error) {
		if v == "" {
			return def, nil
		}
		l, err := ParseOnline(v)
		if err != nil {
			return nil, fmt.Errorf("--%s: %v", flagName, err)
		}
		return l, nil
	}
	n := max(min(r.Concurrency, len(r.Online)-1), 1)
	var p Partition
	var err error
	if p.Envoy, err = pick("envoy-cpus", r.Envoy, r.Online[:n]); err != nil {
		return Partition{}, err
	}
	rest := without(r.Online, p.Envoy)
	if len(rest) == 0 {
		rest = r.Online // one CPU: nothing to partition; recorded as observed
	}
	if r.Client == "" && r.Upstream == "" && len(rest) >= 2 {
		h := (len(rest) + 1) / 2
		p.Client, p.Upstream = rest[:h:h], rest[h:]
		return p, nil
	}
	if p.Client, err = pick("client-cpus", r.Client, rest); err != nil {
		return Partition{}, err
	}
	if p.Upstream, err = pick("upstream-cpus", r.Upstream, p.Client); err != nil {
		return Partition{}, err
	}
	return p, nil
}

// Shared refuses a partition where Envoy (or the reference proxy) shares a
// CPU with the load client or the upstream: the proxy would then compete
// with them, and its figures would measure that contention rather than its
// own cost. allow (--allow-shared-cpus) accepts it; the returned note then
// says so, for meta.json. online is the number of online CPUs (one CPU
// leaves no choice, and the refusal says so). A run with no proxy at all
// (only the direct reference host) has nothing to keep apart: the caller
// does not ask.
func (p Partition) Shared(online int, allow bool) (note string, err error) {
	var clashes []string
	for _, o := range []struct {
		name string
		cpus []int
	}{{"client", p.Client}, {"upstream", p.Upstream}} {
		if both := intersect(p.Envoy, o.cpus); len(both) > 0 {
			clashes = append(clashes, fmt.Sprintf("the %s's (--%s-cpus %s) on CPU %s", o.name, o.name, Format(o.cpus), Format(both)))
		}
	}
	if len(clashes) == 0 {
		return "", nil
	}
	what := fmt.Sprintf("Envoy's CPUs (--envoy-cpus %s) overlap %s", Format(p.Envoy), strings.Join(clashes, " and "))
	if allow {
		return what + " (--allow-shared-cpus): the proxy's figures include competing with them", nil
	}
	if online == 1 {
		return "", fmt.Errorf("this machine has 1 online CPU, so Envoy, the client and the upstream must share it and the figures would measure their contention; pass --allow-shared-cpus to measure anyway (recorded in meta.json)")
	}
	return "", fmt.Errorf("%s: the figures would measure their contention, not the proxy; give them separate CPUs, or pass --allow-shared-cpus to measure anyway (recorded in meta.json)", what)
}

// intersect returns the CPUs of a that are also in b, in a's order.
func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// without returns the CPUs of a that are not in b, in a's order.
func without(a, b []int) []int {
	var out []int
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

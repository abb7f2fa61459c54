package session

import (
	"fmt"
	"maps"
	"slices"

	"wafbench/driver/hosts"
	"wafbench/driver/internal/flaglist"
	"wafbench/driver/internal/usage"
	"wafbench/driver/modes"
	"wafbench/driver/stack"
	"wafbench/internal/repopath"
)

// withEnvoyReleases puts every Envoy mode of ms on each release of list
// (run --envoy-versions "1.39.3,1.40.0"): passthrough becomes
// passthrough~1.39.3, passthrough~1.40.0, and so on, in that order, so
// the releases rotate and pair like modes. A mode that already names a
// release, and a mode of another host, is kept as it is. Then every mode
// that loads one of our dynamic modules into a release whose ABI the
// modules were not written for is refused (stack.CheckModes), before
// anything runs.
func withEnvoyReleases(ms []modes.Mode, list string) ([]modes.Mode, error) {
	releases := flaglist.Split(list)
	for i, v := range releases {
		if err := modes.CheckEnvoyVersion(v); err != nil {
			return nil, usage.Errorf("--envoy-versions: %v", err)
		}
		if slices.Contains(releases[:i], v) {
			return nil, usage.Errorf("--envoy-versions: %s listed twice", v)
		}
	}
	out := ms
	if len(releases) > 0 {
		out = nil
		seen := map[string]bool{}
		add := func(m modes.Mode) error {
			if seen[m.String()] {
				return usage.Errorf("--modes with --envoy-versions: mode %s listed twice", m)
			}
			seen[m.String()] = true
			out = append(out, m)
			return nil
		}
		for _, m := range ms {
			if m.Host != modes.Envoy || m.Envoy != "" {
				if err := add(m); err != nil {
					return nil, err
				}
				continue
			}
			for _, v := range releases {
				mv := m
				mv.Envoy = v
				if err := add(mv); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := stack.CheckModes(out); err != nil {
		return nil, err
	}
	return out, nil
}

// releaseNotes are meta.json's notes on the Envoy releases the modes name
// (mode~release): each release's binary, version and hash, newest last.
// The run's own Envoy ("") is meta.json's envoy_* fields.
func releaseNotes(rs map[string]hosts.Release) []string {
	vs := slices.SortedFunc(maps.Keys(rs), func(a, b string) int {
		if modes.EnvoyVersionLess(a, b) {
			return -1
		}
		return 1
	})
	var out []string
	for _, v := range vs {
		if v == "" {
			continue
		}
		r := rs[v]
		out = append(out, fmt.Sprintf("Envoy release %s (modes ~%s): %s, SHA-256 %s, %s", v, v, r.Version, r.SHA256, repopath.Portable([]byte(r.Binary))))
	}
	return out
}

package conformance

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"wafbench/driver/modes"
)

// OverridesFile is the override list, relative to the repository root.
const OverridesFile = "driver/conformance/overrides.yaml"

// Causes of an override: what makes the test fail in the modes it names.
const (
	causeEngine = "engine" // the WAF engine (a known bug or a behaviour of its own, with its upstream issue)
	causeEnvoy  = "envoy"  // Envoy's HTTP codec changes or answers the request before the WAF sees it
	causeHost   = "host"   // another host (nginx, Caddy) answers or changes the request before the WAF
)

// override is one reasoned entry: the tests it covers fail in the modes it
// names, for the reason it gives.
type override struct {
	Name  string   `json:"name"`
	Tests []string `json:"tests"`
	// Modes, Hosts and Engines select where the entry applies; an empty
	// list selects all, every non-empty list must match. A mode matches by
	// its name or by its base name (coraza matches coraza@re2).
	Modes   []string `json:"modes,omitempty"`
	Hosts   []string `json:"hosts,omitempty"`
	Engines []string `json:"engines,omitempty"`
	// EngineVersions, when set, narrows the entry to these engine
	// versions (as meta.json records them, a leading "v" ignored): a bug
	// fixed in a later release is expected only where it is still present.
	EngineVersions []string `json:"engine_versions,omitempty"`
	Cause          string   `json:"cause"`
	// Status, when set, is the status the failing stage gets (a host
	// answering 400 before the WAF); an observed status that differs leaves
	// the test failed.
	Status int `json:"status,omitempty"`
	// Fails, when set, is how the failing stage fails. Every entry pins
	// its failure with Status, Fails or both, so that a test it covers
	// failing some other way stays unexplained.
	Fails  *failure `json:"fails,omitempty"`
	Reason string   `json:"reason"`
	// Upstream names the engine's or host's issue, when one is known.
	Upstream string `json:"upstream,omitempty"`
}

// overrides is the parsed override file.
type overrides struct {
	Entries []override `json:"overrides"`
	// Path is where the entries were read.
	Path string `json:"-"`
}

// engineVersion is how an override names an engine release.
var engineVersion = regexp.MustCompile(`^v?\d+(\.\d+)*$`)

// knownHosts are the hosts an override may name: those an engine runs in.
var knownHosts = func() []string {
	var out []string
	for _, h := range modes.EngineHosts {
		out = append(out, string(h))
	}
	return out
}()

// loadOverrides reads and checks an override file against suite s: every
// entry needs a name, tests the suite holds, a cause and a reason.
func loadOverrides(path string, s *suite) (*overrides, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("overrides: %w", err)
	}
	var ov overrides
	if err := yaml.UnmarshalStrict(data, &ov); err != nil {
		return nil, fmt.Errorf("overrides %s: %w", path, err)
	}
	ov.Path = path
	names := map[string]bool{}
	for i, e := range ov.Entries {
		where := fmt.Sprintf("overrides %s: entry %d (%s)", path, i+1, e.Name)
		switch {
		case e.Name == "":
			return nil, fmt.Errorf("%s: name missing", where)
		case names[e.Name]:
			return nil, fmt.Errorf("%s: name used twice", where)
		case len(e.Tests) == 0:
			return nil, fmt.Errorf("%s: tests missing", where)
		case strings.TrimSpace(e.Reason) == "":
			return nil, fmt.Errorf("%s: reason missing", where)
		case e.Cause != causeEngine && e.Cause != causeEnvoy && e.Cause != causeHost:
			return nil, fmt.Errorf("%s: cause: want %s, %s or %s, got %q", where, causeEngine, causeEnvoy, causeHost, e.Cause)
		}
		names[e.Name] = true
		for _, id := range e.Tests {
			if !s.Has(id) {
				return nil, fmt.Errorf("%s: unknown test %q (not in the CRS %s suite)", where, id, "4.25.0")
			}
		}
		switch {
		case e.Status == 0 && e.Fails == nil:
			return nil, fmt.Errorf("%s: pin the failure it explains: status, or fails {missing | logged: [rule IDs], no_answer | log_regex: true}", where)
		case e.Fails != nil:
			if err := e.Fails.validate(); err != nil {
				return nil, fmt.Errorf("%s: fails: %v", where, err)
			}
		}
		for _, h := range e.Hosts {
			if !slices.Contains(knownHosts, h) {
				return nil, fmt.Errorf("%s: hosts: unknown host %q (want %s)", where, h, strings.Join(knownHosts, ", "))
			}
		}
		for _, en := range e.Engines {
			if en != modes.ModSecurity && en != modes.Coraza {
				return nil, fmt.Errorf("%s: engines: unknown engine %q (want %s or %s)", where, en, modes.ModSecurity, modes.Coraza)
			}
		}
		for _, v := range e.EngineVersions {
			if !engineVersion.MatchString(v) {
				return nil, fmt.Errorf("%s: engine_versions: %q is not a version (want e.g. 3.0.9)", where, v)
			}
		}
		for _, m := range e.Modes {
			if _, err := modes.Parse(m); err != nil {
				return nil, fmt.Errorf("%s: modes: %v", where, err)
			}
		}
	}
	return &ov, nil
}

// appliesTo reports whether e selects mode m running engine version
// version ("" when unknown: a version-narrowed entry then does not apply).
func (e *override) appliesTo(m modes.Mode, version string) bool {
	if len(e.EngineVersions) > 0 && !slices.ContainsFunc(e.EngineVersions, func(v string) bool {
		return strings.TrimPrefix(v, "v") == strings.TrimPrefix(version, "v")
	}) {
		return false
	}
	if len(e.Modes) > 0 {
		name := m.String()
		base := name
		if n, err := modes.Parse(name); err == nil {
			base = n.Base
		}
		if !slices.Contains(e.Modes, name) && !slices.Contains(e.Modes, base) {
			return false
		}
	}
	if len(e.Hosts) > 0 && !slices.Contains(e.Hosts, string(m.Host)) {
		return false
	}
	if len(e.Engines) > 0 && !slices.Contains(e.Engines, m.Engine) {
		return false
	}
	return true
}

// apply turns each failed test of mr that an entry explains into
// overridden and records the entries' tests that pass in mr as stale.
// A nil Overrides applies nothing.
func (ov *overrides) apply(mr *modeResult, m modes.Mode) {
	if ov == nil {
		return
	}
	idx := map[string]int{}
	for i, r := range mr.Tests {
		idx[r.ID] = i
	}
	for ei := range ov.Entries {
		e := &ov.Entries[ei]
		if !e.appliesTo(m, mr.EngineVersion) {
			continue
		}
		for _, id := range e.Tests {
			i, ok := idx[id]
			if !ok {
				continue
			}
			r := &mr.Tests[i]
			switch r.Outcome {
			case passed:
				mr.Stale = append(mr.Stale, e.Name+": "+id)
			case Failed:
				if why := e.mismatch(r); why != "" {
					r.Why += fmt.Sprintf(" (override %s predicts %s)", e.Name, why)
					continue
				}
				r.Outcome, r.Override = overridden, e.Name
			}
		}
	}
}

// mismatch says what e predicts of failed test r's first failing stage
// that the stage did not do ("" when the stage failed as e says).
func (e *override) mismatch(r *testResult) string {
	i := slices.IndexFunc(r.Stages, func(s stageResult) bool { return !s.Pass })
	if i < 0 {
		return "a failing stage"
	}
	st := r.Stages[i]
	if e.Status != 0 && st.Status != e.Status {
		return fmt.Sprintf("status %d", e.Status)
	}
	if e.Fails != nil && !e.Fails.matches(st.Why) {
		return e.Fails.String()
	}
	return ""
}

// entry returns the entry called name.
func (ov *overrides) entry(name string) *override {
	if ov == nil {
		return nil
	}
	for i := range ov.Entries {
		if ov.Entries[i].Name == name {
			return &ov.Entries[i]
		}
	}
	return nil
}

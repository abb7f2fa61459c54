package conformance

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/wafconfig"
	"wafbench/internal/atomicfile"
)

// Found is a crs-test run found on disk: its directory (as the record
// names it, repository-relative) and its results.
type Found struct {
	Dir string
	Run *run
}

// findRuns returns the crs-test runs under the given parent directories
// (results/, runs/), newest first (run directories start with their UTC
// start). rel names a directory as the record should; runs that cannot be
// read are skipped, as are runs of only some tests (--tests).
func findRuns(parents []string, rel func(string) string) []Found {
	var dirs []string
	for _, p := range parents {
		m, _ := filepath.Glob(filepath.Join(p, "*"))
		for _, d := range m {
			if IsRunDir(d) {
				dirs = append(dirs, d)
			}
		}
	}
	slices.SortStableFunc(dirs, func(a, b string) int { return strings.Compare(filepath.Base(b), filepath.Base(a)) })
	var out []Found
	for _, d := range dirs {
		r, err := ReadRunDir(d)
		if err != nil || r.Only != "" {
			continue
		}
		out = append(out, Found{Dir: rel(d), Run: r})
	}
	return out
}

// protect is the protection record of a run measured with the modules
// meta names: for each of its WAF modes, the newest crs-test result (of
// found, newest first) that tested the very module (same SHA-256), or for
// a mode whose module has no hash of its own, the same mode with the same
// engine version. A mode no run matches is listed unmatched.
func protect(meta *result.Meta, found []Found) *result.Protection {
	p := &result.Protection{}
	for _, mode := range meta.Modes {
		mod, ok := meta.Modules[mode]
		if !ok || mod.Engine == "" {
			continue // passthrough, ref-direct: no WAF
		}
		mp := result.ModeProtection{Mode: mode, VsDefault: -1}
		if why := otherRules(mode); why != "" {
			mp.Unmatched = why
			p.Modes = append(p.Modes, mp)
			continue
		}
	search:
		for _, f := range found {
			for i := range f.Run.Modes {
				mr := &f.Run.Modes[i]
				if mr.Error != "" || mr.Counts.NotRun > 0 {
					continue
				}
				switch {
				case mod.SHA256 != "" && mr.ModuleSHA256 == mod.SHA256:
					mp.Match = "module sha256"
				case (mod.SHA256 == "" || mr.ModuleSHA256 == "") && mr.Mode == mode && mod.EngineVersion != "" &&
					mr.EngineVersion == mod.EngineVersion:
					mp.Match = "engine version"
				default:
					continue
				}
				if p.Suite == "" {
					p.Suite, p.Tests = f.Run.Suite, f.Run.Tests
				}
				c := mr.Counts
				mp.Source, mp.Passed, mp.Failed, mp.Overridden, mp.NotRun, mp.PassRate =
					f.Dir, c.Passed, c.Failed, c.Overridden, c.NotRun, mr.passRate()
				if mr.isBuild() {
					if def := f.Run.defaultOf(*mr); def != nil {
						ds := f.Run.disagreeAmong([]modeResult{*def, *mr})
						mp.VsDefault = len(ds)
						for _, d := range ds[:min(len(ds), 20)] {
							mp.Differs = append(mp.Differs, d.Test)
						}
						lost := 0
						for _, d := range ds {
							if d.Outcomes[def.Mode] == passed {
								lost++
							}
						}
						mp.Lost = &lost
					}
				} else {
					mp.VsDefault = 0
				}
				break search
			}
		}
		p.Modes = append(p.Modes, mp)
	}
	return p
}

// otherRules says why crs-test's results cannot stand for mode: crs-test
// runs the CRS release the project exports, at paranoia level 4 in its own
// configuration, so a mode's paranoia level does not change what it tests,
// but another CRS release or the user's own configuration does. "" when
// they can.
func otherRules(mode string) string {
	n, err := modes.Parse(mode)
	if err != nil || n.Config == "" {
		return ""
	}
	if cs, err := wafconfig.Parse([]string{n.Config}, nil); err == nil && len(cs) == 1 && cs[0].Kind == wafconfig.KindParanoia {
		return ""
	}
	return "crs-test tests the exported CRS release in its own configuration, not configuration " + n.Config
}

// writeProtection writes p as dir's protection.json.
func writeProtection(dir string, p *result.Protection) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, result.ProtectionFile), append(b, '\n'))
}

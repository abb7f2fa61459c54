package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"wafbench/driver/conformance"
	"wafbench/driver/result"
)

// attachProtection records protection.json in the benchmark run dir from
// the crs-test runs from names: "auto" (every crs-test run under results/
// and runs/, newest first), "none" (nothing written), or one crs-test run
// directory. The report reads only that file, so a committed report stays
// byte-identical when later crs-test runs appear; matching is by each
// mode's module SHA-256 (the very binary measured), or, for a host with no
// module hash, by mode and engine version.
func attachProtection(dir, from string) error {
	if from == "none" || from == "" {
		return nil
	}
	meta, err := result.ReadMeta(dir)
	if err != nil {
		return err
	}
	rel := func(d string) string {
		if abs, err := filepath.Abs(d); err == nil {
			if r, err := filepath.Rel(inRepo("."), abs); err == nil && !strings.HasPrefix(r, "..") {
				return filepath.ToSlash(r)
			}
		}
		return filepath.Base(d)
	}
	var found []conformance.Found
	if from == "auto" {
		found = conformance.FindRuns([]string{inRepo("results"), inRepo("runs")}, rel)
	} else {
		r, err := conformance.ReadRunDir(from)
		if err != nil {
			return usageError{err.Error()}
		}
		found = []conformance.Found{{Dir: rel(from), Run: r}}
	}
	p := conformance.Protect(meta, found)
	if len(p.Modes) == 0 {
		return nil // no WAF mode
	}
	return conformance.WriteProtection(dir, p)
}

// crsAttach is crs-test --attach: protection.json for an earlier benchmark
// run, then its report rebuilt.
func crsAttach(dir, from string) error {
	if _, err := result.ReadMeta(dir); err != nil {
		return usagef("--attach: %s is not a run directory: %v", dir, err)
	}
	if err := attachProtection(dir, from); err != nil {
		return err
	}
	p, err := result.ReadProtection(dir)
	if err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("--attach: %s measured no WAF mode", dir)
	}
	return nil
}

package conformance

import (
	"fmt"
	"path/filepath"
	"strings"

	"wafbench/driver/internal/usage"
	"wafbench/driver/result"
)

// Attach records protection.json in the benchmark run dir from the
// crs-test runs from names: "auto" (every crs-test run under results/ and
// runs/ of the checkout root, newest first), "none" (nothing written), or
// one crs-test run directory. The report reads only that file, so a
// committed report stays byte-identical when later crs-test runs appear;
// matching is by each mode's module SHA-256 (the very binary measured),
// or, for a host with no module hash, by mode and engine version.
func Attach(dir, from, root string) error {
	if from == "none" || from == "" {
		return nil
	}
	meta, err := result.ReadMeta(dir)
	if err != nil {
		return err
	}
	rel := func(d string) string {
		if abs, err := filepath.Abs(d); err == nil {
			if r, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(r, "..") {
				return filepath.ToSlash(r)
			}
		}
		return filepath.Base(d)
	}
	var found []Found
	if from == "auto" {
		found = findRuns([]string{filepath.Join(root, "results"), filepath.Join(root, "runs")}, rel)
	} else {
		r, err := ReadRunDir(from)
		if err != nil {
			return usage.Wrap(err)
		}
		found = []Found{{Dir: rel(from), Run: r}}
	}
	p := protect(meta, found)
	if len(p.Modes) == 0 {
		return nil // no WAF mode
	}
	return writeProtection(dir, p)
}

// AttachTo is crs-test --attach: Attach to an earlier benchmark run, which
// must have measured a WAF mode.
func AttachTo(dir, from, root string) error {
	if _, err := result.ReadMeta(dir); err != nil {
		return usage.Errorf("--attach: %s is not a run directory: %v", dir, err)
	}
	if err := Attach(dir, from, root); err != nil {
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

// Package flaglist splits the comma-separated lists wafbench's flags take
// (--modes, --workloads): items are trimmed of blank space and empty items
// dropped, so "a, b," is [a b]. CPU lists have a grammar of their own
// (ranges, no empty items): cpu.ParseList.
package flaglist

import "strings"

// Split returns the non-empty, trimmed items of the comma-separated list s.
func Split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

//go:build !wafbench_nomatchlog

package engine

import (
	"github.com/corazawaf/coraza/v3"
	"github.com/corazawaf/coraza/v3/types"
)

// withMatchLog installs the match_log writer on wc when on: Coraza calls it
// for every rule match it logs. Off, nothing is installed, so the engine
// does no work for it (the check: README "match_log", tag
// wafbench_nomatchlog).
func withMatchLog(wc coraza.WAFConfig, on bool, write func(line string)) (coraza.WAFConfig, error) {
	if on {
		wc = wc.WithErrorCallback(func(mr types.MatchedRule) { write(MatchLine(mr)) })
	}
	return wc, nil
}

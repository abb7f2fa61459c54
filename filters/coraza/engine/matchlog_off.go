//go:build wafbench_nomatchlog

package engine

import (
	"errors"

	"github.com/corazawaf/coraza/v3"
)

// withMatchLog of the match_log cost check's variant (tag
// wafbench_nomatchlog, README "match_log"): the switch compiled out, so
// match_log on is refused.
func withMatchLog(wc coraza.WAFConfig, on bool, _ func(line string)) (coraza.WAFConfig, error) {
	if on {
		return wc, errors.New("engine config: match_log: compiled out of this module (tag wafbench_nomatchlog)")
	}
	return wc, nil
}

package crs

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	coreruleset "github.com/corazawaf/coraza-coreruleset/v4"
)

// Rule is what one CRS rule's text says about the verdict it gives: its
// paranoia level and the inbound anomaly score it adds.
type Rule struct {
	ID       int
	File     string // the rule file, e.g. REQUEST-942-APPLICATION-ATTACK-SQLI.conf
	Paranoia int    // from tag:'paranoia-level/N'; 0 when untagged
	// Score is the severity whose score the rule adds to the inbound
	// anomaly score of its paranoia level ("critical", "error", "warning",
	// "notice"; "" for none), from its setvar
	// tx.inbound_anomaly_score_plN=+%{tx.<severity>_anomaly_score}.
	Score string
	// Text is the whole rule, its chained rules included, continuation
	// lines joined.
	Text string
}

var (
	ruleID    = regexp.MustCompile(`\bid:(\d+)`)
	ruleLevel = regexp.MustCompile(`tag:'paranoia-level/(\d)'`)
	ruleScore = regexp.MustCompile(`tx\.inbound_anomaly_score_pl\d=\+%\{tx\.(\w+)_anomaly_score\}`)
)

// Rules reads every rule of the CRS rule files Export writes, by ID. It
// reads the rules' text, not an engine's parse of it: Coraza's SecLang
// parser is internal to coraza/v3 and libmodsecurity's is C++, and the
// three facts wanted (ID, paranoia tag, anomaly setvar) are plain
// action strings in every CRS rule. A directive without an id (a chained
// rule) belongs to the rule before it.
func Rules() (map[int]Rule, error) {
	entries, err := fs.ReadDir(coreruleset.FS, embeddedCRS)
	if err != nil {
		return nil, fmt.Errorf("crs rules: %w", err)
	}
	out := map[int]Rule{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".conf") {
			continue
		}
		data, err := fs.ReadFile(coreruleset.FS, path.Join(embeddedCRS, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("crs rules: %w", err)
		}
		last := 0
		for _, d := range directives(string(data)) {
			if !strings.HasPrefix(d, "SecRule ") && !strings.HasPrefix(d, "SecAction ") {
				last = 0
				continue
			}
			m := ruleID.FindStringSubmatch(d)
			if m == nil {
				if r, ok := out[last]; ok {
					r.Text += "\n" + d
					out[last] = r
				}
				continue
			}
			id, _ := strconv.Atoi(m[1])
			if _, dup := out[id]; dup {
				return nil, fmt.Errorf("crs rules: %s: rule %d defined twice", e.Name(), id)
			}
			out[id] = Rule{ID: id, File: e.Name(), Text: d}
			last = id
		}
	}
	for id, r := range out {
		if m := ruleLevel.FindStringSubmatch(r.Text); m != nil {
			r.Paranoia, _ = strconv.Atoi(m[1])
		}
		if m := ruleScore.FindStringSubmatch(r.Text); m != nil {
			r.Score = m[1]
		}
		out[id] = r
	}
	return out, nil
}

// directives splits a rule file into directives: comment lines dropped,
// lines ending in a backslash joined with the next.
func directives(text string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if cur.Len() == 0 {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\"))
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

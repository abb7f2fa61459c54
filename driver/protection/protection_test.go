package protection

import (
	"strings"
	"testing"

	"wafbench/driver/crssuite"
)

func TestParseBLNS(t *testing.T) {
	txt := "#\tReserved Strings\n#\n#\tStrings which may be used elsewhere in code\n\nundefined\nnull\n\n#\tScript Injection\n#\n#\tStrings which attempt to invoke a benign script injection; shows vulnerability to XSS\n\n<script>alert(123)</script>\n\n#\tHuman injection\n#\n#\tStrings which may cause human to reinterpret worldview\n\nIf you're reading this\n"
	got, excl := parseBLNS(txt)
	if want := "undefined|null|If you're reading this"; strings.Join(got, "|") != want {
		t.Errorf("values: got %q, want %q", strings.Join(got, "|"), want)
	}
	if len(excl) != 1 || excl["Strings which attempt to invoke a benign script injection; shows vulnerability to XSS"] != 1 {
		t.Errorf("excluded: got %v, want the one script injection", excl)
	}
}

func TestFamily(t *testing.T) {
	for in, want := range map[string]string{
		"REQUEST-942-APPLICATION-ATTACK-SQLI": "SQLi", "REQUEST-920-PROTOCOL-ENFORCEMENT": "protocol",
		"REQUEST-921-PROTOCOL-ATTACK": "protocol", "REQUEST-944-APPLICATION-ATTACK-JAVA": "Java", "REQUEST-999-X": "other (999)",
	} {
		if got := Family(in); got != want {
			t.Errorf("Family(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestAttacksSelection checks the selection against the suite's own
// counts: every stage is either sent or left out for one stated reason.
func TestAttacksSelection(t *testing.T) {
	s, err := crssuite.Load()
	if err != nil {
		t.Fatal(err)
	}
	ov := map[string]bool{"942100-1": true}
	ps, sel := Attacks(s, ov)
	if sel.Stages != crssuite.WantStages || sel.Sent != len(ps) ||
		sel.Sent+sel.NoExpectIDs+sel.Response+sel.Overridden+sel.Unbuildable != sel.Stages {
		t.Errorf("selection does not add up: %+v (%d probes)", sel, len(ps))
	}
	if sel.Overridden != 1 {
		t.Errorf("overridden: got %d, want 1", sel.Overridden)
	}
	for _, p := range ps {
		if strings.HasPrefix(p.ID, "942100-1/") {
			t.Errorf("overridden test %s sent", p.ID)
		}
	}
}

func TestTopRules(t *testing.T) {
	lines := []string{
		`wafbench-match [id "941100"] [msg "x"] [data ""] [tx "a"]`,
		`wafbench-match [id "949110"] [msg "x"] [data ""] [tx "a"]`,
		`wafbench-match [id "941100"] [msg "x"] [data ""] [tx "b"]`,
		`wafbench-match [id "942100"] [msg "x"] [data ""] [tx "b"]`,
		`wafbench-match [id "949110"] [msg "x"] [data ""] [tx "b"]`,
		`wafbench-match [id "942100"] [msg "x"] [data ""] [tx "c"]`, // not denied
		`wafbench-match [id "980170"] [msg "x"] [data ""] [tx "b"]`,
	}
	got := TopRules(lines, 10)
	if len(got) != 2 || got[0] != (RuleCount{941100, 2}) || got[1] != (RuleCount{942100, 1}) {
		t.Errorf("got %v, want 941100×2, 942100×1", got)
	}
}

func TestScore(t *testing.T) {
	ps := []Probe{{Class: "SQLi"}, {Class: "SQLi"}, {Class: "XSS"}}
	os := []Outcome{{Status: 403}, {Status: 200}, {Status: 400}}
	var r ModeResult
	Score(ps, os, nil, nil, &r)
	if r.Stopped.K != 1 || r.Stopped.N != 3 || r.AttacksOther != 1 || r.Stopped.Lo <= 0 || r.Stopped.Hi >= 1 {
		t.Errorf("got %+v other %d", r.Stopped, r.AttacksOther)
	}
}

package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMatchLineFormat(t *testing.T) {
	for _, tc := range []struct {
		name          string
		id            int
		msg, data, tx string
		want          string
	}{
		{"plain", 942100, "SQL Injection", "Matched Data: 1 OR 1=1", "abc",
			`wafbench-match [id "942100"] [msg "SQL Injection"] [data "Matched Data: 1 OR 1=1"] [tx "abc"]`},
		{"escaped", 1, "say \"hi\"\\now\nnext", "", "",
			`wafbench-match [id "1"] [msg "say \"hi\"\\now\nnext"] [data ""] [tx ""]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := matchLine(tc.id, tc.msg, tc.data, tc.tx); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// matchRules is a DetectionOnly rule set like the CRS conformance
// configuration: a marker rule (999999), a disruptive phase-2 rule, a
// phase-4 response-body rule and a phase-5 rule.
const matchRules = `SecRuleEngine DetectionOnly
SecRequestBodyAccess On
SecResponseBodyAccess On
SecResponseBodyMimeType text/plain
SecRule REQUEST_HEADERS:X-CRS-Test "@rx ^.*$" "id:999999,phase:1,pass,t:none,log,msg:'%{MATCHED_VAR}'"
SecRule ARGS "@detectSQLi" "id:200,phase:2,deny,status:403,log,msg:'sqli',logdata:'%{MATCHED_VAR}'"
SecRule RESPONSE_BODY "@contains SQL syntax" "id:400,phase:4,deny,status:403,log,msg:'sql error in response'"
SecRule REQUEST_URI "@contains phase5" "id:500,phase:5,pass,log,msg:'logging phase'"
`

func TestMatchLog(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.conf")
	if err := os.WriteFile(rules, []byte(matchRules), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewLogged(Config{RulesFile: rules, MatchLog: true}, nil, nil); err == nil {
		t.Error("match_log without a writer: got nil error")
	}
	var lines []string
	w, err := NewLogged(Config{RulesFile: rules, MatchLog: true, InspectResponse: true}, nil,
		func(l string) { lines = append(lines, l) })
	if err != nil {
		t.Fatal(err)
	}
	has := func(want string) bool {
		for _, l := range lines {
			if strings.Contains(l, want) {
				return true
			}
		}
		return false
	}
	marker := request{Method: "GET", Path: "/", Headers: [][2]string{{"Host", "h"}, {"X-CRS-Test", `m "1"`}}}
	if v := w.evaluate(marker); v.Status != 200 {
		t.Errorf("marker: status %d", v.Status)
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `wafbench-match [id "999999"] [msg "m \"1\""] [data ""] [tx "`) {
		t.Errorf("marker lines: %q", lines)
	}
	lines = nil
	if v := w.evaluate(request{Method: "GET", Path: "/?q=1'%20OR%20'1'='1", Headers: [][2]string{{"Host", "h"}}}); v.Status != 200 {
		t.Errorf("DetectionOnly attack: status %d, want 200", v.Status)
	}
	if !has(`[id "200"] [msg "sqli"] [data "1' OR '1'='1"]`) {
		t.Errorf("attack lines: %q", lines)
	}

	// Phases 4 and 5.
	lines = nil
	tx := w.NewTx()
	tx.ProcessURI("/phase5", "GET", "HTTP/1.1")
	tx.AddHeader("Host", "h")
	if tx.ProcessRequestHeaders() != nil || tx.ProcessRequestBody() != nil {
		t.Fatal("request blocked in DetectionOnly")
	}
	tx.AddResponseHeader("Content-Type", "text/plain")
	if v := tx.ProcessResponseHeaders(200, "HTTP/1.1"); v != nil {
		t.Fatalf("phase 3: %+v", v)
	}
	if !tx.WantsResponseBody() {
		t.Fatal("WantsResponseBody: got false with SecResponseBodyAccess On and text/plain")
	}
	if v := tx.WriteResponseBody([]byte("You have an error in your SQL syntax")); v != nil {
		t.Fatalf("response body: %+v", v)
	}
	if v := tx.ProcessResponseBody(); v != nil {
		t.Fatalf("phase 4: %+v", v)
	}
	if !has(`[id "400"] [msg "sql error in response"]`) || has(`[id "500"]`) {
		t.Errorf("after phase 4: %q", lines)
	}
	tx.ProcessLogging()
	tx.Close()
	if !has(`[id "500"] [msg "logging phase"]`) {
		t.Errorf("after phase 5: %q", lines)
	}
}

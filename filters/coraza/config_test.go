package main

import (
	"strings"
	"testing"

	"wafbench/filters/coraza/engine"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    engine.Config
		wantErr string
	}{
		{
			name: "full",
			in:   `{"rules_file": "/abs/main.conf", "inspect_response": true, "max_body_bytes": 1048576}`,
			want: engine.Config{RulesFile: "/abs/main.conf", InspectResponse: true, MaxBodyBytes: 1 << 20},
		},
		{name: "defaults", in: `{"rules_file": "/abs/main.conf"}`, want: engine.Config{RulesFile: "/abs/main.conf"}},
		{name: "unknown field", in: `{"rules_file": "/a", "rule_file": "/b"}`, wantErr: "unknown field"},
		{name: "relative", in: `{"rules_file": "main.conf"}`, wantErr: "absolute"},
		{name: "missing", in: `{}`, wantErr: "rules_file"},
		{name: "not json", in: `rules_file=/a`, wantErr: "filter_config"},
		{name: "trailing", in: `{"rules_file": "/a"} {}`, wantErr: "trailing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseConfig(%s): got err %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseConfig(%s): got %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

package profile

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wafbench/driver/modes"
)

func TestSuiteModes(t *testing.T) {
	const w = "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}}\n"
	for _, tt := range []struct {
		name, suite string
		want        []string
		err         string
	}{
		{"none", "{repeats: 1, duration: 1s, workloads: [a@1]}", nil, ""},
		{"listed", "{repeats: 1, duration: 1s, workloads: [a@1], modes: [ref-direct, coraza@re2]}", []string{"ref-direct", "coraza@re2"}, ""},
		{"unknown", "{repeats: 1, duration: 1s, workloads: [a@1], modes: [envoy-waf]}", nil, `suite s: modes: unknown mode "envoy-waf"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Parse("x.yaml", []byte(w+"suites:\n  s: "+tt.suite+"\n"))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := set.Suites["s"].Modes; !slices.Equal(got, tt.want) {
				t.Errorf("modes: got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLabSuite checks the lab suite's shape: every host of the Docker lab
// plus Envoy, one connection, each path in both connection modes.
func TestLabSuite(t *testing.T) {
	set, err := LoadDir(filepath.Join("..", "..", "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	su, ok := set.Suites["lab"]
	if !ok {
		t.Fatal("profiles: no lab suite")
	}
	want := []string{modes.RefDirect, modes.Passthrough, modes.ModSecurity, modes.Coraza, modes.RefNginxModSecurity, modes.RefCaddyCoraza}
	if !slices.Equal(su.Modes, want) {
		t.Errorf("lab modes: got %v, want %v", su.Modes, want)
	}
	cases, err := set.Cases(su.Workloads)
	if err != nil {
		t.Fatal(err)
	}
	perRequest := 0
	for _, c := range cases {
		if c.Conns != 1 {
			t.Errorf("%s: %d connections, want 1 (one request at a time)", c.Key(), c.Conns)
		}
		if c.Workload.ConnMode == "per-request" {
			perRequest++
		}
	}
	if len(cases) != 6 || perRequest != 3 {
		t.Errorf("lab workloads: %d, %d with a new connection per request; want 6 and 3", len(cases), perRequest)
	}
}

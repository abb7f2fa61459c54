package profile

import (
	"strings"
	"testing"

	"wafbench/driver/load"
)

func TestConnMode(t *testing.T) {
	const w = "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}}\n" +
		"- {name: b, method: GET, path: /, conns: [1], expect: {default: 200}, conn_mode: per-request}\n" +
		"- {name: c, method: GET, path: /, conns: [1], expect: {default: 200}, conn_mode: keepalive}\n"
	set, err := Parse("x.yaml", []byte(w+"suites:\n  s: {repeats: 1, duration: 1s, workloads: [a, b, c], conn_mode: per-request}\n"))
	if err != nil {
		t.Fatal(err)
	}
	def := set.Suites["s"].ConnMode
	tests := []struct {
		workload, def string
		want          load.ConnMode
	}{
		{"a", def, load.ConnPerRequest}, // the suite's
		{"a", "", load.ConnKeepAlive},   // nothing set
		{"a", "keepalive", load.ConnKeepAlive},
		{"b", "", load.ConnPerRequest}, // the workload's own
		{"b", "keepalive", load.ConnPerRequest},
		{"c", def, load.ConnKeepAlive},
	}
	for _, tt := range tests {
		if got := set.Workloads[tt.workload].ConnModeIn(tt.def); got != tt.want {
			t.Errorf("workload %s, default %q: got %q, want %q", tt.workload, tt.def, got, tt.want)
		}
	}
}

func TestConnModeErrors(t *testing.T) {
	const ok = "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"workload", "workloads:\n- {name: a, method: GET, path: /, conns: [1], expect: {default: 200}, conn_mode: close}\n",
			`workload a: conn_mode: want keepalive or per-request, got "close"`},
		{"suite", ok + "suites:\n  s: {repeats: 1, duration: 1s, workloads: [a], conn_mode: new}\n",
			`suite s: conn_mode: want keepalive or per-request, got "new"`},
		{"suite downstream", ok + "suites:\n  s: {repeats: 1, duration: 1s, workloads: [a], downstream: h3}\n",
			`suite s: downstream: want one of h1, h1-tls, h2-tls, h2c, got "h3"`},
		{"suite streams", ok + "suites:\n  s: {repeats: 1, duration: 1s, workloads: [a], streams: -1}\n",
			`suite s: streams: want 1..`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

package conformance

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	schema "github.com/coreruleset/ftw-tests-schema/v2/types"

	"wafbench/driver/modes"
)

func ptr[T any](v T) *T { return &v }

func TestRequest(t *testing.T) {
	tests := []struct {
		name string
		in   schema.Input
		want string
	}{
		{"autocomplete form data", schema.Input{Method: ptr("POST"), URI: ptr("/p"), OrderedHeaders: []schema.HeaderTuple{{Name: "Host", Value: "localhost"}},
			Data: ptr("a=b c&d=<e>")},
			"POST /p HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\nContent-Length: 15\r\n\r\na=b+c&d=%3Ce%3E"},
		{"already encoded form data kept", schema.Input{Method: ptr("POST"), Data: ptr("a=%20"), AutocompleteHeaders: ptr(true)},
			"POST / HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\nContent-Length: 5\r\n\r\na=%20"},
		{"no autocomplete: exactly as written", schema.Input{Method: ptr("GET"), Version: ptr("HTTP/1.0"), URI: ptr("/x y"),
			OrderedHeaders: []schema.HeaderTuple{{Name: "Host", Value: ""}, {Name: "host", Value: "b"}}, AutocompleteHeaders: ptr(false), Data: ptr("q")},
			"GET /x y HTTP/1.0\r\nHost: \r\nhost: b\r\n\r\nq"},
		{"multipart LF to CRLF", schema.Input{Method: ptr("POST"), AutocompleteHeaders: ptr(false),
			OrderedHeaders: []schema.HeaderTuple{{Name: "Content-Type", Value: "multipart/form-data; boundary=x"}}, Data: ptr("--x\nA\n--x--\n")},
			"POST / HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=x\r\n\r\n--x\r\nA\r\n--x--\r\n"},
		{"encoded_request verbatim", schema.Input{EncodedRequest: base64.StdEncoding.EncodeToString([]byte("GET\t/ HTTP/1.1\n\n"))},
			"GET\t/ HTTP/1.1\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := request(&tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestIDs(t *testing.T) {
	lines := []string{
		`2026/12/01 20:36:58 [info] 1#1: *3 ModSecurity: Warning. Matched "Operator ` + "`" + `Rx' ..." [file "/x/REQUEST-942.conf"] [line "1"] [id "942100"] [rev ""] [msg "SQL Injection Attack Detected via libinjection"] [data "Matched Data: s&sos found"]`,
		`[2026-12-01 20:36:58.123][1][info][dynamic_modules] wafbench-match [id "920350"] [msg "Host header is a numeric IP address"] [data "127.0.0.1"] [tx "abc"]`,
		`{"id":\"949110\"} [id \"949110\"]`,
		`[id "942100"] again`,
	}
	got := iDs(lines)
	want := []uint{942100, 920350, 949110}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name   string
		out    schema.Output
		status int
		ids    []uint
		lines  []string
		xerr   error
		pass   bool
	}{
		{"expected ids logged", schema.Output{Log: schema.Log{ExpectIds: []uint{942100}}}, 200, []uint{942100, 949110}, nil, nil, true},
		{"expected id missing", schema.Output{Log: schema.Log{ExpectIds: []uint{942100}}}, 200, []uint{949110}, nil, nil, false},
		{"forbidden id logged", schema.Output{Log: schema.Log{NoExpectIds: []uint{920100}}}, 200, []uint{920100}, nil, nil, false},
		{"status differs", schema.Output{Status: 400}, 200, nil, nil, nil, false},
		{"no response", schema.Output{Log: schema.Log{NoExpectIds: []uint{1}}}, 0, nil, nil, context.DeadlineExceeded, false},
		{"error expected", schema.Output{ExpectError: ptr(true)}, 0, nil, nil, context.DeadlineExceeded, true},
		{"log regex", schema.Output{Log: schema.Log{MatchRegex: `id "9\d+"`}}, 200, nil, []string{`x [id "920100"]`}, nil, true},
		{"isolated", schema.Output{Isolated: true, Log: schema.Log{ExpectIds: []uint{1}}}, 200, []uint{1, 2}, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := judge(&tt.out, tt.status, nil, tt.xerr, tt.lines, tt.ids)
			if got != tt.pass {
				t.Errorf("got %v (%s), want %v", got, why, tt.pass)
			}
		})
	}
}

func TestLogTailFindsMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.log")
	if err := os.WriteFile(path, []byte("old [id \"1\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tail, err := openTail(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tail.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("wafbench-match [id \"999999\"] [msg \"m1\"]\n[id \"942100\"]\npartial")
	f.Close()
	if _, err := tail.until(context.Background(), "m1", time.Second); err != nil {
		t.Fatal(err)
	}
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(" [id \"920100\"]\nwafbench-match [id \"999999\"] [msg \"m2\"]\n")
	f.Close()
	lines, err := tail.until(context.Background(), "m2", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := iDs(lines); len(got) != 2 || got[0] != 942100 || got[1] != 920100 {
		t.Errorf("ids between markers = %v, want [942100 920100]", got)
	}
	if _, err := tail.until(context.Background(), "m3", 0); err == nil || !strings.Contains(err.Error(), "marker not logged") {
		t.Errorf("missing marker: err = %v", err)
	}
}

func TestLoadOverrides(t *testing.T) {
	s, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadOverrides("overrides.yaml", s); err != nil {
		t.Fatalf("the committed overrides.yaml: %v", err)
	}
	tests := []struct{ name, yaml, want string }{
		{"unknown test", "overrides: [{name: a, tests: [920100-999], cause: engine, status: 400, reason: r}]", `unknown test "920100-999"`},
		{"no reason", "overrides: [{name: a, tests: [920100-1], cause: engine}]", "reason missing"},
		{"no pin", "overrides: [{name: a, tests: [920100-1], cause: engine, reason: r}]", "pin the failure it explains"},
		{"two kinds", "overrides: [{name: a, tests: [920100-1], cause: engine, fails: {missing: [920100], no_answer: true}, reason: r}]", "want exactly one of"},
		{"bad cause", "overrides: [{name: a, tests: [920100-1], cause: luck, reason: r}]", "cause: want"},
		{"unknown field", "overrides: [{name: a, tests: [920100-1], cause: engine, reason: r, ignore: true}]", "unknown field"},
		{"unknown host", "overrides: [{name: a, tests: [920100-1], hosts: [apache], cause: host, status: 400, reason: r}]", `unknown host "apache"`},
		{"bad version", "overrides: [{name: a, tests: [920100-1], engine_versions: [latest], cause: engine, fails: {no_answer: true}, reason: r}]", `"latest" is not a version`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "o.yaml")
			os.WriteFile(p, []byte(tt.yaml), 0o644)
			_, err := loadOverrides(p, s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestApplyOverrides(t *testing.T) {
	ov := &overrides{Entries: []override{{Name: "codec", Tests: []string{"a", "b", "c"}, Hosts: []string{"envoy"}, Cause: causeEnvoy, Status: 400, Reason: "r"}}}
	mr := modeResult{Tests: []testResult{
		{ID: "a", Outcome: Failed, Stages: []stageResult{{Status: 400}}},
		{ID: "b", Outcome: Failed, Stages: []stageResult{{Status: 200}}},
		{ID: "c", Outcome: passed},
	}}
	ov.apply(&mr, modes.Mode{Name: modes.Name{Base: "coraza", Engine: "coraza", Host: modes.Envoy}})
	if mr.Tests[0].Outcome != overridden || mr.Tests[1].Outcome != Failed || len(mr.Stale) != 1 {
		t.Errorf("got %+v, stale %v", mr.Tests, mr.Stale)
	}
	nginx := modeResult{Tests: []testResult{{ID: "a", Outcome: Failed, Stages: []stageResult{{Status: 400}}}}}
	ov.apply(&nginx, modes.Mode{Name: modes.Name{Base: modes.RefNginxModSecurity, Engine: "modsecurity", Host: modes.Nginx}})
	if nginx.Tests[0].Outcome != Failed {
		t.Errorf("an envoy override applied to nginx: %+v", nginx.Tests[0])
	}
}

// TestOverridePins: an entry explains a failure only as it pins it — the
// rule IDs missing or logged among its own, no answer, a log regex — and
// leaves a test it covers that fails otherwise unexplained, saying what it
// predicted.
func TestOverridePins(t *testing.T) {
	ms := modes.Mode{Name: modes.Name{Base: "modsecurity", Engine: "modsecurity", Host: modes.Envoy}}
	tests := []struct {
		name  string
		fails failure
		why   string
		want  string
	}{
		{"missing among", failure{Missing: []uint{920100, 949110}}, "expected ids [920100] not logged (logged [])", overridden},
		{"missing other", failure{Missing: []uint{920100}}, "expected ids [920100 920280] not logged (logged [])", Failed},
		{"missing, got logged", failure{Missing: []uint{922110}}, "ids [922110] logged, want none of them", Failed},
		{"logged", failure{Logged: []uint{944100, 944120}}, "ids [944120] logged, want none of them", overridden},
		{"logged, got status", failure{Logged: []uint{944120}}, "status 400, want 200", Failed},
		{"no answer", failure{NoAnswer: true}, "no response: host idle: no answer within 10s", overridden},
		{"no answer, got regex", failure{NoAnswer: true}, `log does not match "x"`, Failed},
		{"log regex", failure{LogRegex: true}, `log does not match "Multipart parsing error"`, overridden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ov := &overrides{Entries: []override{{Name: "e", Tests: []string{"a"}, Cause: causeEngine, Fails: &tt.fails, Reason: "r"}}}
			mr := modeResult{Tests: []testResult{{ID: "a", Outcome: Failed, Why: "stage 1: " + tt.why,
				Stages: []stageResult{{Status: 200, Pass: true}, {Status: 200, Why: tt.why}}}}}
			ov.apply(&mr, ms)
			got := mr.Tests[0]
			if got.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", got.Outcome, got.Why, tt.want)
			}
			if tt.want == Failed && !strings.Contains(got.Why, "(override e predicts "+tt.fails.String()+")") {
				t.Errorf("why %q does not say what the override predicted", got.Why)
			}
		})
	}
}

// TestOverrideEngineVersions: an entry narrowed to a release applies to
// that release only (a leading "v" ignored on either side), and a test it
// names that passes in another release is not stale there.
func TestOverrideEngineVersions(t *testing.T) {
	ov := &overrides{Entries: []override{{Name: "fixed-later", Tests: []string{"a"}, Engines: []string{"modsecurity"},
		EngineVersions: []string{"3.0.9"}, Cause: causeEngine, Fails: &failure{Missing: []uint{920100}}, Reason: "r"}}}
	ms := modes.Mode{Name: modes.Name{Base: "modsecurity", Engine: "modsecurity", Host: modes.Envoy}}
	stage := []stageResult{{Status: 200, Why: "expected ids [920100] not logged (logged [])"}}
	old := modeResult{EngineVersion: "v3.0.9", Tests: []testResult{{ID: "a", Outcome: Failed, Stages: stage}}}
	ov.apply(&old, ms)
	if old.Tests[0].Outcome != overridden {
		t.Errorf("3.0.9: %+v, want overridden", old.Tests[0])
	}
	for _, v := range []string{"3.0.14", ""} {
		mr := modeResult{EngineVersion: v, Tests: []testResult{{ID: "a", Outcome: passed}}}
		ov.apply(&mr, ms)
		if len(mr.Stale) != 0 {
			t.Errorf("version %q: stale %v, want none (the entry is for 3.0.9)", v, mr.Stale)
		}
		failed := modeResult{EngineVersion: v, Tests: []testResult{{ID: "a", Outcome: Failed, Stages: stage}}}
		ov.apply(&failed, ms)
		if failed.Tests[0].Outcome != Failed {
			t.Errorf("version %q: %+v, want the failure unexplained", v, failed.Tests[0])
		}
	}
}

// TestBuildDifferences: a build that misses a test its engine's default
// build passes is listed, whether the default's build is recorded as "" or
// under the engine's name (as crs-test records it); hosts of their own and
// the default itself are not builds.
func TestBuildDifferences(t *testing.T) {
	tests := func(outcome string) []testResult {
		return []testResult{{ID: "941310-1", Outcome: outcome}, {ID: "942100-1", Outcome: passed}}
	}
	for _, defBuild := range []string{"", "coraza"} {
		r := &run{Modes: []modeResult{
			{Mode: "coraza", Engine: "coraza", Host: "envoy", Build: defBuild, Tests: tests(passed)},
			{Mode: "coraza@re2", Engine: "coraza", Host: "envoy", Build: "coraza@re2", Tests: tests(Failed)},
			{Mode: "coraza@3.7.0", Engine: "coraza", Host: "envoy", Build: "coraza@3.7.0", Tests: tests(passed)},
			{Mode: "ref-caddy-coraza", Engine: "coraza", Host: "caddy", Tests: tests(Failed)},
		}}
		got := r.buildDifferences()
		if len(got) != 1 || got[0].Test != "941310-1" || got[0].Outcomes["coraza@re2"] != Failed || got[0].Outcomes["coraza"] != passed {
			t.Errorf("default build %q: got %+v, want 941310-1 passed by coraza, failed by coraza@re2", defBuild, got)
		}
	}
}

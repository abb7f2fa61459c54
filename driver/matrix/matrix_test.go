package matrix

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wafbench/driver/modes"
)

func TestCSVRoundTrip(t *testing.T) {
	want := []row{
		{Mode: "passthrough", Case: "benign_get_root", Class: "benign", Method: "GET", Path: "/", Expected: 200, Observed: 200, LatencyUs: 812},
		{Mode: "coraza@re2", Engine: "coraza", Build: "coraza@re2", Case: "sqli_query", Class: "sqli", Method: "GET",
			Path: "/login?user=admin%27+OR+%271%27%3D%271&pass=x", Expected: 403, Observed: 403, LatencyUs: 1534},
		{Mode: "ref-nginx-modsecurity", Engine: "modsecurity", Case: `quote"comma,newline`, Class: "xss", Method: "POST",
			Path: "/a,b\"c\nd…(9000 bytes)", Expected: 403, Observed: 0, Error: "read tcp: i/o timeout, \"quoted\""},
	}
	var buf bytes.Buffer
	if err := writeCSV(&buf, want); err != nil {
		t.Fatal(err)
	}
	// Any CSV reader sees the header and one record per row.
	recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(recs); got != len(want)+1 {
		t.Fatalf("csv records: got %d, want %d", got, len(want)+1)
	}
	if got := strings.Join(recs[0], ","); got != "mode,engine,build,case,class,method,path,expected,observed,latency_us,error" {
		t.Errorf("header: got %s", got)
	}
	got, err := readCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestReadCSVRejects(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"header", "mode,engine\n", "header"},
		{"integer", strings.Join(header, ",") + "\npassthrough,,,c,benign,GET,/,200,x,5,\n", "observed: want an integer"},
		{"fields", strings.Join(header, ",") + "\npassthrough,,,c\n", "wrong number of fields"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readCSV(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestLoad(t *testing.T) {
	root := repoRoot(t)
	for _, name := range Names {
		c, err := Load(name, root)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(c.Entries) < 10 {
			t.Errorf("%s: %d entries, want at least 10", name, len(c.Entries))
		}
		for i := range c.Entries {
			if _, err := c.Entries[i].raw(); err != nil {
				t.Errorf("%s %s: %v", name, c.Entries[i].Name, err)
			}
		}
	}
	_, err := Load("nope", root)
	if err == nil || !strings.Contains(err.Error(), `unknown corpus "nope"`) || !strings.Contains(err.Error(), "parity, lab") {
		t.Errorf("unknown corpus: got %v", err)
	}
}

func TestExpected(t *testing.T) {
	c := &Corpus{ByBuild: map[string]map[string]buildDifference{"coraza@3.7.0": {"deep": {Status: 200}}}}
	parity := Entry{Name: "deep", Expect: map[string]int{"modsecurity": 200, "coraza": 400}}
	phase1 := Entry{Name: "p1", Expect: map[string]int{"passthrough": 403, "modsecurity": 403, "coraza": 403}}
	lab := Entry{Name: "sqli", Expect: map[string]int{"default": 200, "waf": 403}}
	for _, tt := range []struct {
		e           Entry
		mode, build string
		want        int
	}{
		{parity, modes.Coraza, modes.Coraza, 400},
		{parity, "coraza@3.7.0", "coraza@3.7.0", 200}, // build-differences.yaml
		{parity, "coraza@re2", "coraza@re2", 400},     // base name
		{parity, modes.CorazaWasm, "", 400},
		{parity, modes.RefCaddyCoraza, "", 400}, // held to its engine
		{parity, modes.RefNginxModSecurity, "", 200},
		{parity, modes.Passthrough, "", 200},
		{phase1, modes.Passthrough, "", 403},
		{phase1, modes.RefDirect, "", 200}, // the upstream answers
		{lab, modes.RefNginxModSecurity, "", 403},
		{lab, modes.RefDirect, "", 200},
		{Entry{Expect: map[string]int{"modsecurity": 403}}, modes.Coraza, modes.Coraza, 0},
	} {
		if got := c.expected(&tt.e, tt.mode, tt.build); got != tt.want {
			t.Errorf("%s in %s: got %d, want %d", tt.e.Name, tt.mode, got, tt.want)
		}
	}
}

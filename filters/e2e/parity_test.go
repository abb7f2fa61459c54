package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"wafbench/envoy"
)

// parityEntry is one request of testdata/parity.yaml.
type parityEntry struct {
	Name    string         `json:"name"`
	Method  string         `json:"method"`
	Target  string         `json:"target"`
	Headers []string       `json:"headers,omitempty"`
	NoBase  bool           `json:"no_base,omitempty"`
	Body    *string        `json:"body,omitempty"`
	Expect  map[string]int `json:"expect"`
}

// disagreement is one entry of testdata/disagreements.yaml: the statuses the
// two engines answer and why they differ.
type disagreement struct {
	Name        string `json:"name"`
	ModSecurity int    `json:"modsecurity"`
	Coraza      int    `json:"coraza"`
	Reason      string `json:"reason"`
}

func (e parityEntry) request() (Request, error) {
	var hs [][2]string
	if !e.NoBase {
		hs = append(hs, baseHeaders...)
	}
	for _, h := range e.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return Request{}, fmt.Errorf("header %q: want \"Name: value\"", h)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		replaced := false
		for i := range hs {
			if strings.EqualFold(hs[i][0], k) {
				hs[i][1], replaced = v, true
			}
		}
		if !replaced {
			hs = append(hs, [2]string{k, v})
		}
	}
	r := Request{Method: e.Method, Target: e.Target, Headers: hs}
	if e.Body != nil {
		r.Body = []byte(*e.Body)
	}
	return r, nil
}

func (e parityEntry) expected(mode envoy.Mode) int {
	if v, ok := e.Expect[string(mode)]; ok {
		return v
	}
	if mode == envoy.Passthrough {
		return 200
	}
	return 0
}

func loadParity(t *testing.T) ([]parityEntry, map[string]disagreement) {
	t.Helper()
	var entries []parityEntry
	readYAML(t, "parity.yaml", &entries)
	seen := map[string]bool{}
	for _, e := range entries {
		where := "parity.yaml " + e.Name
		if e.Name == "" || seen[e.Name] {
			t.Fatalf("%s: want a unique, non-empty name", where)
		}
		seen[e.Name] = true
		if e.Method == "" || !strings.HasPrefix(e.Target, "/") {
			t.Fatalf("%s: want method and a target starting with /", where)
		}
		for _, m := range wafModes {
			if e.expected(m) == 0 {
				t.Fatalf("%s: expect.%s missing", where, m)
			}
		}
		if p := e.expected(envoy.Passthrough); p != 200 && !hasHeader(e.Headers, envoy.BlockHeader) {
			t.Fatalf("%s: expect.passthrough %d: only the phase-1 block header may make passthrough answer non-200", where, p)
		}
	}
	var list []disagreement
	readYAML(t, "disagreements.yaml", &list)
	dis := map[string]disagreement{}
	for _, d := range list {
		if !seen[d.Name] {
			t.Errorf("disagreements.yaml %s: no such entry in parity.yaml", d.Name)
		}
		if strings.TrimSpace(d.Reason) == "" {
			t.Errorf("disagreements.yaml %s: reason is empty", d.Name)
		}
		if d.ModSecurity == d.Coraza {
			t.Errorf("disagreements.yaml %s: modsecurity and coraza both %d: not a disagreement", d.Name, d.Coraza)
		}
		dis[d.Name] = d
	}
	return entries, dis
}

func hasHeader(hs []string, name string) bool {
	for _, h := range hs {
		k, _, _ := strings.Cut(h, ":")
		if strings.EqualFold(strings.TrimSpace(k), name) {
			return true
		}
	}
	return false
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("testdata/%s: %v", name, err)
	}
}

// TestVerdictParity runs every request of testdata/parity.yaml through the
// three modes, checks each mode's expected status, and checks that the two
// WAF engines disagree exactly on the entries of testdata/disagreements.yaml,
// with the statuses listed there.
func TestVerdictParity(t *testing.T) {
	entries, dis := loadParity(t)
	if len(entries) < 40 {
		t.Errorf("parity.yaml: %d entries, want ≥ 40", len(entries))
	}
	got := map[envoy.Mode]map[string]int{}
	for _, mode := range envoy.Modes {
		got[mode] = runParity(t, mode, entries)
	}

	agree := 0
	var table []string
	for _, e := range entries {
		ms, cz := got[envoy.ModSecurity][e.Name], got[envoy.Coraza][e.Name]
		table = append(table, fmt.Sprintf("%-32s passthrough %3d  modsecurity %3d  coraza %3d",
			e.Name, got[envoy.Passthrough][e.Name], ms, cz))
		for _, mode := range envoy.Modes {
			if g, w := got[mode][e.Name], e.expected(mode); g != w {
				t.Errorf("%s %s: status %d, want %d", e.Name, mode, g, w)
			}
		}
		d, listed := dis[e.Name]
		switch {
		case ms == cz && listed:
			t.Errorf("%s: listed in disagreements.yaml but both engines answer %d: remove the entry", e.Name, ms)
		case ms == cz:
			agree++
		case !listed:
			t.Errorf("%s: engines disagree (modsecurity %d, coraza %d) and disagreements.yaml does not list it", e.Name, ms, cz)
		case d.ModSecurity != ms || d.Coraza != cz:
			t.Errorf("%s: engines answer modsecurity %d, coraza %d; disagreements.yaml says %d, %d", e.Name, ms, cz, d.ModSecurity, d.Coraza)
		}
	}
	t.Logf("parity: %d requests, %d agreements, %d disagreements\n%s", len(entries), agree, len(entries)-agree,
		strings.Join(table, "\n"))
	names := make([]string, 0, len(dis))
	for n := range dis {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("disagreement %s: modsecurity %d, coraza %d: %s", n, dis[n].ModSecurity, dis[n].Coraza, dis[n].Reason)
	}
}

// runParity sends every entry once through mode over one persistent
// connection (reopened when Envoy closes it) and returns the statuses.
func runParity(t *testing.T, mode envoy.Mode, entries []parityEntry) map[string]int {
	t.Helper()
	out := map[string]int{}
	var c *Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for _, e := range entries {
		r, err := e.request()
		if err != nil {
			t.Fatalf("parity.yaml %s: %v", e.Name, err)
		}
		if c == nil {
			c = dial(t, mode)
		}
		resp, err := c.Do(e.Method, r.Bytes())
		if err != nil {
			t.Errorf("%s %s: %v", mode, e.Name, err)
			c.Close()
			c = nil
			continue
		}
		out[e.Name] = resp.Status
		if strings.EqualFold(resp.Header.Get("Connection"), "close") {
			c.Close()
			c = nil
		}
	}
	return out
}

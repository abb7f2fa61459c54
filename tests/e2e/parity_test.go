//go:build integration

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"wafbench/driver/envoy"
	"wafbench/driver/matrix"
	"wafbench/driver/modes"
)

// parityEntry is one request of testdata/parity.yaml, in the corpus format
// the driver reads too (matrix.Entry: 'wafbench matrix --corpus parity' and
// every run's matrix.csv send this file).
type parityEntry struct{ matrix.Entry }

// Attack classes and the classes every engine must pass. The class of an
// entry says what the request is; its expect says what each mode answers.
var (
	parityClasses = []string{
		"benign", "sqli", "xss", "lfi", "rce", "php", "java", "ssrf", "xxe", "scanner",
		"policy", "malformed", "limit", "phase1",
	}
	parityCarriers = []string{
		"none", "query", "path", "form", "json", "xml", "multipart", "cookie", "header",
	}
)

// disagreement is one entry of testdata/disagreements.yaml: the statuses the
// two engines answer and why they differ.
type disagreement struct {
	Name        string `json:"name"`
	ModSecurity int    `json:"modsecurity"`
	Coraza      int    `json:"coraza"`
	Reason      string `json:"reason"`
}

func (e parityEntry) request() (request, error) {
	method, target, hs, body, err := e.Parts()
	if err != nil {
		return request{}, err
	}
	return request{Method: method, Target: target, Headers: hs, Body: body}, nil
}

func (e parityEntry) expected(mode envoy.Mode) int {
	if v, ok := e.Expect[string(mode)]; ok {
		return v
	}
	if mode == envoy.CorazaWasm {
		return e.expected(envoy.Coraza) // the same engine and rules in another host
	}
	if mode == envoy.Passthrough {
		return 200
	}
	return 0
}

// check reports the first thing wrong with the entry's fields.
func (e parityEntry) check() error {
	switch {
	case !slices.Contains(parityClasses, e.Class):
		return fmt.Errorf("class %q: want one of %s", e.Class, strings.Join(parityClasses, ", "))
	case !slices.Contains(parityCarriers, e.Carrier):
		return fmt.Errorf("carrier %q: want one of %s", e.Carrier, strings.Join(parityCarriers, ", "))
	case e.Method == "" || !strings.HasPrefix(e.Target, "/"):
		return fmt.Errorf("want method and a target starting with /")
	case e.Pad != nil && (e.Pad.Count <= 0 || e.Pad.Pattern == ""):
		return fmt.Errorf("pad: want a pattern and count > 0")
	case e.Pad == nil && (strings.Contains(e.Target, matrix.PadMarker) || e.Body != nil && strings.Contains(*e.Body, matrix.PadMarker)):
		return fmt.Errorf("%s without pad", matrix.PadMarker)
	}
	for _, m := range wafModes {
		if e.expected(m) == 0 {
			return fmt.Errorf("expect.%s missing", m)
		}
	}
	if p := e.expected(envoy.Passthrough); p != 200 && !hasHeader(e.Headers, envoy.BlockHeader) {
		return fmt.Errorf("expect.passthrough %d: only the phase-1 block header may make passthrough answer non-200", p)
	}
	return nil
}

// checkClass reports whether the entry's expected statuses fit its class: an
// enforcing engine passes a benign request and denies every other class,
// unless passes says why both let it through. Entries listed in
// disagreements.yaml are exempt (their reason says which engine is wrong).
func (e parityEntry) checkClass() error {
	for _, m := range wafModes {
		switch denied := blocked(e.expected(m)); {
		case e.Class == "benign" && denied:
			return fmt.Errorf("class benign, expect.%s %d: a benign request must pass", m, e.expected(m))
		case e.Class != "benign" && !denied && e.Passes == "":
			return fmt.Errorf("class %s, expect.%s %d: a request of this class must be denied, or passes must say why both engines let it through", e.Class, m, e.expected(m))
		}
	}
	if e.Passes != "" && (e.Class == "benign" || blocked(e.expected(envoy.ModSecurity)) || blocked(e.expected(envoy.Coraza))) {
		return fmt.Errorf("passes: only for a non-benign request both engines pass")
	}
	return nil
}

// blocked reports whether status means the request did not reach the
// upstream.
func blocked(status int) bool { return status < 200 || status > 299 }

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
		if err := e.check(); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
	}
	var list []disagreement
	readYAML(t, "disagreements.yaml", &list)
	dis := map[string]disagreement{}
	for _, d := range list {
		if !seen[d.Name] {
			t.Errorf("disagreements.yaml %s: no such entry in parity.yaml", d.Name)
		}
		if dis[d.Name].Name != "" {
			t.Errorf("disagreements.yaml %s: listed twice", d.Name)
		}
		if strings.TrimSpace(d.Reason) == "" {
			t.Errorf("disagreements.yaml %s: reason is empty", d.Name)
		}
		if d.ModSecurity == d.Coraza {
			t.Errorf("disagreements.yaml %s: modsecurity and coraza both %d: not a disagreement", d.Name, d.Coraza)
		}
		dis[d.Name] = d
	}
	for _, e := range entries {
		d, listed := dis[e.Name]
		if !listed {
			if err := e.checkClass(); err != nil {
				t.Errorf("parity.yaml %s: %v", e.Name, err)
			}
			continue
		}
		if e.expected(envoy.ModSecurity) != d.ModSecurity || e.expected(envoy.Coraza) != d.Coraza {
			t.Errorf("parity.yaml %s: expect modsecurity %d, coraza %d; disagreements.yaml says %d, %d",
				e.Name, e.expected(envoy.ModSecurity), e.expected(envoy.Coraza), d.ModSecurity, d.Coraza)
		}
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

// buildDifference is one entry of testdata/build-differences.yaml: a
// request that a non-default engine build answers differently from the
// default build that parity.yaml and disagreements.yaml describe.
type buildDifference struct {
	Build  string `json:"build"`
	Name   string `json:"name"`
	Status int    `json:"status"`
	Reason string `json:"reason"`
}

// buildDifferences returns the build under test (WAFBENCH_MODE_UNDER_TEST,
// set by scripts/engines/test-builds.sh; "" for the default builds) and the
// differences build-differences.yaml lists for it, after checking the file.
func buildDifferences(t *testing.T, entries []parityEntry) (string, map[string]buildDifference) {
	t.Helper()
	var list []buildDifference
	readYAML(t, "build-differences.yaml", &list)
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name] = true
	}
	build := os.Getenv("WAFBENCH_MODE_UNDER_TEST")
	out := map[string]buildDifference{}
	for _, d := range list {
		n, err := modes.Parse(d.Build)
		switch {
		case err != nil || n.Build == "" || n.Engine == "":
			t.Errorf("build-differences.yaml %s: build %q: want <engine>@<build>", d.Name, d.Build)
		case !names[d.Name]:
			t.Errorf("build-differences.yaml %s: no such entry in parity.yaml", d.Name)
		case strings.TrimSpace(d.Reason) == "":
			t.Errorf("build-differences.yaml %s (%s): reason is empty", d.Name, d.Build)
		}
		if d.Build == build {
			out[d.Name] = d
		}
	}
	return build, out
}

// TestParity runs every request of testdata/parity.yaml through the three
// modes, checks each mode's expected status, and checks that the two WAF
// engines disagree exactly on the entries of testdata/disagreements.yaml,
// with the statuses listed there. It logs a table by class and by carrier
// (go test -run TestParity -v).
func TestParity(t *testing.T) {
	entries, dis := loadParity(t)
	for _, want := range []struct{ class, carrier string }{
		{"benign", "json"}, {"benign", "xml"}, {"benign", "multipart"}, {"benign", "cookie"}, {"benign", "header"},
		{"sqli", "json"}, {"sqli", "xml"}, {"sqli", "multipart"}, {"sqli", "cookie"}, {"sqli", "header"},
		{"malformed", "json"}, {"malformed", "xml"}, {"malformed", "multipart"},
		{"limit", "query"}, {"limit", "form"}, {"limit", "json"}, {"limit", "multipart"},
	} {
		n := 0
		for _, e := range entries {
			if e.Class == want.class && e.Carrier == want.carrier {
				n++
			}
		}
		if n == 0 {
			t.Errorf("parity.yaml: no %s request carried in %s", want.class, want.carrier)
		}
	}
	got := map[envoy.Mode]map[string]int{}
	for _, mode := range fixtureModes {
		got[mode] = runParity(t, mode, entries)
	}
	build, over := buildDifferences(t, entries)

	agree := 0
	var rows []string
	for _, e := range entries {
		ms, cz := got[envoy.ModSecurity][e.Name], got[envoy.Coraza][e.Name]
		rows = append(rows, fmt.Sprintf("%-36s %-9s %-9s passthrough %3d  modsecurity %3d  coraza %3d",
			e.Name, e.Class, e.Carrier, got[envoy.Passthrough][e.Name], ms, cz))
		_, listed := dis[e.Name]
		o, overridden := over[e.Name]
		for _, mode := range fixtureModes {
			w := e.expected(mode)
			if overridden && string(mode) == modes.Engine(build) {
				w = o.Status
			}
			if g := got[mode][e.Name]; g != w {
				t.Errorf("%s %s: status %d, want %d", e.Name, mode, g, w)
			}
		}
		switch {
		case overridden:
			// The build under test answers differently from the default
			// build the corpus describes; its status was checked above.
		case ms == cz && listed:
			t.Errorf("%s: listed in disagreements.yaml but both engines answer %d: remove the entry", e.Name, ms)
		case ms == cz:
			agree++
		case !listed:
			t.Errorf("%s: engines disagree (modsecurity %d, coraza %d) and disagreements.yaml does not list it", e.Name, ms, cz)
		}
	}
	t.Logf("parity: %d requests, %d agreements, %d disagreements\n%s\n\nby class:\n%s\nby carrier:\n%s",
		len(entries), agree, len(entries)-agree, strings.Join(rows, "\n"),
		parityTable(entries, got, func(e parityEntry) string { return e.Class }, parityClasses),
		parityTable(entries, got, func(e parityEntry) string { return e.Carrier }, parityCarriers))
	names := make([]string, 0, len(dis))
	for n := range dis {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("disagreement %s: modsecurity %d, coraza %d: %s", n, dis[n].ModSecurity, dis[n].Coraza, dis[n].Reason)
	}
}

// parityTable counts, per group, the requests each engine denied and passed
// and the requests on which both engines answered the same status.
func parityTable(entries []parityEntry, got map[envoy.Mode]map[string]int, group func(parityEntry) string, order []string) string {
	type row struct{ n, msDenied, msPassed, czDenied, czPassed, agree int }
	rows := map[string]*row{}
	for _, e := range entries {
		r := rows[group(e)]
		if r == nil {
			r = &row{}
			rows[group(e)] = r
		}
		ms, cz := got[envoy.ModSecurity][e.Name], got[envoy.Coraza][e.Name]
		r.n++
		if blocked(ms) {
			r.msDenied++
		} else {
			r.msPassed++
		}
		if blocked(cz) {
			r.czDenied++
		} else {
			r.czPassed++
		}
		if ms == cz {
			r.agree++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| %-10s | %4s | %-26s | %-26s | %6s |\n", "", "n", "modsecurity denied/passed", "coraza denied/passed", "agree")
	fmt.Fprintf(&b, "|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 12), strings.Repeat("-", 6), strings.Repeat("-", 28), strings.Repeat("-", 28), strings.Repeat("-", 8))
	var total row
	for _, g := range order {
		r := rows[g]
		if r == nil {
			continue
		}
		fmt.Fprintf(&b, "| %-10s | %4d | %26s | %26s | %6d |\n", g, r.n,
			fmt.Sprintf("%d / %d", r.msDenied, r.msPassed), fmt.Sprintf("%d / %d", r.czDenied, r.czPassed), r.agree)
		total.n += r.n
		total.msDenied += r.msDenied
		total.msPassed += r.msPassed
		total.czDenied += r.czDenied
		total.czPassed += r.czPassed
		total.agree += r.agree
	}
	fmt.Fprintf(&b, "| %-10s | %4d | %26s | %26s | %6d |\n", "total", total.n,
		fmt.Sprintf("%d / %d", total.msDenied, total.msPassed), fmt.Sprintf("%d / %d", total.czDenied, total.czPassed), total.agree)
	return b.String()
}

// runParity sends every entry through mode, each on a connection of its own
// (a denial may close the connection, and a verdict must not depend on the
// requests before it), and returns the statuses. The request is written
// while the response is read: a module may answer 413 before it has read a
// large body.
func runParity(t *testing.T, mode envoy.Mode, entries []parityEntry) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range entries {
		r, err := e.request()
		if err != nil {
			t.Fatalf("parity.yaml %s: %v", e.Name, err)
		}
		c := dial(t, mode)
		werr := make(chan error, 1)
		go func() { werr <- c.write(r.bytes()) }()
		resp, err := c.read(e.Method)
		c.Close()
		if we := <-werr; err != nil {
			t.Errorf("%s %s: %v (write: %v)", mode, e.Name, err, we)
			continue
		}
		out[e.Name] = resp.Status
	}
	return out
}

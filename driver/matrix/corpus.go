package matrix

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"wafbench/driver/modes"
	"wafbench/internal/http1"
)

// Corpus names.
const (
	// Parity is the verdict-parity corpus of the end-to-end tests
	// (tests/e2e/testdata/parity.yaml), with the reasons of
	// disagreements.yaml and the statuses of build-differences.yaml.
	Parity = "parity"
	// Lab is the older Docker lab's kinds of requests (safe GET, SQL
	// injection, XSS, …) on paths go-httpbin answers (lab.yaml, built in).
	lab = "lab"
)

// Names lists the corpora Load knows.
var Names = []string{Parity, lab}

// parityDir is where the parity corpus lives, relative to the repository root.
const parityDir = "tests/e2e/testdata"

//go:embed lab.yaml
var labYAML []byte

// baseHeaders are the headers of a benign client that CRS does not score;
// every entry sends them first unless it sets no_base.
var baseHeaders = [][2]string{{"Host", "bench.local"}, {"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}}

// Entry is one request of a corpus file (parity.yaml and lab.yaml share the
// format; parity.yaml's header comment documents every field).
type Entry struct {
	Name    string         `json:"name"`
	Class   string         `json:"class"`
	Carrier string         `json:"carrier"`
	Method  string         `json:"method"`
	Target  string         `json:"target"`
	Headers []string       `json:"headers,omitempty"`
	NoBase  bool           `json:"no_base,omitempty"`
	Body    *string        `json:"body,omitempty"`
	Pad     *pad           `json:"pad,omitempty"`
	Expect  map[string]int `json:"expect"`
	// Passes explains why the engines pass a request of an attack or
	// policy class.
	Passes string `json:"passes,omitempty"`
}

// pad generates the bulk of a large request: Pattern repeated Count times,
// each "{i}" replaced by the repetition's index, then Close repeated Count
// times (for nesting), replaces the "{pad}" marker of the target or body.
type pad struct {
	Pattern string `json:"pattern"`
	Close   string `json:"close,omitempty"`
	Count   int    `json:"count"`
}

// PadMarker marks where a Pad is expanded.
const PadMarker = "{pad}"

func (p *pad) expand() string {
	var b strings.Builder
	b.Grow(p.Count * (len(p.Pattern) + len(p.Close) + 4))
	for i := range p.Count {
		b.WriteString(strings.ReplaceAll(p.Pattern, "{i}", strconv.Itoa(i)))
	}
	b.WriteString(strings.Repeat(p.Close, p.Count))
	return b.String()
}

// check reports the first thing wrong with the entry's own fields.
func (e *Entry) check() error {
	switch {
	case e.Name == "":
		return fmt.Errorf("entry without a name")
	case e.Class == "":
		return fmt.Errorf("%s: class: want what the request is (benign, sqli, xss, …)", e.Name)
	case e.Method == "" || !strings.HasPrefix(e.Target, "/"):
		return fmt.Errorf("%s: want method and a target starting with /", e.Name)
	case e.Pad != nil && (e.Pad.Count <= 0 || e.Pad.Pattern == ""):
		return fmt.Errorf("%s: pad: want a pattern and count > 0", e.Name)
	case e.Pad == nil && (strings.Contains(e.Target, PadMarker) || e.Body != nil && strings.Contains(*e.Body, PadMarker)):
		return fmt.Errorf("%s: %s without pad", e.Name, PadMarker)
	}
	for _, h := range e.Headers {
		if k, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("%s: header %q: want \"Name: value\"", e.Name, h)
		}
	}
	for k, v := range e.Expect {
		if v < 100 || v > 599 {
			return fmt.Errorf("%s: expect.%s: want an HTTP status 100..599, got %d", e.Name, k, v)
		}
	}
	return nil
}

// Parts is the request as sent: method, request-target (pad expanded),
// headers in order (the base headers first unless NoBase; a header named
// like a base header replaces it) and body (nil for none).
func (e *Entry) Parts() (method, target string, headers [][2]string, body []byte, err error) {
	if !e.NoBase {
		headers = slices.Clone(baseHeaders)
	}
	for _, h := range e.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return "", "", nil, nil, fmt.Errorf("header %q: want \"Name: value\"", h)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		replaced := false
		for i := range headers {
			if strings.EqualFold(headers[i][0], k) {
				headers[i][1], replaced = v, true
			}
		}
		if !replaced {
			headers = append(headers, [2]string{k, v})
		}
	}
	target = e.Target
	if e.Body != nil {
		body = []byte(*e.Body)
	}
	if e.Pad != nil {
		pad := e.Pad.expand()
		switch {
		case strings.Contains(target, PadMarker):
			target = strings.Replace(target, PadMarker, pad, 1)
		case e.Body != nil && strings.Contains(*e.Body, PadMarker):
			body = []byte(strings.Replace(*e.Body, PadMarker, pad, 1))
		default:
			return "", "", nil, nil, fmt.Errorf("pad: neither target nor body holds %s", PadMarker)
		}
	}
	return e.Method, target, headers, body, nil
}

// raw serializes the entry as an HTTP/1.1 request (http1.AppendRequest:
// headers as given, Content-Length for a body).
func (e *Entry) raw() ([]byte, error) {
	method, target, hs, body, err := e.Parts()
	if err != nil {
		return nil, err
	}
	return http1.AppendRequest(make([]byte, 0, 256+len(target)+len(body)), method, target, hs, body), nil
}

// readEntries parses a corpus file strictly (an unknown field is an error)
// and checks every entry and that names are unique.
func readEntries(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseEntries(path, b)
}

func parseEntries(name string, b []byte) ([]Entry, error) {
	var entries []Entry
	if err := yaml.UnmarshalStrict(b, &entries); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s: no entries", name)
	}
	seen := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("%s: %s: name used twice", name, e.Name)
		}
		seen[e.Name] = true
	}
	return entries, nil
}

// disagreement is one entry of disagreements.yaml: the statuses the two
// engines' default builds answer to a parity request, and why they differ.
type disagreement struct {
	Name        string `json:"name"`
	ModSecurity int    `json:"modsecurity"`
	Coraza      int    `json:"coraza"`
	Reason      string `json:"reason"`
}

// buildDifference is one entry of build-differences.yaml: a parity request
// that a non-default engine build answers differently, and why.
type buildDifference struct {
	Build  string `json:"build"`
	Name   string `json:"name"`
	Status int    `json:"status"`
	Reason string `json:"reason"`
}

// Corpus is a named list of requests with what each mode should answer.
type Corpus struct {
	Name    string
	Entries []Entry
	// Notes explain an entry's expected statuses (disagreements.yaml's
	// reasons, an entry's passes), by entry name.
	Notes map[string]string
	// ByBuild holds statuses that an engine build (a mode name such as
	// coraza@3.7.0) answers instead of its engine's, by build then entry.
	ByBuild map[string]map[string]buildDifference
}

// Load reads the corpus called name; root is the repository root (the
// parity corpus is read from root/ParityDir). An unknown name is an error
// that lists the known ones.
func Load(name, root string) (*Corpus, error) {
	switch name {
	case Parity:
		return loadParity(filepath.Join(root, parityDir))
	case lab:
		entries, err := parseEntries("lab.yaml (driver/matrix)", labYAML)
		if err != nil {
			return nil, err
		}
		c := &Corpus{Name: lab, Entries: entries, Notes: map[string]string{}}
		for _, e := range entries {
			if e.Passes != "" {
				c.Notes[e.Name] = e.Passes
			}
		}
		return c, nil
	}
	return nil, fmt.Errorf("unknown corpus %q (known: %s)", name, strings.Join(Names, ", "))
}

func loadParity(dir string) (*Corpus, error) {
	entries, err := readEntries(filepath.Join(dir, "parity.yaml"))
	if err != nil {
		return nil, err
	}
	c := &Corpus{Name: Parity, Entries: entries, Notes: map[string]string{}, ByBuild: map[string]map[string]buildDifference{}}
	for _, e := range entries {
		if e.Passes != "" {
			c.Notes[e.Name] = e.Passes
		}
	}
	var dis []disagreement
	if err := readYAML(filepath.Join(dir, "disagreements.yaml"), &dis); err != nil {
		return nil, err
	}
	for _, d := range dis {
		c.Notes[d.Name] = strings.TrimSpace(d.Reason)
	}
	var diffs []buildDifference
	if err := readYAML(filepath.Join(dir, "build-differences.yaml"), &diffs); err != nil {
		return nil, err
	}
	for _, d := range diffs {
		if c.ByBuild[d.Build] == nil {
			c.ByBuild[d.Build] = map[string]buildDifference{}
		}
		c.ByBuild[d.Build][d.Name] = d
	}
	return c, nil
}

func readYAML(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// expected is the status e should get in mode, whose engine build is build
// (a mode name like coraza@3.7.0; "" without one): the build's own status
// from build-differences.yaml if listed, else the first of the mode's
// expect keys (modes.ExpectKeys, with the mode's engine name before "waf",
// so a reference host is held to its engine's verdicts) that e lists. A
// mode without an engine that e does not name expects 200 (the upstream's
// answer); a WAF mode e does not cover expects 0 (unknown).
func (c *Corpus) expected(e *Entry, mode, build string) int {
	if d, ok := c.ByBuild[build][e.Name]; ok && build != "" {
		return d.Status
	}
	for _, k := range expectKeys(mode) {
		if v, ok := e.Expect[k]; ok {
			return v
		}
	}
	if modes.Engine(mode) == "" {
		return 200
	}
	return 0
}

// expectKeys is modes.ExpectKeys with the engine's name before "waf" when
// the mode's own keys lack it (a reference host of that engine).
func expectKeys(mode string) []string {
	keys := modes.ExpectKeys(mode)
	eng := modes.Engine(mode)
	if eng == "" || slices.Contains(keys, eng) {
		return keys
	}
	i := slices.Index(keys, "waf")
	if i < 0 {
		i = len(keys)
	}
	return slices.Insert(keys, i, eng)
}

package replay

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	schema "github.com/coreruleset/ftw-tests-schema/v2/types"

	"wafbench/driver/crssuite"
	"wafbench/internal/crs"
)

// CRS is the format of the CRS regression suite's requests (no file: the
// suite is embedded in the coraza-coreruleset module, driver/crssuite).
const CRS = "crs"

// CRSSelect chooses tests of the CRS 4.25.0 regression suite for a
// replay: Count of the eligible tests (CRSCandidates) whose rule ID starts
// with one of Rules (none: every eligible test), drawn by a shuffle seeded
// with Seed and sent in suite order.
type CRSSelect struct {
	Count int      `json:"count"`
	Seed  uint64   `json:"seed"`
	Rules []string `json:"rules,omitempty"` // rule-ID prefixes: "942", "941100"
}

// Candidates are the suite's tests a benchmark trial can replay, in suite
// order, and how many tests each exclusion rule left out (by rule; a test
// counts under the first rule it fails).
type Candidates struct {
	Entries  []Entry
	Excluded map[string]int
}

// The exclusion rules, in the order they are applied. A test is eligible
// when it passes all: its request is what load's writer sends, unchanged
// but for Connection: close, and the benchmark configuration (blocking,
// paranoia level 1, inbound threshold 5) must deny it with 403.
const (
	exStages    = "more than one stage (a later stage depends on an earlier one)"
	exResponse  = "a response-phase rule file (RESPONSE-95x/98x: needs the test backend's /reflect)"
	exOutcome   = "the stage checks a status, a response, an error or a log regex, or expects no rule ID"
	exNotPL1    = "no expected rule adds the critical anomaly score at paranoia level 1 (alone below the threshold of 5)"
	exCRSTest   = "every such rule reads a TX variable only the crs-test configuration sets (crs.ConformanceOnlyVars)"
	exBuild     = "the request cannot be built (crssuite.Build: a data template that does not parse)"
	exEncoded   = "encoded_request (raw bytes beyond load's request writer)"
	exVersion   = "HTTP version other than HTTP/1.1 (load writes HTTP/1.1; Envoy answers 426 to HTTP/1.0)"
	exMethod    = "method other than GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH (Envoy's codec answers 400 or holds CONNECT)"
	exTarget    = "request-target not in origin form (/…): Envoy rewrites absolute and authority forms"
	exHost      = "no Host header, or more than one (load writes exactly one)"
	exFraming   = "writes Transfer-Encoding, Upgrade, TE, a Connection other than close or keep-alive, or a Content-Length other than its body's (load owns framing and keeps connections open; Envoy's codec consumes these headers)"
	exHeaderSyn = "a header name that is not a token or a value with a line break"
	exReferer   = "a Referer that is not an RFC 3986 URI reference (space, \" < > \\ ^ ` { | }, control or non-ASCII bytes): Envoy removes it before the filter chain (overrides.yaml: envoy-invalid-referer-removed)"
	exEmptyBody = "an empty body under a Content-Type the benchmark parses (multipart, XML, JSON): libmodsecurity's parser fails on it and rule 200002 answers 400, Coraza's does not"
)

// crsMethods are the methods a workload may use (profile.validate) and
// Envoy's codec forwards.
var crsMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"}

// CRSCandidates returns the suite's eligible tests as entries, each named
// after its test ("942100-1") and carrying the test's Host header in its
// place among the headers.
var CRSCandidates = sync.OnceValues(crsCandidates)

func crsCandidates() (Candidates, error) {
	s, err := crssuite.Load()
	if err != nil {
		return Candidates{}, err
	}
	rules, err := crs.Rules()
	if err != nil {
		return Candidates{}, err
	}
	c := Candidates{Excluded: map[string]int{}}
	for _, t := range s.Tests {
		e, why := crsEntry(t, rules)
		if why != "" {
			c.Excluded[why]++
			continue
		}
		c.Entries = append(c.Entries, e)
	}
	return c, nil
}

// blocksAtPL1 judges rule r by its text: critical when it is a
// paranoia-level-1 rule adding the critical anomaly score (5, the inbound
// threshold: alone it makes rule 949110 deny), benchmark when it is
// critical and also reads none of the variables only crs-test sets (so it
// can fire in a benchmark trial).
func blocksAtPL1(r crs.Rule) (critical, benchmark bool) {
	if r.Paranoia != 1 || r.Score != "critical" {
		return false, false
	}
	text := strings.ToLower(r.Text)
	for _, v := range crs.ConformanceOnlyVars() {
		if strings.Contains(text, "tx:"+v) || strings.Contains(text, "tx."+v) {
			return true, false
		}
	}
	return true, true
}

// crsEntry applies the exclusion rules to t: its entry, or the rule it
// fails.
func crsEntry(t crssuite.Test, rules map[int]crs.Rule) (Entry, string) {
	if len(t.Stages) != 1 {
		return Entry{}, exStages
	}
	if !strings.HasPrefix(t.RuleFile, "REQUEST-") {
		return Entry{}, exResponse
	}
	st := t.Stages[0]
	out := st.Output
	if out.Status != 0 || out.ResponseContains != "" || out.ExpectError != nil && *out.ExpectError ||
		out.Log.MatchRegex != "" || out.Log.NoMatchRegex != "" || out.LogContains != "" || out.NoLogContains != "" ||
		len(out.Log.ExpectIds) == 0 {
		return Entry{}, exOutcome
	}
	anyCritical, anyBenchmark := false, false
	for _, id := range out.Log.ExpectIds {
		c, b := blocksAtPL1(rules[int(id)])
		anyCritical, anyBenchmark = anyCritical || c, anyBenchmark || b
	}
	switch {
	case !anyCritical:
		return Entry{}, exNotPL1
	case !anyBenchmark:
		return Entry{}, exCRSTest
	}
	return crsRequest(t.ID, &st.Input)
}

// crsRequest turns a stage's input into an entry, or names the rule it
// fails: the request crssuite.Build writes, less its Connection header
// (go-ftw's autocompleted "close", or the test's "close" or "keep-alive":
// the benchmark keeps connections open) and the Content-Length load
// writes itself, at the end.
func crsRequest(id string, in *schema.Input) (Entry, string) {
	if in.EncodedRequest != "" {
		return Entry{}, exEncoded
	}
	for _, h := range in.OrderedHeaders {
		switch strings.ToLower(strings.TrimSpace(h.Name)) {
		case "connection":
			if v := strings.ToLower(strings.TrimSpace(h.Value)); v != "close" && v != "keep-alive" {
				return Entry{}, exFraming
			}
		case "transfer-encoding", "upgrade", "te":
			return Entry{}, exFraming
		}
	}
	r, err := crssuite.Build(in)
	if err != nil {
		return Entry{}, exBuild
	}
	switch {
	case r.Version != "HTTP/1.1":
		return Entry{}, exVersion
	case !slices.Contains(crsMethods, r.Method):
		return Entry{}, exMethod
	case !strings.HasPrefix(r.URI, "/"):
		return Entry{}, exTarget
	}
	e := Entry{Name: id, Method: r.Method, Target: r.URI}
	hosts, framed := 0, false
	for _, h := range r.Headers {
		k, v := h[0], h[1]
		if checkHeader(k, v) != nil {
			return Entry{}, exHeaderSyn
		}
		switch strings.ToLower(k) {
		case "host":
			hosts++
			if v == "" {
				return Entry{}, exHost
			}
		case "connection":
			continue // "close" or "keep-alive" (checked above): the benchmark's connections stay open
		case "referer":
			if !uriReference(v) {
				return Entry{}, exReferer
			}
		case "content-length":
			if n, err := strconv.Atoi(v); err != nil || n != len(r.Body) || framed {
				return Entry{}, exFraming
			}
			framed = true
			continue // load writes it, at the end
		}
		e.Headers = append(e.Headers, [2]string{k, v})
	}
	if hosts != 1 {
		return Entry{}, exHost
	}
	if len(r.Body) == 0 && parsedBody(r.Headers) {
		return Entry{}, exEmptyBody
	}
	switch {
	case len(r.Body) > 0:
		e.Body = r.Body
	case framed:
		e.Body = []byte{} // "Content-Length: 0", as go-ftw sends for a POST without data
	}
	return e, ""
}

// ReadCRS returns the tests sel selects from CRSCandidates, in suite
// order. Errors name the select field.
func ReadCRS(sel CRSSelect) ([]Entry, error) {
	if sel.Count < 1 || sel.Count > maxEntries {
		return nil, fmt.Errorf("select.count: want 1..%d tests (each is a class of one mix), got %d", maxEntries, sel.Count)
	}
	for i, p := range sel.Rules {
		if p == "" || strings.Trim(p, "0123456789") != "" || len(p) > 6 {
			return nil, fmt.Errorf("select.rules[%d]: want a rule-ID prefix of 1–6 digits (\"942\", \"941100\"), got %q", i, p)
		}
	}
	c, err := CRSCandidates()
	if err != nil {
		return nil, err
	}
	var pool []int // indexes into c.Entries
	for i, e := range c.Entries {
		if len(sel.Rules) == 0 || slices.ContainsFunc(sel.Rules, func(p string) bool { return strings.HasPrefix(e.Name, p) }) {
			pool = append(pool, i)
		}
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("select.rules: no eligible test of rules %s (of %d eligible tests)", strings.Join(sel.Rules, ", "), len(c.Entries))
	}
	if sel.Count > len(pool) {
		return nil, fmt.Errorf("select.count: want at most the %d eligible tests selected, got %d", len(pool), sel.Count)
	}
	r := rand.New(rand.NewPCG(sel.Seed, 0x637273)) // "crs"
	r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	pool = pool[:sel.Count]
	slices.Sort(pool)
	out := make([]Entry, len(pool))
	for i, p := range pool {
		out[i] = c.Entries[p]
	}
	return out, nil
}

// uriReference reports whether v has only the bytes RFC 3986 allows in a
// URI reference: unreserved, reserved and '%'.
func uriReference(v string) bool {
	for i := range len(v) {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// parsedBodyType is a Content-Type (lower case) the benchmark parses the
// body of: multipart/form-data (the engines' own processor), and XML and
// JSON by the same expressions as internal/crs rules 200000, 200001 and
// 200006.
var parsedBodyType = regexp.MustCompile(`^multipart/form-data|^(?:application(?:/soap\+|/)|text/)xml|^application/json|^application/[a-z0-9.-]+[+]json`)

// parsedBody reports whether a Content-Type of hs selects a body parser
// in the benchmark configuration.
func parsedBody(hs [][2]string) bool {
	return slices.ContainsFunc(hs, func(h [2]string) bool {
		return strings.EqualFold(h[0], "content-type") && parsedBodyType.MatchString(strings.ToLower(h[1]))
	})
}

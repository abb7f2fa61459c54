// Package replay reads requests from the files users' load tools already
// keep: vegeta targets (its "http" text format and its JSON lines format)
// and HAR archives (browser developer tools, proxies). Each request becomes
// an Entry a workload can send; the URL's host only sets the Host header —
// wafbench sends every request to the proxy under test on loopback, never
// to the host a file names.
//
// A third source is the CRS regression suite's requests (crs.go): a seeded
// selection of the attacks a benchmark configuration must deny, the attack
// half of a mix.
//
// Bad files are reported in one line naming the file, the entry and the
// field: "shop.har: entry 3: request.url: want an absolute http(s) URL, got \"/x\"".
package replay

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Formats.
const (
	Vegeta = "vegeta" // vegeta targets: "http" text format, or JSON lines (detected)
	HAR    = "har"    // HTTP Archive 1.2
)

// Entry is one request read from a file or the CRS suite.
type Entry struct {
	Name   string // the CRS test ("942100-1"); "" for a file's entries
	Method string
	Target string // request-target: path and query
	Host   string // from the URL (a Host header in Headers wins)
	// Headers are in file order, Content-Length and pseudo-headers left
	// out; Host too for a file's entries (it is in Host), while a CRS
	// test's Host header stays in its place.
	Headers [][2]string
	Body    []byte // nil: none
}

// maxEntries bounds a file: every entry is a class of a mix (load.RunMix).
const maxEntries = 255

// maxBody bounds one entry's body (bytes), as the engines' body limit.
const maxBody = 1 << 20

// ReadFile reads path in format (Vegeta or HAR). Body files a vegeta
// target names ("@file") are relative to path's directory.
func ReadFile(path, format string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	switch format {
	case Vegeta:
		return parseVegeta(name, b, filepath.Dir(path))
	case HAR:
		return parseHAR(name, b)
	}
	return nil, fmt.Errorf("%s: format: want %s or %s, got %q", name, Vegeta, HAR, format)
}

// skipHeader reports headers an entry does not carry over: HTTP/2
// pseudo-headers, Host (kept in Entry.Host), framing (the serializer sets
// Content-Length) and hop-by-hop connection management.
func skipHeader(name string) bool {
	switch strings.ToLower(name) {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "proxy-connection":
		return true
	}
	return strings.HasPrefix(name, ":")
}

// parseURL splits an absolute http(s) URL into host and request-target.
func parseURL(s string) (host, target string, err error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("want an absolute http(s) URL, got %q", s)
	}
	return u.Host, u.RequestURI(), nil
}

func checkMethod(m string) error {
	if m == "" || strings.ContainsAny(m, " \t\r\n:/") || strings.ToUpper(m) != m {
		return fmt.Errorf("want an upper-case HTTP method, got %q", m)
	}
	return nil
}

func checkHeader(k, v string) error {
	if k == "" || strings.ContainsAny(k, " \t\r\n:") {
		return fmt.Errorf("want a header name, got %q", k)
	}
	if strings.ContainsAny(v, "\r\n") {
		return fmt.Errorf("header %s: value has a line break", k)
	}
	return nil
}

// parseVegeta parses vegeta targets. The text format is blocks separated
// by blank lines: "METHOD URL", then "Name: value" header lines, then an
// optional "@path" naming a body file (relative to dir); "#" starts a
// comment line. A file whose first non-blank character is "{" is JSON
// lines, one {"method","url","header":{name:[values]},"body":base64} each.
func parseVegeta(name string, b []byte, dir string) ([]Entry, error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return parseVegetaJSON(name, b)
	}
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), maxBody)
	line := 0
	var cur *Entry
	where := func() string { return fmt.Sprintf("%s:%d: target %d", name, line, len(out)) }
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(strings.TrimSpace(s), "#"):
			continue
		case strings.TrimSpace(s) == "":
			cur = nil
			continue
		case cur == nil:
			method, u, ok := strings.Cut(strings.TrimSpace(s), " ")
			if !ok {
				return nil, fmt.Errorf("%s:%d: target %d: want \"METHOD URL\", got %q", name, line, len(out)+1, s)
			}
			out = append(out, Entry{Method: method})
			cur = &out[len(out)-1]
			if err := checkMethod(method); err != nil {
				return nil, fmt.Errorf("%s: method: %v", where(), err)
			}
			var err error
			if cur.Host, cur.Target, err = parseURL(strings.TrimSpace(u)); err != nil {
				return nil, fmt.Errorf("%s: url: %v", where(), err)
			}
		case strings.HasPrefix(s, "@"):
			if cur.Body != nil {
				return nil, fmt.Errorf("%s: body: a second @file", where())
			}
			p := strings.TrimSpace(s[1:])
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			body, err := readBody(p)
			if err != nil {
				return nil, fmt.Errorf("%s: body: %v", where(), err)
			}
			cur.Body = body
		default:
			if cur.Body != nil {
				return nil, fmt.Errorf("%s: header after the @body line: %q", where(), s)
			}
			k, v, ok := strings.Cut(s, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok {
				return nil, fmt.Errorf("%s: header: want \"Name: value\", got %q", where(), s)
			}
			if err := checkHeader(k, v); err != nil {
				return nil, fmt.Errorf("%s: header: %v", where(), err)
			}
			addHeader(cur, k, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line, err)
	}
	return finish(name, out)
}

func readBody(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBody {
		return nil, fmt.Errorf("%s: larger than %d bytes", filepath.Base(p), maxBody)
	}
	return b, nil
}

func addHeader(e *Entry, k, v string) {
	if strings.EqualFold(k, "host") {
		e.Host = v
		return
	}
	if skipHeader(k) {
		return
	}
	e.Headers = append(e.Headers, [2]string{k, v})
}

func finish(name string, out []Entry) ([]Entry, error) {
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no requests", name)
	}
	if len(out) > maxEntries {
		return nil, fmt.Errorf("%s: %d requests, want at most %d (each is a class of one mix)", name, len(out), maxEntries)
	}
	return out, nil
}

// vegetaJSON is one line of vegeta's JSON targets format.
type vegetaJSON struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Body   string              `json:"body,omitempty"` // base64
	Header map[string][]string `json:"header,omitempty"`
}

func parseVegetaJSON(name string, b []byte) ([]Entry, error) {
	var out []Entry
	for i, raw := range bytes.Split(b, []byte("\n")) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		where := fmt.Sprintf("%s:%d: target %d", name, i+1, len(out)+1)
		var t vegetaJSON
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		e := Entry{Method: t.Method}
		if err := checkMethod(t.Method); err != nil {
			return nil, fmt.Errorf("%s: method: %v", where, err)
		}
		var err error
		if e.Host, e.Target, err = parseURL(t.URL); err != nil {
			return nil, fmt.Errorf("%s: url: %v", where, err)
		}
		for _, k := range sortedKeys(t.Header) {
			for _, v := range t.Header[k] {
				if err := checkHeader(k, v); err != nil {
					return nil, fmt.Errorf("%s: header: %v", where, err)
				}
				addHeader(&e, k, v)
			}
		}
		if t.Body != "" {
			if e.Body, err = base64.StdEncoding.DecodeString(t.Body); err != nil {
				return nil, fmt.Errorf("%s: body: want base64: %v", where, err)
			}
		}
		out = append(out, e)
	}
	return finish(name, out)
}

// har is the part of HTTP Archive 1.2 a replay reads.
type har struct {
	Log struct {
		Entries []struct {
			Request *struct {
				Method  string `json:"method"`
				URL     string `json:"url"`
				Headers []struct {
					Name  string `json:"name"`
					Value string `json:"value"`
				} `json:"headers"`
				PostData *struct {
					MimeType string `json:"mimeType"`
					Text     string `json:"text"`
					Encoding string `json:"encoding,omitempty"` // "base64" (an extension some tools write)
				} `json:"postData,omitempty"`
			} `json:"request"`
		} `json:"entries"`
	} `json:"log"`
}

// parseHAR parses an HTTP Archive: every log.entries[i].request, its
// method, URL, headers (HTTP/2 pseudo-headers and Host dropped; Host comes
// from the URL unless a Host header is listed) and postData.text.
func parseHAR(name string, b []byte) ([]Entry, error) {
	var h har
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%s: not a HAR file: %v", name, err)
	}
	var out []Entry
	for i, he := range h.Log.Entries {
		where := fmt.Sprintf("%s: entry %d", name, i+1)
		r := he.Request
		if r == nil {
			return nil, fmt.Errorf("%s: request: missing", where)
		}
		e := Entry{Method: r.Method}
		if err := checkMethod(r.Method); err != nil {
			return nil, fmt.Errorf("%s: request.method: %v", where, err)
		}
		var err error
		if e.Host, e.Target, err = parseURL(r.URL); err != nil {
			return nil, fmt.Errorf("%s: request.url: %v", where, err)
		}
		hasType := false
		for j, hd := range r.Headers {
			if strings.HasPrefix(hd.Name, ":") {
				continue // an HTTP/2 pseudo-header: the request line carries it
			}
			if err := checkHeader(hd.Name, hd.Value); err != nil {
				return nil, fmt.Errorf("%s: request.headers[%d]: %v", where, j, err)
			}
			hasType = hasType || strings.EqualFold(hd.Name, "content-type")
			if strings.EqualFold(hd.Name, "host") {
				e.Host = hd.Value
				continue
			}
			addHeader(&e, hd.Name, hd.Value)
		}
		if pd := r.PostData; pd != nil {
			switch pd.Encoding {
			case "":
				e.Body = []byte(pd.Text)
			case "base64":
				if e.Body, err = base64.StdEncoding.DecodeString(pd.Text); err != nil {
					return nil, fmt.Errorf("%s: request.postData.text: want base64: %v", where, err)
				}
			default:
				return nil, fmt.Errorf("%s: request.postData.encoding: want base64 or none, got %q", where, pd.Encoding)
			}
			if len(e.Body) > maxBody {
				return nil, fmt.Errorf("%s: request.postData.text: larger than %d bytes", where, maxBody)
			}
			if !hasType && pd.MimeType != "" {
				e.Headers = append(e.Headers, [2]string{"Content-Type", pd.MimeType})
			}
		}
		out = append(out, e)
	}
	return finish(name, out)
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

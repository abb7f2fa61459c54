package crssuite

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	schema "github.com/coreruleset/ftw-tests-schema/v2/types"
	ftwtest "github.com/coreruleset/go-ftw/v2/test"

	"wafbench/internal/http1"
)

// Request is a stage's request as go-ftw writes it, in parts: the request
// line, the ordered headers (autocompleted unless the test turns that
// off) and the body. A test's encoded_request is Encoded, verbatim, with
// Method read from it and the other parts empty.
type Request struct {
	Method, URI, Version string
	Headers              [][2]string
	Body                 []byte
	Encoded              []byte
}

// Raw is the request's bytes: Encoded verbatim, else the parts serialized
// by http1.AppendExact without any other change.
func (r Request) Raw() []byte {
	if r.Encoded != nil {
		return r.Encoded
	}
	return http1.AppendExact(nil, r.Method, r.URI, r.Version, r.Headers, r.Body)
}

// methodsWithBody is go-ftw's own expression (ftwhttp.methodsWithBodyRegex),
// kept as written, alternation precedence included, so the same methods get
// a Content-Length.
var methodsWithBody = regexp.MustCompile(`^POST|PUT|PATCH|DELETE$`)

// Build returns the request a stage sends: a test's encoded_request
// verbatim, else its request line, ordered headers and data with go-ftw's
// autocompletion (on unless the test turns it off: a Content-Type for data
// without one, form data URL-encoded when it is not yet, LF turned into
// CRLF in multipart data, Connection: close and Content-Length when
// missing).
func Build(in *schema.Input) (Request, error) {
	if in.EncodedRequest != "" {
		raw, err := base64.StdEncoding.DecodeString(in.EncodedRequest)
		if err != nil {
			return Request{}, fmt.Errorf("encoded_request: %w", err)
		}
		m, _, _ := strings.Cut(string(raw), " ")
		return Request{Method: m, Encoded: raw}, nil
	}
	fi := ftwtest.NewInput(in)
	r := Request{Method: fi.GetMethod(), URI: fi.GetURI(), Version: fi.GetVersion()}
	for _, h := range in.OrderedHeaders {
		r.Headers = append(r.Headers, [2]string{h.Name, h.Value})
	}
	data := fi.GetData()
	if in.Data != nil && data == nil && *in.Data != "" {
		return Request{}, fmt.Errorf("data: the template does not parse")
	}
	auto := in.AutocompleteHeaders == nil || *in.AutocompleteHeaders
	var err error
	if len(data) > 0 && auto {
		if !HasHeader(r.Headers, "Content-Type") {
			r.Headers = append(r.Headers, [2]string{"Content-Type", "application/x-www-form-urlencoded"})
		}
		if hasValue(r.Headers, "Content-Type", func(v string) bool { return strings.EqualFold(v, "application/x-www-form-urlencoded") }) {
			if data, err = encodeForm(data); err != nil {
				return Request{}, err
			}
		}
	}
	if hasValue(r.Headers, "Content-Type", func(v string) bool { return strings.Contains(strings.ToLower(v), "multipart/form-data;") }) {
		data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	}
	if auto {
		if !HasHeader(r.Headers, "Connection") {
			r.Headers = append(r.Headers, [2]string{"Connection", "close"})
		}
		if !HasHeader(r.Headers, "Content-Length") && (len(data) > 0 || methodsWithBody.MatchString(r.Method)) {
			r.Headers = append(r.Headers, [2]string{"Content-Length", strconv.Itoa(len(data))})
		}
	}
	r.Body = data
	return r, nil
}

// HasHeader reports whether hs has a header name (case and surrounding
// space ignored).
func HasHeader(hs [][2]string, name string) bool {
	return hasValue(hs, name, func(string) bool { return true })
}

func hasValue(hs [][2]string, name string, ok func(string) bool) bool {
	for _, h := range hs {
		if strings.EqualFold(strings.TrimSpace(h[0]), name) && ok(h[1]) {
			return true
		}
	}
	return false
}

// encodeForm URL-encodes each key and value of form data that is not
// encoded yet (unescaping changes nothing), as go-ftw does: CRS tests write
// form parameters unencoded.
func encodeForm(data []byte) ([]byte, error) {
	un, err := url.QueryUnescape(string(data))
	if un != string(data) {
		return data, nil // already escaped
	}
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	var out bytes.Buffer
	toks := strings.Split(string(data), "&")
	if len(toks) > 1 && toks[len(toks)-1] == "" {
		toks = toks[:len(toks)-1] // go-ftw emits no token after a final '&'
	}
	for i, tok := range toks {
		if i > 0 {
			out.WriteByte('&')
		}
		k, v, ok := strings.Cut(tok, "=")
		out.WriteString(url.QueryEscape(k))
		if ok {
			out.WriteByte('=')
			out.WriteString(url.QueryEscape(v))
		}
	}
	return out.Bytes(), nil
}

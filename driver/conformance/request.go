package conformance

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

// methodsWithBody is go-ftw's own expression (ftwhttp.methodsWithBodyRegex),
// kept as written, alternation precedence included, so the same methods get
// a Content-Length.
var methodsWithBody = regexp.MustCompile(`^POST|PUT|PATCH|DELETE$`)

// request returns the bytes a stage sends and its method (for reading the
// response): a test's encoded_request verbatim, else its request line,
// ordered headers and data with go-ftw's autocompletion (on unless the test
// turns it off: a Content-Type for data without one, form data
// URL-encoded when it is not yet, LF turned into CRLF in multipart data,
// Connection: close and Content-Length when missing), serialized by
// internal/http1 without any other change.
func request(in *schema.Input) (raw []byte, method string, err error) {
	if in.EncodedRequest != "" {
		raw, err := base64.StdEncoding.DecodeString(in.EncodedRequest)
		if err != nil {
			return nil, "", fmt.Errorf("encoded_request: %w", err)
		}
		m, _, _ := strings.Cut(string(raw), " ")
		return raw, m, nil
	}
	fi := ftwtest.NewInput(in)
	method = fi.GetMethod()
	var headers [][2]string
	for _, h := range in.OrderedHeaders {
		headers = append(headers, [2]string{h.Name, h.Value})
	}
	data := fi.GetData()
	if in.Data != nil && data == nil && *in.Data != "" {
		return nil, "", fmt.Errorf("data: the template does not parse")
	}
	auto := in.AutocompleteHeaders == nil || *in.AutocompleteHeaders
	if len(data) > 0 && auto {
		if !hasHeader(headers, "Content-Type") {
			headers = append(headers, [2]string{"Content-Type", "application/x-www-form-urlencoded"})
		}
		if hasValue(headers, "Content-Type", func(v string) bool { return strings.EqualFold(v, "application/x-www-form-urlencoded") }) {
			if data, err = encodeForm(data); err != nil {
				return nil, "", err
			}
		}
	}
	if hasValue(headers, "Content-Type", func(v string) bool { return strings.Contains(strings.ToLower(v), "multipart/form-data;") }) {
		data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	}
	if auto {
		if !hasHeader(headers, "Connection") {
			headers = append(headers, [2]string{"Connection", "close"})
		}
		if !hasHeader(headers, "Content-Length") && (len(data) > 0 || methodsWithBody.MatchString(method)) {
			headers = append(headers, [2]string{"Content-Length", strconv.Itoa(len(data))})
		}
	}
	return http1.AppendExact(nil, method, fi.GetURI(), fi.GetVersion(), headers, data), method, nil
}

func hasHeader(hs [][2]string, name string) bool {
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

// markerRequest is the request that logs marker through rule 999999
// (go-ftw's marker request: GET /status/200 with the marker header).
func markerRequest(marker string) []byte {
	return http1.AppendExact(nil, "GET", "/status/200", "HTTP/1.1", [][2]string{
		{"Accept", "*/*"}, {"User-Agent", "wafbench-crs-test"}, {"Host", "localhost"},
		{"X-CRS-Test", marker}, {"Connection", "close"}}, nil)
}

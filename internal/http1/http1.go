// Package http1 holds the HTTP/1.1 syntax wafbench writes and parses by
// hand: the one request serializer (AppendRequest; the load engine, the e2e
// client) and the allocation-free helpers shared by the load engine's
// response parser and the upstream's request parser. They are hand-written
// because net/textproto and strconv work on strings and would allocate per
// message on the hot path.
package http1

import (
	"bytes"
	"strconv"
)

// TrimOWS trims optional whitespace (SP, HTAB) from both ends.
func TrimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// EqualFold compares b with the lower-case ASCII string s, ignoring case.
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// ParseDecimal parses a non-empty run of at most 18 ASCII digits.
func ParseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// ParseChunkSize parses "hex[;ext]" from a chunk-size line.
func ParseChunkSize(line []byte) (int64, bool) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = TrimOWS(line)
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range line {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | int64(c)
	}
	return n, true
}

// AppendExact appends a request exactly as given: the request line
// "method target version", every header in order (duplicates, odd names and
// values kept byte for byte), a blank line and body. It adds nothing — no
// Host, no Content-Length — so a malformed request stays malformed (the CRS
// regression suite, driver/conformance). An empty version is written as
// empty ("GET / \r\n", the request line go-ftw sends for a test whose
// version is ""), so the host sees an HTTP/0.9-style request line.
func AppendExact(dst []byte, method, target, version string, headers [][2]string, body []byte) []byte {
	dst = append(append(append(append(append(append(dst, method...), ' '), target...), ' '), version...), "\r\n"...)
	for _, h := range headers {
		dst = append(append(append(append(dst, h[0]...), ": "...), h[1]...), "\r\n"...)
	}
	return append(append(dst, "\r\n"...), body...)
}

// AppendRequest appends an HTTP/1.1 request to dst: the request line,
// headers in order exactly as given (it adds no Host), Content-Length when
// body is non-nil unless a header sets Content-Length or Transfer-Encoding,
// a blank line and body. It is wafbench's one request serializer.
func AppendRequest(dst []byte, method, target string, headers [][2]string, body []byte) []byte {
	dst = append(append(append(append(dst, method...), ' '), target...), " HTTP/1.1\r\n"...)
	framed := false
	for _, h := range headers {
		if EqualFold([]byte(h[0]), "content-length") || EqualFold([]byte(h[0]), "transfer-encoding") {
			framed = true
		}
		dst = append(append(append(append(dst, h[0]...), ": "...), h[1]...), "\r\n"...)
	}
	if body != nil && !framed {
		dst = append(strconv.AppendInt(append(dst, "Content-Length: "...), int64(len(body)), 10), "\r\n"...)
	}
	return append(append(dst, "\r\n"...), body...)
}

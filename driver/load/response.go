package load

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"

	"wafbench/internal/http1"
)

// kind classifies what went wrong with one request.
type kind uint8

const (
	kindOK kind = iota
	kindConnect
	kindWrite
	kindRead
	kindParse
	kindTimeout
	kindClosed
	kindReset
	numKinds
)

// kindNames are the keys of Result.Errors (besides "status_NNN").
var kindNames = [numKinds]string{"", "connect", "write", "read", "parse", "timeout", "closed", "reset"}

// writeError marks an error of writing the request, which sockIO.Read
// reports when it wrote the request queued by Send.
type writeError struct{ err error }

func (e writeError) Error() string { return "write: " + e.err.Error() }
func (e writeError) Unwrap() error { return e.err }

// classify maps an I/O error to its kind: ioKind, or kindWrite for a
// writeError. io.EOF and resets mean the server closed the connection.
func classify(err error, ioKind kind) kind {
	if errors.As(err, new(writeError)) {
		ioKind = kindWrite
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return kindTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return kindClosed
	}
	return ioKind
}

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// respReader reads HTTP/1.1 responses from one connection into a reused
// buffer and discards their bodies. It is the minimum a load generator
// needs: status code, framing (Content-Length, chunked, or until close) and
// whether the server will close the connection. It never allocates.
//
// net/http's client is not used for the same reason: it allocates a
// Response, a Header map and body readers per request, and its Transport
// hands each request and response between goroutines. On a 2-core machine
// those costs would show up as client CPU and latency that belong to neither
// Envoy nor the WAF.
type respReader struct {
	rd   io.Reader
	buf  []byte
	r, w int // unread bytes are buf[r:w]
}

// reset points the reader at a new connection and drops buffered bytes.
func (p *respReader) reset(rd io.Reader) {
	p.rd, p.r, p.w = rd, 0, 0
}

// fill reads at least one byte more into the buffer, compacting it when full.
func (p *respReader) fill() kind {
	if p.r == p.w {
		p.r, p.w = 0, 0
	} else if p.w == len(p.buf) {
		if p.r == 0 {
			return kindParse // a line or head larger than the buffer
		}
		p.w = copy(p.buf, p.buf[p.r:p.w])
		p.r = 0
	}
	for {
		n, err := p.rd.Read(p.buf[p.w:])
		p.w += n
		if n > 0 {
			return kindOK
		}
		if err != nil {
			return classify(err, kindRead)
		}
	}
}

// read reads one complete response (skipping 1xx interim responses) to a
// request that was a HEAD request if head is set. It returns the status and
// whether the server will close the connection after it.
func (p *respReader) read(head bool) (status int, closeConn bool, k kind) {
	for {
		var h header
		if k = p.readHead(&h); k != kindOK {
			return 0, false, k
		}
		switch {
		case h.status == 101:
			return h.status, true, kindParse // no upgrades here
		case h.status < 200:
			continue // 100 Continue, 103 Early Hints: the real one follows
		case head || h.status == 204 || h.status == 304:
			return h.status, h.close, kindOK
		case h.chunked:
			k = p.skipChunked()
		case h.length >= 0:
			k = p.skip(h.length)
		default:
			k = p.skipToEOF() // body delimited by close
			h.close = true
		}
		return h.status, h.close, k
	}
}

// header holds what read needs from a response head.
type header struct {
	status  int
	length  int64 // -1 if absent
	chunked bool
	close   bool
}

// readHead reads and parses a response head into h.
func (p *respReader) readHead(h *header) kind {
	scan := 0 // offset from r where the search for the blank line resumes
	for {
		data := p.buf[p.r:p.w]
		if i := bytes.Index(data[scan:], crlfcrlf); i >= 0 {
			end := scan + i
			p.r += end + 4
			return parseHead(data[:end+2], h)
		}
		scan = max(0, len(data)-3)
		if k := p.fill(); k != kindOK {
			if k == kindClosed && p.w > p.r {
				return kindParse // truncated head
			}
			return k
		}
	}
}

// parseHead parses a status line and header lines, each ending in CRLF.
func parseHead(b []byte, h *header) kind {
	// "HTTP/1.x NNN[ reason]"
	i := bytes.Index(b, crlf)
	line := b[:i]
	b = b[i+2:]
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
		len(line) > 12 && line[12] != ' ' {
		return kindParse
	}
	http10 := line[7] == '0'
	if !http10 && line[7] != '1' {
		return kindParse
	}
	status := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return kindParse
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 || status > 599 {
		return kindParse
	}
	*h = header{status: status, length: -1}
	keepAlive := false
	for len(b) > 0 {
		i := bytes.Index(b, crlf)
		line := b[:i]
		b = b[i+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
			return kindParse
		}
		name, value := line[:colon], http1.TrimOWS(line[colon+1:])
		switch len(name) {
		case 10:
			if http1.EqualFold(name, "connection") {
				for len(value) > 0 {
					var t []byte
					t, value = nextToken(value)
					h.close = h.close || http1.EqualFold(t, "close")
					keepAlive = keepAlive || http1.EqualFold(t, "keep-alive")
				}
			}
		case 14:
			if http1.EqualFold(name, "content-length") {
				n, ok := http1.ParseDecimal(value)
				if !ok || h.length >= 0 && n != h.length {
					return kindParse
				}
				h.length = n
			}
		case 17:
			if http1.EqualFold(name, "transfer-encoding") {
				var last []byte
				for len(value) > 0 {
					var t []byte
					if t, value = nextToken(value); len(t) > 0 {
						last = t
					}
				}
				h.chunked = http1.EqualFold(last, "chunked")
				if !h.chunked {
					h.length = -1 // RFC 9112 §6.3: read until close
				}
			}
		}
	}
	if http10 && !keepAlive {
		h.close = true
	}
	return kindOK
}

// skip discards n body bytes.
func (p *respReader) skip(n int64) kind {
	for {
		avail := int64(p.w - p.r)
		if avail >= n {
			p.r += int(n)
			return kindOK
		}
		n -= avail
		p.r = p.w
		if k := p.fill(); k != kindOK {
			return k
		}
	}
}

// skipToEOF discards everything until the server closes the connection.
func (p *respReader) skipToEOF() kind {
	for {
		p.r = p.w
		if k := p.fill(); k != kindOK {
			if k == kindClosed {
				return kindOK
			}
			return k
		}
	}
}

// line returns the next CRLF-terminated line without its CRLF. The slice
// is valid until the next read.
func (p *respReader) line() ([]byte, kind) {
	scan := 0
	for {
		data := p.buf[p.r:p.w]
		if i := bytes.Index(data[scan:], crlf); i >= 0 {
			end := scan + i
			p.r += end + 2
			return data[:end], kindOK
		}
		scan = max(0, len(data)-1)
		if k := p.fill(); k != kindOK {
			return nil, k
		}
	}
}

// skipChunked discards a chunked body including its trailers.
func (p *respReader) skipChunked() kind {
	for {
		l, k := p.line()
		if k != kindOK {
			return k
		}
		size, ok := http1.ParseChunkSize(l)
		if !ok {
			return kindParse
		}
		if size == 0 {
			break
		}
		if k := p.skip(size); k != kindOK {
			return k
		}
		if l, k = p.line(); k != kindOK {
			return k
		}
		if len(l) != 0 {
			return kindParse
		}
	}
	for { // trailers, then the blank line
		l, k := p.line()
		if k != kindOK {
			return k
		}
		if len(l) == 0 {
			return kindOK
		}
	}
}

// nextToken splits a comma-separated list: the first element, trimmed, and
// the rest.
func nextToken(v []byte) (tok, rest []byte) {
	if i := bytes.IndexByte(v, ','); i >= 0 {
		return http1.TrimOWS(v[:i]), v[i+1:]
	}
	return http1.TrimOWS(v), nil
}

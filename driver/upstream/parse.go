package upstream

import (
	"bytes"
	"io"

	"wafbench/internal/http1"
)

// event is what one parser step produced.
type event uint8

const (
	evNeedMore event = iota // buffer exhausted: read more
	evRequest               // a whole request (head and body) was consumed
	evContinue              // head asked for "100-continue"; body follows
	evBad                   // malformed request: answer 400 and close
)

// state is where the parser is inside the current request.
type state uint8

const (
	stHead      state = iota // waiting for the blank line ending the head
	stBody                   // discarding a Content-Length body
	stChunkSize              // waiting for a chunk-size line
	stChunkData              // discarding chunk data
	stChunkEnd               // expecting CRLF after chunk data
	stTrailer                // reading trailer lines until a blank one
)

const maxLine = 4096 // longest chunk-size or trailer line accepted

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// parser is an incremental HTTP/1.1 request parser over one connection's
// buffer. It never copies bodies: their bytes are skipped as they arrive.
type parser struct {
	buf  []byte
	r, w int // unread bytes are buf[r:w]
	scan int // offset from r where the search for the head's end resumes

	st         state
	remain     int64 // body or chunk bytes still to discard
	closeAfter bool  // the current request ends the connection
}

// fill compacts the buffer and reads at least one more byte into it.
func (p *parser) fill(rd io.Reader) error {
	if p.r == p.w {
		p.r, p.w = 0, 0
	} else if p.r > 0 && p.w == len(p.buf) {
		p.w = copy(p.buf, p.buf[p.r:p.w])
		p.r = 0
	}
	for {
		n, err := rd.Read(p.buf[p.w:])
		p.w += n
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// step consumes buffered bytes until it has an event to report.
func (p *parser) step() event {
	for {
		switch p.st {
		case stHead:
			data := p.buf[p.r:p.w]
			i := bytes.Index(data[p.scan:], crlfcrlf)
			if i < 0 {
				if p.r == 0 && p.w == len(p.buf) {
					return evBad // head larger than the buffer
				}
				p.scan = max(0, len(data)-3)
				return evNeedMore
			}
			end := p.scan + i
			p.scan = 0
			p.r += end + 4
			ev := p.head(data[:end+2])
			if ev != evNeedMore {
				return ev
			}
		case stBody, stChunkData:
			n := min(p.remain, int64(p.w-p.r))
			p.r += int(n)
			p.remain -= n
			if p.remain > 0 {
				return evNeedMore
			}
			if p.st == stBody {
				p.st = stHead
				return evRequest
			}
			p.st = stChunkEnd
		case stChunkEnd:
			if p.w-p.r < 2 {
				return evNeedMore
			}
			if p.buf[p.r] != '\r' || p.buf[p.r+1] != '\n' {
				return evBad
			}
			p.r += 2
			p.st = stChunkSize
		case stChunkSize, stTrailer:
			data := p.buf[p.r:p.w]
			i := bytes.Index(data, crlf)
			if i < 0 {
				if len(data) > maxLine {
					return evBad
				}
				return evNeedMore
			}
			line := data[:i]
			p.r += i + 2
			if p.st == stTrailer {
				if len(line) == 0 {
					p.st = stHead
					return evRequest
				}
				if bytes.IndexByte(line, ':') <= 0 {
					return evBad
				}
				continue
			}
			size, ok := http1.ParseChunkSize(line)
			if !ok {
				return evBad
			}
			if size == 0 {
				p.st = stTrailer
			} else {
				p.remain = size
				p.st = stChunkData
			}
		}
	}
}

// head parses a request head (request line and header lines, each ending
// in CRLF, without the final blank line) and sets up the body state. It
// returns evRequest for a body-less request, evContinue if the client waits
// for "100 Continue", evNeedMore if a body follows, or evBad.
func (p *parser) head(h []byte) event {
	i := bytes.Index(h, crlf)
	http10, ok := requestLine(h[:i])
	if !ok {
		return evBad
	}
	h = h[i+2:]

	var (
		contentLength       int64 = -1
		chunked, te         bool
		closeConn, keep     bool
		expect100, haveHost bool
	)
	for len(h) > 0 {
		i := bytes.Index(h, crlf)
		line := h[:i]
		h = h[i+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return evBad // also rejects obsolete line folding
		}
		name, value := line[:colon], http1.TrimOWS(line[colon+1:])
		if !validValue(value) {
			return evBad
		}
		switch len(name) {
		case 4:
			haveHost = haveHost || http1.EqualFold(name, "host")
		case 6:
			if http1.EqualFold(name, "expect") && http1.EqualFold(value, "100-continue") {
				expect100 = true
			}
		case 10:
			if http1.EqualFold(name, "connection") {
				forEachToken(value, func(t []byte) {
					closeConn = closeConn || http1.EqualFold(t, "close")
					keep = keep || http1.EqualFold(t, "keep-alive")
				})
			}
		case 14:
			if http1.EqualFold(name, "content-length") {
				n, ok := http1.ParseDecimal(value)
				if !ok || contentLength >= 0 && n != contentLength {
					return evBad
				}
				contentLength = n
			}
		case 17:
			if http1.EqualFold(name, "transfer-encoding") {
				te = true
				var last []byte
				forEachToken(value, func(t []byte) { last = t })
				chunked = http1.EqualFold(last, "chunked")
			}
		}
	}
	if !http10 && !haveHost || te && (!chunked || contentLength >= 0) {
		// RFC 9112: Host is required in HTTP/1.1; a body we cannot
		// delimit, or both framings at once, must be rejected.
		return evBad
	}
	p.closeAfter = closeConn || http10 && !keep
	switch {
	case chunked:
		p.st = stChunkSize
	case contentLength > 0:
		p.st, p.remain = stBody, contentLength
	default:
		return evRequest
	}
	if expect100 {
		return evContinue
	}
	return evNeedMore
}

// requestLine checks "METHOD SP target SP HTTP/1.x" and reports whether the
// version is 1.0.
func requestLine(l []byte) (http10, ok bool) {
	sp := bytes.IndexByte(l, ' ')
	if sp <= 0 || !isToken(l[:sp]) {
		return false, false
	}
	l = l[sp+1:]
	sp = bytes.IndexByte(l, ' ')
	if sp <= 0 {
		return false, false
	}
	for _, c := range l[:sp] {
		if c <= ' ' || c == 0x7f {
			return false, false
		}
	}
	switch string(l[sp+1:]) {
	case "HTTP/1.1":
		return false, true
	case "HTTP/1.0":
		return true, true
	}
	return false, false
}

// tokenChars marks the RFC 9110 tchar bytes.
var tokenChars = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !tokenChars[c] {
			return false
		}
	}
	return true
}

func validValue(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// forEachToken calls f with each trimmed, non-empty element of a
// comma-separated list.
func forEachToken(v []byte, f func([]byte)) {
	for len(v) > 0 {
		var t []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			t, v = v, nil
		}
		if t = http1.TrimOWS(t); len(t) > 0 {
			f(t)
		}
	}
}

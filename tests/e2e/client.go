// Package e2e holds end-to-end tests of wafbench's three Envoy modes on the
// real Envoy binary, the real WAF dynamic modules and the real CRS 4.25 files:
// the seed workloads' verdicts, a verdict-parity corpus compared between
// libmodsecurity and Coraza, and hostile input. The package's only non-test
// code is the small raw HTTP/1.1 client below.
package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"wafbench/internal/http1"
)

// response is one parsed HTTP/1.1 response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// conn is a persistent HTTP/1.1 client connection that writes requests as
// given, byte for byte, and parses the responses.
type conn struct {
	c       net.Conn
	r       *bufio.Reader
	timeout time.Duration
}

// Dial connects to addr; every later read or write must finish within
// timeout.
func Dial(addr string, timeout time.Duration) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReaderSize(c, 64<<10), timeout: timeout}, nil
}

// Close closes the connection.
func (c *conn) Close() error { return c.c.Close() }

// write sends raw bytes.
func (c *conn) write(b []byte) error {
	c.c.SetWriteDeadline(time.Now().Add(c.timeout))
	_, err := c.c.Write(b)
	return err
}

// CloseWrite half-closes the connection (sends FIN).
func (c *conn) CloseWrite() error {
	if tc, ok := c.c.(*net.TCPConn); ok {
		return tc.CloseWrite()
	}
	return nil
}

// read parses the next response and reads its whole body. method is the
// request's method (a HEAD response has no body).
func (c *conn) read(method string) (*response, error) {
	c.c.SetReadDeadline(time.Now().Add(c.timeout))
	resp, err := http.ReadResponse(c.r, &http.Request{Method: method})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read body of %d response: %w", resp.StatusCode, err)
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// do writes one request and reads its response.
func (c *conn) do(method string, raw []byte) (*response, error) {
	if err := c.write(raw); err != nil {
		return nil, err
	}
	return c.read(method)
}

// request is a request to serialize. Headers are written in order, exactly
// as given; Content-Length is added for a non-nil Body unless a header
// already sets Content-Length or Transfer-Encoding.
type request struct {
	Method  string
	Target  string
	Headers [][2]string
	Body    []byte
}

// bytes serializes r as an HTTP/1.1 request (http1.AppendRequest).
func (r request) bytes() []byte {
	return http1.AppendRequest(make([]byte, 0, 256+len(r.Body)), r.Method, r.Target, r.Headers, r.Body)
}

// chunked encodes chunks as a chunked request body (with the final
// zero-length chunk and no trailers).
func chunked(chunks ...string) []byte {
	var b bytes.Buffer
	for _, c := range chunks {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

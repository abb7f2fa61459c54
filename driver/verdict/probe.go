// Package verdict learns what a proxy answers to a request: Probe sends one
// pre-serialized request on a fresh loopback connection and returns the
// status (or that the connection was refused or reset), and Stream drives a
// paced stream of attacks beside a driver/load run and records the answer
// to every one of them.
package verdict

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Outcome kinds besides an HTTP status.
const (
	refused = "refused" // connect failed (connection refused)
	reset   = "reset"   // the connection was closed or reset before a full response head
	timeout = "timeout" // no answer within the timeout
)

// Answer is what one request got: a status, or Kind for no status.
type Answer struct {
	Status int    // 0 when there was none
	Kind   string // Refused, Reset, Timeout; "" with a status
	Err    error  // the underlying error when Status is 0
}

// Label is the status as text, or the kind.
func (a Answer) Label() string {
	if a.Status != 0 {
		return fmt.Sprint(a.Status)
	}
	return a.Kind
}

// Probe sends raw once on a new connection to addr and reads the response
// head (the body is drained up to its length, at most 1 MiB). It reads
// with net/http's response parser: a probe is one request, not the load
// path, so the standard parser is the right tool.
func Probe(ctx context.Context, addr string, raw []byte, timeout time.Duration) Answer {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return classify(err, refused)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(raw); err != nil {
		// Envoy may answer (431, 413, 403) and close before it has read a
		// long request: try to read what it said.
		if a := ReadAnswer(c); a.Status != 0 {
			return a
		}
		return classify(err, reset)
	}
	return ReadAnswer(c)
}

// ReadAnswer reads one response head from c (and drains up to 1 MiB of
// its body) into an Answer.
func ReadAnswer(c net.Conn) Answer {
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return classify(err, reset)
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 1<<20)
	resp.Body.Close()
	return Answer{Status: resp.StatusCode}
}

func classify(err error, def string) Answer {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return Answer{Kind: timeout, Err: err}
	case errors.Is(err, syscall.ECONNREFUSED):
		return Answer{Kind: refused, Err: err}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return Answer{Kind: reset, Err: err}
	}
	return Answer{Kind: def, Err: err}
}

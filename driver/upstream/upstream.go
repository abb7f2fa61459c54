// Package upstream is the benchmark's origin server: a minimal HTTP/1.1
// server on raw net connections that reads and discards every request (and
// its body) and answers each one with the same tiny "200 ok" response.
//
// It is written on net.Conn rather than net/http on purpose. net/http
// allocates per request (Request, Header map, body reader, context, response
// buffers), starts a background-read goroutine per request to watch the
// connection, and parses far more than a benchmark upstream needs. Every
// microsecond the upstream spends is on the request path the harness
// measures, so the upstream must cost as little as possible next to Envoy.
// Measured on this machine (2 vCPU VM, server pinned to CPU 0, wrk -t1 -c16
// -d3s pinned to CPU 1, 3 alternated rounds, other jobs running): this
// server 129.9k, 128.4k, 129.7k req/s at 7.5 µs of CPU per request; net/http
// with a handler writing the same response 89.6k, 85.2k, 88.5k req/s at
// 11.0-11.6 µs per request. Both saturate their core, so net/http would cap
// a direct-upstream trial 30% lower and add about 1.5× the CPU per request
// (most of the rest is the kernel's loopback TCP work).
//
// The server keeps connections alive, handles pipelined requests (answers
// are batched into one write), discards Content-Length and chunked bodies of
// any size as they stream in, answers "Expect: 100-continue", closes after a
// request carrying "Connection: close" (or an HTTP/1.0 request without
// keep-alive), and answers malformed requests with 400 and closes.
package upstream

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Fixed responses. The body is always "ok".
const (
	respKeepAlive = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"
	respClose     = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
	respBad       = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\nConnection: close\r\n\r\nbad request"
	resp100       = "HTTP/1.1 100 Continue\r\n\r\n"
)

const (
	bufSize    = 64 << 10 // read buffer per connection; also the request-head limit
	maxPending = 32 << 10 // flush batched responses beyond this many bytes
)

// stats is a snapshot of a Server's counters.
type stats struct {
	Requests    int64 // requests answered with 200
	BadRequests int64 // malformed requests answered with 400
	Conns       int64 // connections accepted
}

// Server is the upstream server. The zero value is ready to use; a Server
// may serve several listeners at once and its counters cover all of them.
type Server struct {
	requests    atomic.Int64
	badRequests atomic.Int64
	conns       atomic.Int64
}

// Stats returns the counters accumulated so far.
func (s *Server) Stats() stats {
	return stats{
		Requests:    s.requests.Load(),
		BadRequests: s.badRequests.Load(),
		Conns:       s.conns.Load(),
	}
}

// Serve serves with a fresh Server; see Server.Serve.
func Serve(ctx context.Context, ln net.Listener) error {
	return new(Server).Serve(ctx, ln)
}

// Serve accepts connections on ln until ctx is done, then closes ln and every
// open connection, waits for their goroutines and returns nil. If ln fails
// for another reason (including being closed by someone else), Serve closes
// the open connections and returns that error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var (
		mu     sync.Mutex
		open   = map[net.Conn]struct{}{}
		wg     sync.WaitGroup
		closed bool
	)
	closeAll := func() {
		mu.Lock()
		closed = true
		for c := range open {
			c.Close()
		}
		mu.Unlock()
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()

	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				closeAll()
				wg.Wait()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// EMFILE and friends: back off like net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			closeAll()
			wg.Wait()
			return err
		}
		backoff = 0
		s.conns.Add(1)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		mu.Lock()
		if closed {
			mu.Unlock()
			c.Close()
			continue
		}
		open[c] = struct{}{}
		wg.Add(1)
		mu.Unlock()
		go func() {
			defer wg.Done()
			s.serveConn(c)
			c.Close()
			mu.Lock()
			delete(open, c)
			mu.Unlock()
		}()
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// serveConn runs one connection until the peer closes it, a request asks
// for close, or a request is malformed.
func (s *Server) serveConn(c net.Conn) {
	p := parser{buf: make([]byte, bufSize)}
	out := make([]byte, 0, 4096)
	for {
		// Answer every request already complete in the buffer.
		var served int64
		for {
			ev := p.step()
			if ev == evNeedMore {
				break
			}
			switch ev {
			case evContinue:
				out = append(out, resp100...)
			case evRequest:
				served++
				if p.closeAfter {
					out = append(out, respClose...)
				} else {
					out = append(out, respKeepAlive...)
				}
			case evBad:
				s.requests.Add(served)
				s.badRequests.Add(1)
				out = append(out, respBad...)
				c.Write(out)
				return
			}
			if ev == evRequest && p.closeAfter {
				s.requests.Add(served)
				c.Write(out)
				return
			}
			if len(out) >= maxPending {
				break
			}
		}
		if served > 0 {
			s.requests.Add(served)
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
			out = out[:0]
			if p.r < p.w {
				continue // flushed early; more already buffered
			}
		}
		if err := p.fill(c); err != nil {
			return
		}
	}
}

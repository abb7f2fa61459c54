package load

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// connIO is the I/O the workers do on one connection: sockIO on plain TCP,
// tlsIO over TLS. Send queues bytes that the next Read writes first.
type connIO interface {
	Send(p []byte)
	Read(p []byte) (int, error)
	Write(p []byte) error
}

// rawConn is a TCP connection whose Read and Write go through sockIO (raw
// non-blocking system calls), for crypto/tls to run over: TLS gets the same
// I/O path as plain connections. Deadlines and Close are the TCPConn's.
type rawConn struct {
	*net.TCPConn
	s *sockIO
}

func (c rawConn) Read(p []byte) (int, error) { return c.s.Read(p) }

func (c rawConn) Write(p []byte) (int, error) {
	if err := c.s.Write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// netIO is connIO over a net.Conn: a TLS connection (tlsIO), and outside
// Linux plain TCP too (sockio_other.go). Send only queues: the next Read
// writes the queued bytes (over TLS, one record per Write) and then reads,
// as Linux's sockIO does.
type netIO struct {
	c   net.Conn
	out []byte // request queued by Send
}

// tlsIO is connIO over a TLS connection.
type tlsIO = netIO

// Send queues p to be written by the next Read.
func (s *netIO) Send(p []byte) { s.out = p }

// Read writes the request queued by Send, if any, and reads at least one
// byte into p. An error of the write is a writeError.
func (s *netIO) Read(p []byte) (int, error) {
	if len(s.out) > 0 {
		out := s.out
		s.out = nil
		if _, err := s.c.Write(out); err != nil {
			return 0, writeError{err}
		}
	}
	return s.c.Read(p)
}

// Write writes all of p now.
func (s *netIO) Write(p []byte) error {
	_, err := s.c.Write(p)
	return err
}

// clientTLS is the TLS configuration of opts: opts.TLS (or one that does not
// verify the server, which is on this machine) with the protocol's ALPN.
func clientTLS(opts *Options) *tls.Config {
	var c *tls.Config
	if opts.TLS != nil {
		c = opts.TLS.Clone()
	} else {
		c = &tls.Config{InsecureSkipVerify: true} // loopback only (ParseTarget)
	}
	c.NextProtos = []string{opts.Downstream.ALPN()}
	return c
}

// handshake runs the TLS handshake over tc within the trial's timeout and
// checks that the server agreed to the protocol's ALPN.
func (t *trial) handshake(tc *net.TCPConn, sock *sockIO) (*tlsIO, error) {
	c := tls.Client(rawConn{TCPConn: tc, s: sock}, t.tls)
	ctx, cancel := context.WithTimeout(t.ctx, t.timeout)
	defer cancel()
	tc.SetDeadline(time.Now().Add(t.timeout))
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	want := t.opts.Downstream.ALPN()
	if got := c.ConnectionState().NegotiatedProtocol; got != want && (got != "" || t.h2) {
		return nil, fmt.Errorf("TLS handshake: server chose ALPN %q, want %q", got, want)
	}
	return &tlsIO{c: c}, nil
}

//go:build !linux

package load

import "net"

// sockIO reads and writes one TCP connection. Outside Linux it is a thin
// wrapper over the net.Conn.
type sockIO struct {
	c   *net.TCPConn
	out []byte // request queued by Send
}

func newSockIO(c *net.TCPConn) (*sockIO, error) { return &sockIO{c: c}, nil }

// Send queues p to be written by the next Read.
func (s *sockIO) Send(p []byte) { s.out = p }

// Read writes the request queued by Send, if any, and reads at least one
// byte into p. An error of the write is a writeError.
func (s *sockIO) Read(p []byte) (int, error) {
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
func (s *sockIO) Write(p []byte) error {
	_, err := s.c.Write(p)
	return err
}

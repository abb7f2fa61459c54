//go:build !linux

package load

import "net"

// sockIO reads and writes one TCP connection. Outside Linux it is a thin
// wrapper over the net.Conn.
type sockIO struct{ c *net.TCPConn }

func newSockIO(c *net.TCPConn) (*sockIO, error) { return &sockIO{c}, nil }

// Read reads at least one byte into p.
func (s *sockIO) Read(p []byte) (int, error) { return s.c.Read(p) }

// Write writes all of p.
func (s *sockIO) Write(p []byte) error {
	_, err := s.c.Write(p)
	return err
}

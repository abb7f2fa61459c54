//go:build !linux

package load

import "net"

// sockIO reads and writes one TCP connection. Outside Linux it is netIO,
// a thin wrapper over the net.Conn.
type sockIO = netIO

func newSockIO(c *net.TCPConn) (*sockIO, error) { return &sockIO{c: c}, nil }

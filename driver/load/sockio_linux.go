package load

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// sockIO reads and writes one TCP connection with raw non-blocking system
// calls, parking in Go's netpoller (through syscall.RawConn) only when the
// socket is not ready. Deadlines set on the net.Conn still apply.
//
// Why not conn.Read/conn.Write: they enter the kernel through
// syscall.Syscall, whose entersyscall wakes the runtime's sysmon thread
// whenever it sleeps because every P was idle. With few connections the
// client goes idle between every response, so each request paid one or two
// extra thread wake-ups (≈ 20% of client CPU at 1 connection). read(2) and
// write(2) on a non-blocking socket never block, so RawSyscall is safe.
//
// A request queued by Send is written by the next Read, inside the same
// RawConn.Read call, which then parks without first trying a read: right
// after a write the answer has not arrived, so that read would only fail
// with EAGAIN (one wasted system call per request, ≈ 5% of client CPU). It
// cannot miss the answer: RawConn.Read resets the descriptor's read
// readiness before the callback runs, and the answer can only arrive after
// the write, so its readiness event comes after the reset.
type sockIO struct {
	rc      syscall.RawConn
	p       []byte
	out     []byte // request queued by Send, not yet written
	n       int
	err     error
	readFn  func(fd uintptr) bool // method values made once, so calls do not allocate
	writeFn func(fd uintptr) bool
}

func newSockIO(c *net.TCPConn) (*sockIO, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	s := &sockIO{rc: rc}
	s.readFn, s.writeFn = s.doRead, s.doWrite
	return s, nil
}

// Send queues p to be written by the next Read. p must stay unchanged
// until then.
func (s *sockIO) Send(p []byte) { s.out = p }

// Read writes the request queued by Send, if any, and reads at least one
// byte into p, waiting for the socket if needed. An error of the write is
// a writeError.
func (s *sockIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.p, s.n, s.err = p, 0, nil
	if err := s.rc.Read(s.readFn); err != nil {
		if len(s.out) > 0 {
			s.out = nil
			return 0, writeError{err}
		}
		return 0, err
	}
	if len(s.out) > 0 && s.err == nil {
		// The send buffer filled: finish the write waiting for the
		// socket to drain, then read as usual.
		out := s.out
		s.out = nil
		if err := s.Write(out); err != nil {
			return 0, writeError{err}
		}
		return s.Read(p)
	}
	return s.n, s.err
}

func (s *sockIO) doRead(fd uintptr) bool {
	if len(s.out) > 0 {
		for len(s.out) > 0 {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&s.out[0])), uintptr(len(s.out)))
			switch e {
			case 0:
				s.out = s.out[n:]
			case syscall.EINTR:
			case syscall.EAGAIN:
				return true // Read finishes the write
			default:
				s.out, s.err = nil, writeError{e}
				return true
			}
		}
		return false // wait for the answer
	}
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&s.p[0])), uintptr(len(s.p)))
		switch e {
		case 0:
			s.n = int(n)
			if n == 0 {
				s.err = io.EOF
			}
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait for the netpoller
		default:
			s.err = e
			return true
		}
	}
}

// Write writes all of p now, waiting for the socket if its buffer is full.
func (s *sockIO) Write(p []byte) error {
	s.p, s.err = p, nil
	if err := s.rc.Write(s.writeFn); err != nil {
		return err
	}
	return s.err
}

func (s *sockIO) doWrite(fd uintptr) bool {
	for len(s.p) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&s.p[0])), uintptr(len(s.p)))
		switch e {
		case 0:
			s.p = s.p[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.err = e
			return true
		}
	}
	return true
}

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
type sockIO struct {
	rc      syscall.RawConn
	p       []byte
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

// Read reads at least one byte into p, waiting for the socket if needed.
func (s *sockIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.p, s.n, s.err = p, 0, nil
	if err := s.rc.Read(s.readFn); err != nil {
		return 0, err
	}
	return s.n, s.err
}

func (s *sockIO) doRead(fd uintptr) bool {
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

// Write writes all of p, waiting for the socket if its buffer is full.
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

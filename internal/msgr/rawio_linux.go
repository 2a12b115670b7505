//go:build linux

package msgr

import (
	"net"
	"os"
	"syscall"
	"unsafe"

	"github.com/cuttlestore/cuttle/internal/rawio"
)

// rawSocket reads and writes a socket with raw system calls, which the
// Go runtime does not treat as blocking: the goroutine keeps its P and
// the runtime's monitor thread is neither woken nor made to hand the P
// to another thread while the kernel works. The socket is non-blocking,
// so a call never waits in the kernel; a loopback write does the
// receiver's protocol work inline, long enough for the monitor to take
// the P away from an ordinary system call and wake a thread to run it,
// only for that thread to find nothing to do on a machine with few CPUs.
// When the socket has no data or no room, the call returns to the
// network poller as an ordinary read or write does.
type rawSocket struct {
	*rawio.Reader // the reading goroutine's side

	// The writer's side: its attempt is made once, as the Reader's is,
	// so that a write allocates nothing.
	rc      syscall.RawConn
	writeFn func(fd uintptr) bool
	iov     []syscall.Iovec // the vector, reused
	rest    []syscall.Iovec // what of it is still to write
	werr    syscall.Errno
}

// newRawSocket returns a rawSocket for nc, or nil when nc is not a
// kernel socket (an in-memory connection in tests).
func newRawSocket(nc net.Conn) *rawSocket {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSocket{Reader: rawio.NewReader(rc), rc: rc}
	s.writeFn = s.write
	return s
}

// writev writes all of bufs.
func (s *rawSocket) writev(bufs [][]byte) error {
	s.iov = rawio.Iovecs(s.iov[:0], bufs)
	s.rest, s.werr = s.iov, 0
	rawio.ReleaseIO()
	err := s.rc.Write(s.writeFn)
	clear(s.iov) // drop the buffers for the collector
	s.iov, s.rest = s.iov[:0], nil
	if err != nil {
		return err
	}
	if s.werr != 0 {
		return os.NewSyscallError("writev", s.werr)
	}
	return nil
}

// write writes what is left of the vector: false when the socket has no
// room.
func (s *rawSocket) write(fd uintptr) bool {
	for len(s.rest) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&s.rest[0])), uintptr(min(len(s.rest), rawio.MaxIovecs)))
		switch e {
		case 0:
			if n == 0 { // never for a non-empty vector; an error, not a spin
				s.werr = syscall.EIO
				return true
			}
			s.rest = rawio.Skip(s.rest, int(n))
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werr = e
			return true
		}
	}
	return true
}

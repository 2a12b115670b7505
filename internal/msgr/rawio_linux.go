//go:build linux

package msgr

import (
	"io"
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
	rc  syscall.RawConn
	iov []syscall.Iovec
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
	return &rawSocket{rc: rc}
}

// Read implements io.Reader.
func (s *rawSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

// writev writes all of bufs.
func (s *rawSocket) writev(bufs [][]byte) error {
	iov := rawio.Iovecs(s.iov[:0], bufs)
	defer func() { clear(iov); s.iov = iov[:0] }() // drop the buffers for the collector
	var errno syscall.Errno
	rest := iov
	err := s.rc.Write(func(fd uintptr) bool {
		for len(rest) > 0 {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(min(len(rest), rawio.MaxIovecs)))
			switch e {
			case 0:
				rest = rawio.Skip(rest, int(n))
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	if errno != 0 {
		return os.NewSyscallError("writev", errno)
	}
	return nil
}

package rawio

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// Reader reads a non-blocking descriptor (a socket, an eventfd) with raw
// read calls through its syscall.RawConn: when there is nothing to read
// the goroutine waits in the network poller, as an ordinary read does.
// One goroutine reads at a time. The read attempt is made once, not per
// call, so a read allocates nothing.
type Reader struct {
	rc   syscall.RawConn
	fn   func(fd uintptr) bool
	buf  []byte
	n    uintptr
	errc syscall.Errno
}

// NewReader returns a Reader of rc.
func NewReader(rc syscall.RawConn) *Reader {
	r := &Reader{rc: rc}
	r.fn = r.attempt
	return r
}

// Read implements io.Reader: io.EOF when the peer closed.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.buf = p
	err := r.rc.Read(r.fn)
	r.buf = nil
	AcquireIO()
	switch {
	case err != nil:
		return 0, err
	case r.errc != 0:
		return 0, os.NewSyscallError("read", r.errc)
	case r.n == 0:
		return 0, io.EOF
	}
	return int(r.n), nil
}

// attempt is one try of Read: false when there is nothing yet.
func (r *Reader) attempt(fd uintptr) bool {
	for {
		r.n, _, r.errc = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.buf[0])), uintptr(len(r.buf)))
		switch r.errc {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		return true
	}
}

//go:build linux && (amd64 || arm64)

package blockstore

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Asynchronous direct reads with Linux AIO. A goroutine blocked in
// pread keeps its P (GOMAXPROCS slot) until the runtime's monitor takes
// it back, up to milliseconds later, so with few CPUs blocking direct
// reads from many goroutines keep only about GOMAXPROCS of them in
// flight. Instead a reader submits its read (io_submit, which does not
// wait for the device with O_DIRECT) and parks on a channel; completions
// signal an eventfd that the runtime's network poller watches, and one
// goroutine reaps them (io_getevents without waiting) and wakes the
// readers. No thread blocks in the kernel, so the device sees as many
// reads as there are readers, as fio's libaio queue depth does.

// iocb is struct iocb of linux/aio_abi.h (little-endian layout).
type iocb struct {
	data   uint64
	_      uint32 // aio_key
	_      int32  // aio_rw_flags
	opcode uint16
	_      int16 // aio_reqprio
	fildes uint32
	buf    uint64
	nbytes uint64
	offset int64
	_      uint64 // aio_reserved2
	flags  uint32
	resfd  uint32
}

type ioEvent struct {
	data uint64
	obj  uint64
	res  int64
	res2 int64
}

const (
	iocbCmdPread  = 0
	iocbFlagResfd = 1
	aioQueueDepth = 256
)

type aioReq struct {
	cb   iocb
	buf  []byte // keeps the buffer alive while the kernel writes it
	done chan int64
}

type aioReader struct {
	ctx  uintptr
	fd   int
	efd  *os.File
	mu   sync.Mutex
	reqs map[uint64]*aioReq
	next uint64
	wg   sync.WaitGroup
}

// newAIO sets up an AIO context reading f (nil if the kernel refuses).
func newAIO(f *os.File) *aioReader {
	var ctx uintptr
	if _, _, e := syscall.Syscall(syscall.SYS_IO_SETUP, aioQueueDepth, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		return nil
	}
	const efdNonblock, efdCloexec = 0x800, 0x80000
	efd, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, efdNonblock|efdCloexec, 0)
	if e != 0 {
		_, _, _ = syscall.Syscall(syscall.SYS_IO_DESTROY, ctx, 0, 0)
		return nil
	}
	a := &aioReader{ctx: ctx, fd: int(f.Fd()), efd: os.NewFile(efd, "aio-eventfd"), reqs: make(map[uint64]*aioReq)}
	a.wg.Add(1)
	go a.reap()
	return a
}

// errAIOBusy means the context's queue is full: read another way.
var errAIOBusy = errors.New("aio queue full")

// readAt reads len(p) bytes at off; p, off and len(p) must suit O_DIRECT.
func (a *aioReader) readAt(p []byte, off int64) (int, error) {
	r := &aioReq{buf: p, done: make(chan int64, 1)}
	r.cb = iocb{opcode: iocbCmdPread, fildes: uint32(a.fd), buf: uint64(uintptr(unsafe.Pointer(&p[0]))),
		nbytes: uint64(len(p)), offset: off, flags: iocbFlagResfd, resfd: uint32(a.efd.Fd())}
	a.mu.Lock()
	a.next++
	r.cb.data = a.next
	a.reqs[a.next] = r
	a.mu.Unlock()
	cbs := [1]*iocb{&r.cb}
	n, _, e := syscall.Syscall(syscall.SYS_IO_SUBMIT, a.ctx, 1, uintptr(unsafe.Pointer(&cbs[0])))
	if e != 0 || n != 1 {
		a.mu.Lock()
		delete(a.reqs, r.cb.data)
		a.mu.Unlock()
		if e == syscall.EAGAIN || e == 0 {
			return 0, errAIOBusy
		}
		return 0, e
	}
	res := <-r.done
	if res < 0 {
		return 0, syscall.Errno(-res)
	}
	return int(res), nil
}

// reap waits for completions on the eventfd and hands them out.
func (a *aioReader) reap() {
	defer a.wg.Done()
	var cnt [8]byte
	var events [64]ioEvent
	for {
		if _, err := a.efd.Read(cnt[:]); err != nil {
			return // closed
		}
		for {
			var ts syscall.Timespec
			n, _, e := syscall.Syscall6(syscall.SYS_IO_GETEVENTS, a.ctx, 0, uintptr(len(events)), uintptr(unsafe.Pointer(&events[0])), uintptr(unsafe.Pointer(&ts)), 0)
			if e == syscall.EINTR {
				continue
			}
			if e != 0 || n == 0 {
				break
			}
			a.mu.Lock()
			for _, ev := range events[:n] {
				if r, ok := a.reqs[ev.data]; ok {
					delete(a.reqs, ev.data)
					r.done <- ev.res
				}
			}
			a.mu.Unlock()
		}
	}
}

// close destroys the context (no read may be in flight) and stops the
// reaper.
func (a *aioReader) close() {
	_, _, _ = syscall.Syscall(syscall.SYS_IO_DESTROY, a.ctx, 0, 0)
	_ = a.efd.Close()
	a.wg.Wait()
}

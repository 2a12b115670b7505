//go:build linux && (amd64 || arm64)

package dio

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/cuttlestore/cuttle/internal/rawio"
)

// Asynchronous direct reads with Linux AIO. A goroutine blocked in
// pread keeps its P (GOMAXPROCS slot) until the runtime's monitor takes
// it back, up to milliseconds later, so with few CPUs blocking direct
// reads from many goroutines keep only about GOMAXPROCS of them in
// flight. Instead a reader queues its read and parks on a channel;
// completions signal an eventfd that the runtime's network poller
// watches, and one goroutine reaps them (io_getevents without waiting)
// and wakes the readers. No thread blocks in the kernel, so the device
// sees as many reads as there are readers, as fio's libaio queue depth
// does.
//
// Submissions are combined: the reader that finds nobody submitting
// submits every queued read, and keeps submitting what other readers
// queue meanwhile. io_submit costs a system call and, in a virtual
// machine, a doorbell to the host per call rather than per read, so
// with many readers one call carries several reads.
//
// The same machinery runs the applier's direct writes and, on a context
// of its own, the store's syncs (SyncData, IOCB_CMD_FDSYNC) and the
// direct WAL's durable writes (writeDSync).

// iocb is struct iocb of linux/aio_abi.h (little-endian layout).
type iocb struct {
	data    uint64
	_       uint32 // aio_key
	rwFlags int32  // aio_rw_flags
	opcode  uint16
	_       int16 // aio_reqprio
	fildes  uint32
	buf     uint64
	nbytes  uint64
	offset  int64
	_       uint64 // aio_reserved2
	flags   uint32
	resfd   uint32
}

type ioEvent struct {
	data uint64
	obj  uint64
	res  int64
	res2 int64
}

const (
	iocbCmdPread  = 0
	iocbCmdPwrite = 1
	iocbCmdFdsync = 3
	iocbFlagResfd = 1
	rwfDSync      = 0x2 // RWF_DSYNC: the write is durable when it completes
	aioQueueDepth = 256
	// aioResBusy is the result of a read the kernel did not take (its
	// queue was full): the reader reads another way.
	aioResBusy = math.MinInt64
)

type aioReq struct {
	cb   iocb
	buf  []byte // keeps the buffer alive while the kernel writes it
	done chan int64
}

// AIO is a Linux AIO context on one file (or, from NewSyncAIO, for
// syncs of any file) and the goroutine that reaps its completions. Its
// methods are safe for concurrent use; Close must come after every
// request has returned.
type AIO struct {
	ctx uintptr
	fd  int
	efd *os.File
	// resfd is efd's descriptor, kept apart: efd.Fd() would switch a
	// polled eventfd to blocking mode.
	resfd uint32
	// rawEfd reads a polled eventfd with raw system calls (nil: the
	// eventfd is read through efd, blocking a thread).
	rawEfd  *rawio.Reader
	syncs   atomic.Uint64 // syncs and durable writes the kernel ran (Syncs)
	closing atomic.Bool   // close has begun: the reaper stops
	wg      sync.WaitGroup

	mu         sync.Mutex
	reqs       map[uint64]*aioReq // submitted, not yet reaped
	next       uint64
	queued     []*aioReq // waiting for the next io_submit
	spare      []*aioReq // the previous batch's slice, reused
	cbs        []*iocb   // io_submit's argument, reused
	submitting bool      // a reader is submitting the queued reads
}

// NewAIO sets up an AIO context reading and writing f (nil if the
// kernel refuses). Its reaper blocks a thread in the eventfd's read: a
// large read's pieces complete while every P is busy checking and
// copying earlier ones, and the network poller is consulted only when a
// P runs out of work (or every 10 ms by the runtime's monitor); reaped
// through it, size-1 4 MiB random reads stalled for hundreds of
// milliseconds at times (920 against 1,540 MB/s, p99 0.73 s).
func NewAIO(f *os.File) *AIO { return newAIOFd(int(f.Fd()), false) }

// NewSyncAIO sets up an AIO context for syncs (SyncData), reaped through
// the network poller: the syncs that matter are the group commits of
// small writes, whose OSD is mostly waiting, and a reaper thread would
// cost the P hand-off the syncs go through AIO to avoid.
func NewSyncAIO() *AIO { return newAIOFd(-1, true) }

// newAIOFd sets up an AIO context whose reads and writes go to fd (-1:
// syncs only), reaped through the network poller if polled, else by a
// thread blocked in the eventfd's read (nil if the kernel refuses).
func newAIOFd(fd int, polled bool) *AIO {
	var ctx uintptr
	if _, _, e := syscall.Syscall(syscall.SYS_IO_SETUP, aioQueueDepth, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		return nil
	}
	const efdNonblock, efdCloexec = 0x800, 0x80000
	flags := uintptr(efdCloexec)
	if polled {
		flags |= efdNonblock // os.NewFile then registers it with the poller
	}
	efd, _, e := syscall.Syscall(syscall.SYS_EVENTFD2, 0, flags, 0)
	if e != 0 {
		_, _, _ = syscall.Syscall(syscall.SYS_IO_DESTROY, ctx, 0, 0)
		return nil
	}
	a := &AIO{ctx: ctx, fd: fd, efd: os.NewFile(efd, "aio-eventfd"), resfd: uint32(efd), reqs: make(map[uint64]*aioReq)}
	if polled {
		if rc, err := a.efd.SyscallConn(); err == nil {
			a.rawEfd = rawio.NewReader(rc)
		}
	}
	a.wg.Add(1)
	go a.reap()
	return a
}

// ErrBusy means the context's queue is full: read or write another
// way.
var ErrBusy = errors.New("aio queue full")

// ReadAt reads len(p) bytes at off; p, off and len(p) must suit O_DIRECT.
func (a *AIO) ReadAt(p []byte, off int64) (int, error) {
	r := a.request(iocbCmdPread, uint32(a.fd), p, off)
	a.enqueue(r)
	return r.wait()
}

// WriteAll writes every ws[i].Data at ws[i].Off, all submitted at
// once, and waits for them; each must suit O_DIRECT and no two may
// overlap (the kernel completes them in any order). errs[i] is
// ErrBusy for a write the kernel turned away (nothing written).
func (a *AIO) WriteAll(ws []Write) (errs []error) {
	reqs := make([]*aioReq, len(ws))
	for i, w := range ws {
		reqs[i] = a.request(iocbCmdPwrite, uint32(a.fd), w.Data, int64(w.Off))
	}
	a.enqueue(reqs...)
	errs = make([]error, len(ws))
	for i, r := range reqs {
		n, err := r.wait()
		if err == nil && n != len(ws[i].Data) {
			err = fmt.Errorf("short write: %d of %d bytes", n, len(ws[i].Data))
		}
		errs[i] = err
	}
	return errs
}

// SyncData makes fd's data durable as fdatasync does, without blocking
// a thread in the kernel: the kernel syncs on one of its workers and the
// caller parks until the completion arrives. It returns ErrBusy when
// the kernel will not take the sync (a full queue, or a file whose
// syncs AIO cannot run): sync another way.
func (a *AIO) SyncData(fd uintptr) error {
	r := a.request(iocbCmdFdsync, uint32(fd), nil, 0)
	a.enqueue(r)
	_, err := r.wait()
	if errors.Is(err, syscall.EINVAL) {
		return ErrBusy
	}
	if err == nil {
		a.syncs.Add(1)
	}
	return err
}

// writeDSync writes p at off of fd (both suited to O_DIRECT if fd was
// opened with it) and returns once the data is durable, as a write
// followed by fdatasync would. It returns ErrBusy when the kernel
// will not take the request: write another way.
func (a *AIO) writeDSync(fd uint32, p []byte, off int64) error {
	r := a.request(iocbCmdPwrite, fd, p, off)
	r.cb.rwFlags = rwfDSync
	a.enqueue(r)
	n, err := r.wait()
	switch {
	case errors.Is(err, syscall.EINVAL):
		return ErrBusy // a kernel without aio_rw_flags
	case err == nil && n != len(p):
		return fmt.Errorf("short write: %d of %d bytes", n, len(p))
	case err == nil:
		a.syncs.Add(1)
	}
	return err
}

// Syncs returns how many syncs and durable writes the kernel ran
// through a.
func (a *AIO) Syncs() uint64 { return a.syncs.Load() }

// request builds a request of op on fd for p at off (p empty: none).
func (a *AIO) request(op uint16, fd uint32, p []byte, off int64) *aioReq {
	r := &aioReq{buf: p, done: make(chan int64, 1)}
	r.cb = iocb{opcode: op, fildes: fd, nbytes: uint64(len(p)), offset: off, flags: iocbFlagResfd, resfd: a.resfd}
	if len(p) > 0 {
		r.cb.buf = uint64(uintptr(unsafe.Pointer(&p[0])))
	}
	return r
}

// enqueue queues requests and submits them, with any others queued,
// unless another caller is submitting already and will take them.
func (a *AIO) enqueue(rs ...*aioReq) {
	a.mu.Lock()
	for _, r := range rs {
		a.next++
		r.cb.data = a.next
		a.queued = append(a.queued, r)
	}
	if !a.submitting {
		a.submitting = true
		a.submitQueued()
		a.submitting = false
	}
	a.mu.Unlock()
}

// wait waits for r's completion.
func (r *aioReq) wait() (int, error) {
	switch res := <-r.done; {
	case res == aioResBusy:
		return 0, ErrBusy
	case res < 0:
		return 0, syscall.Errno(-res)
	default:
		return int(res), nil
	}
}

// submitQueued submits the queued requests, and those queued while it
// does, until none is left. The caller holds a.mu, which is released
// during io_submit so that other readers can queue.
func (a *AIO) submitQueued() {
	for len(a.queued) > 0 {
		batch := a.queued
		a.queued, a.spare = a.spare[:0], nil
		a.cbs = a.cbs[:0]
		for _, r := range batch {
			a.reqs[r.cb.data] = r // before submitting: the reaper may see it at once
			a.cbs = append(a.cbs, &r.cb)
		}
		cbs := a.cbs
		a.mu.Unlock()
		n, e := a.submit(cbs)
		a.mu.Lock()
		if e != 0 {
			n = 0
		}
		// io_submit stops at the first read it cannot take; it fails
		// with that read's error only if it took none.
		for i, r := range batch[n:] {
			delete(a.reqs, r.cb.data)
			res := int64(aioResBusy)
			if i == 0 && e != 0 && e != syscall.EAGAIN {
				res = -int64(e)
			}
			r.done <- res
		}
		clear(batch)
		a.spare = batch
	}
}

// submit passes cbs to io_submit. The context of syncs submits with a
// raw system call, which the Go runtime does not treat as blocking (see
// msgr's rawSocket): taking an fdatasync is queueing work for a kernel
// thread, and the syncs come from an OSD that is otherwise mostly
// waiting, where an ordinary call wakes the runtime's monitor thread.
// The direct WAL's writes go there too: within the file's size (see
// directWAL.Preallocate) io_submit only queues them, 13-18 µs with the
// virtual disk's doorbell, and as ordinary calls they cost size-1 4 KiB
// writes 11% of their IOPS (docs/benchmarks/2026-11-29.md,
// "Session 30"). The data file's reads and writes may wait in
// io_submit for the device's queue, so they keep the ordinary call.
func (a *AIO) submit(cbs []*iocb) (uintptr, syscall.Errno) {
	call := syscall.Syscall
	if a.fd < 0 {
		call = syscall.RawSyscall
	}
	n, _, e := call(syscall.SYS_IO_SUBMIT, a.ctx, uintptr(len(cbs)), uintptr(unsafe.Pointer(&cbs[0])))
	return n, e
}

// waitEvents waits until the eventfd counts completions, and resets it.
func (a *AIO) waitEvents(cnt []byte) error {
	if a.rawEfd == nil {
		_, err := a.efd.Read(cnt)
		return err
	}
	_, err := a.rawEfd.Read(cnt)
	return err
}

// appendRaw writes p at fd's offset with raw write calls (see submit):
// the WAL's appends land in the page cache and are made durable by
// SyncData, so they do not wait for the device.
func appendRaw(fd uintptr, p []byte) (int, error) { return rawio.Append(fd, p) }

// reap waits for completions on the eventfd and hands them out.
func (a *AIO) reap() {
	defer a.wg.Done()
	var cnt [8]byte
	var events [64]ioEvent
	for {
		if err := a.waitEvents(cnt[:]); err != nil || a.closing.Load() {
			return // closed
		}
		for {
			// Without a timeout io_getevents never waits: a raw call.
			// Completions after it count on the eventfd again.
			var ts syscall.Timespec
			n, _, e := syscall.RawSyscall6(syscall.SYS_IO_GETEVENTS, a.ctx, 0, uintptr(len(events)), uintptr(unsafe.Pointer(&events[0])), uintptr(unsafe.Pointer(&ts)), 0)
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
			if int(n) < len(events) {
				break // reaped all there was
			}
		}
	}
}

// Close destroys the context (no request may be in flight) and stops the
// reaper.
func (a *AIO) Close() {
	_, _, _ = syscall.Syscall(syscall.SYS_IO_DESTROY, a.ctx, 0, 0)
	// A reaper blocked in the eventfd's read does not notice Close:
	// wake it with a count of its own.
	a.closing.Store(true)
	one := [8]byte{1}
	_, _ = syscall.Write(int(a.resfd), one[:])
	a.wg.Wait()
	_ = a.efd.Close()
}

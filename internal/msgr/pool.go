package msgr

import (
	"math/bits"
	"time"

	"github.com/cuttlestore/cuttle/internal/bufpool"
)

// Received payloads of 4 KiB and more come from a pool the Dispatcher
// may return them to (Messenger.Release): a fresh multi-megabyte buffer
// costs more to allocate and fault in than to receive, and a reused one
// stays in cache. Small ones are pooled for the garbage they would make:
// from 64 KiB up only, the replies of 4 KiB reads were 130 MB/s of
// garbage in the bench client at 32,000 reads a second, and its
// collections and allocations a fifth of its CPU; pooled, client CPU per
// read fell from 21-24 to 18 µs (docs/benchmarks/2026-11-27.md,
// "Session 25").
const (
	minPooled = 4 << 10 // smaller payloads are plain allocations
	maxPooled = 128 << 20
	// subClasses is the number of classes per power of two: a buffer wastes
	// at most a sixteenth. With four, a 4 MiB write's message (a little
	// over 4 MiB) took a 5 MiB buffer, and an OSD with 16 such writes in
	// flight held 16 MiB it never used.
	subClasses = 16
)

// maxIdlePooled bounds the bytes of buffers waiting in the pool. The
// pool is a plain free list, not a sync.Pool: a sync.Pool drops its
// buffers at every other collection, so a busy OSD kept allocating fresh
// 4 MiB buffers, which made garbage, which made collections; between them
// the heap overshot the memory target by 150 MB and more (an OSD peaked
// at 459-523 MiB under size-1 4 MiB writes). Buffers beyond the bound go
// to the collector. The bound is well above what an OSD holds at once
// (16 writes of 4 MiB in flight are 68 MiB): with 32 MiB, the buffers
// of writes that completed together overflowed it, 15% of them became
// garbage, and their replacements pushed the heap past the memory
// target again (up to 461 MiB resident under size-3 4 MiB writes,
// against 227 MiB with this bound; docs/benchmarks/2026-11-27.md, "OSD
// memory under 4 MiB writes: no buffer churn"). Idle buffers do not
// stay: the trimmer lets go of those no one took for poolTrimInterval.
const maxIdlePooled = 128 << 20

// poolTrimInterval is how often the pool lets go of buffers no one took
// since the last time. Idle buffers count in the heap the collector paces
// itself by: 32 MiB of them, kept after a burst of large writes, left an
// OSD serving small reads that much less room before each collection
// (docs/benchmarks/2026-11-27.md, "A cluster that has run a while"),
// and with up to 128 MiB kept, 5 s of them cost 4 MiB reads right after
// writes 6% of their throughput, which trimming every second gives
// back. A buffer a steady stream of messages needs is taken again
// within milliseconds.
const poolTrimInterval = time.Second

// bufPool pools received payloads by class size (classSize).
type bufPool struct {
	list bufpool.FreeList
	huge bool // Config.HugePayloads
}

// classSize returns the capacity of the class holding n bytes, or 0 if n
// is not pooled: n rounded up to a subClasses-th of the power of two below
// it (a 4 MiB object's message, a little over 4 MiB, takes 4.25 MiB).
func classSize(n int) int {
	if n < minPooled || n > maxPooled {
		return 0
	}
	step := 1 << (bits.Len(uint(n-1)) - 1) / subClasses
	return (n + step - 1) / step * step
}

// get returns a buffer of length n; its contents are not zeroed.
func (p *bufPool) get(n int) []byte {
	size := classSize(n)
	if size == 0 {
		return make([]byte, n)
	}
	if b := p.list.Get(size); b != nil {
		return b[:n]
	}
	if p.huge {
		return bufpool.Huge(size)[:n]
	}
	return make([]byte, n, size)
}

// put returns b to its class if it came from the pool and the pool has
// room. It reports whether a trimmer should start: the pool holds
// buffers and none runs.
func (p *bufPool) put(b []byte) (startTrimmer bool) {
	size := classSize(cap(b))
	if size == 0 || cap(b) != size {
		return false
	}
	return p.list.Put(b, maxIdlePooled)
}

// trim drops the buffers that stayed idle since the last trim and
// reports whether any remain (bufpool.FreeList.Trim).
func (p *bufPool) trim() bool { return p.list.Trim() }

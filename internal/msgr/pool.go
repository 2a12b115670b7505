package msgr

import (
	"math/bits"
	"sync"
	"time"
)

// Large received payloads come from a pool the Dispatcher may return them
// to (Messenger.Release): a fresh multi-megabyte buffer costs more to
// allocate and fault in than to receive, and a reused one stays in cache.
const (
	minPooled = 64 << 10 // smaller payloads are plain allocations
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
// against 227 MiB with this bound; BENCHMARKS.md, "OSD memory under
// 4 MiB writes: no buffer churn"). Idle buffers do not stay: the trimmer
// lets go of those no one took for poolTrimInterval.
const maxIdlePooled = 128 << 20

// poolTrimInterval is how often the pool lets go of buffers no one took
// since the last time. Idle buffers count in the heap the collector paces
// itself by: 32 MiB of them, kept after a burst of large writes, left an
// OSD serving small reads that much less room before each collection
// (BENCHMARKS.md, "A cluster that has run a while"), and with up to 128
// MiB kept, 5 s of them cost 4 MiB reads right after writes 6% of their
// throughput, which trimming every second gives back. A buffer a steady
// stream of messages needs is taken again within milliseconds.
const poolTrimInterval = time.Second

type bufPool struct {
	mu       sync.Mutex
	free     map[int][][]byte // class size -> idle buffers of that capacity
	idle     int              // bytes in free
	low      int              // the fewest bytes idle since the last trim
	trimming bool             // a trimmer runs (Messenger.startTrimmer)
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
	p.mu.Lock()
	if bs := p.free[size]; len(bs) > 0 {
		b := bs[len(bs)-1]
		bs[len(bs)-1] = nil
		p.free[size] = bs[:len(bs)-1]
		p.idle -= size
		p.low = min(p.low, p.idle)
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle+size > maxIdlePooled {
		return false
	}
	if p.free == nil {
		p.free = map[int][][]byte{}
	}
	p.free[size] = append(p.free[size], b[:size])
	p.idle += size
	if p.trimming {
		return false
	}
	p.trimming, p.low = true, p.idle
	return true
}

// trim drops buffers worth the bytes that stayed idle since the last
// trim (none of them was needed) and reports whether any remain; when
// none do, the trimmer stops and the next put starts another.
func (p *bufPool) trim() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for size, bs := range p.free {
		for len(bs) > 0 && p.low > 0 {
			bs[len(bs)-1] = nil
			bs = bs[:len(bs)-1]
			p.idle -= size
			p.low -= size
		}
		p.free[size] = bs
	}
	p.low = p.idle
	p.trimming = p.idle > 0
	return p.trimming
}

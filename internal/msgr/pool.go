package msgr

import (
	"math/bits"
	"sync"
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

type bufPool struct {
	classes sync.Map // class size (int) -> *sync.Pool of *[]byte
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

func (p *bufPool) class(size int) *sync.Pool {
	if v, ok := p.classes.Load(size); ok {
		return v.(*sync.Pool)
	}
	v, _ := p.classes.LoadOrStore(size, &sync.Pool{})
	return v.(*sync.Pool)
}

// get returns a buffer of length n; its contents are not zeroed.
func (p *bufPool) get(n int) []byte {
	size := classSize(n)
	if size == 0 {
		return make([]byte, n)
	}
	if v := p.class(size).Get(); v != nil {
		return (*v.(*[]byte))[:n]
	}
	return make([]byte, n, size)
}

// put returns b to its class if it came from the pool.
func (p *bufPool) put(b []byte) {
	size := classSize(cap(b))
	if size == 0 || cap(b) != size {
		return
	}
	b = b[:cap(b)]
	p.class(size).Put(&b)
}

package msgr

import (
	"math/bits"
	"sync"
)

// Large received payloads come from a pool the Dispatcher may return them
// to (Messenger.Release): a fresh multi-megabyte buffer costs more to
// allocate and fault in than to receive, and a reused one stays in cache.
const (
	minPooled  = 64 << 10 // smaller payloads are plain allocations
	numClasses = 12       // power-of-two classes, 64 KiB to 128 MiB
)

type bufPool struct {
	classes [numClasses]sync.Pool // of *[]byte with cap minPooled<<class
}

// class returns the smallest class holding n bytes, or -1.
func class(n int) int {
	if n < minPooled {
		return -1
	}
	c := bits.Len(uint((n - 1) / minPooled))
	if c >= numClasses {
		return -1
	}
	return c
}

// get returns a buffer of length n; its contents are not zeroed.
func (p *bufPool) get(n int) []byte {
	c := class(n)
	if c < 0 {
		return make([]byte, n)
	}
	if v := p.classes[c].Get(); v != nil {
		return (*v.(*[]byte))[:n]
	}
	return make([]byte, n, minPooled<<c)
}

// put returns b to its class if it came from the pool.
func (p *bufPool) put(b []byte) {
	c := class(cap(b))
	if c < 0 || cap(b) != minPooled<<c {
		return
	}
	b = b[:cap(b)]
	p.classes[c].Put(&b)
}

// Package bufpool keeps large byte buffers for reuse: a free list per
// buffer capacity, bounded in the bytes it holds idle, that lets go at
// each trim of the buffers no one took since the last one. Owners (the
// messenger's received payloads, the object store's read buffers) choose
// the capacities and run the trims. It is not a sync.Pool, which empties
// at collections, just when a busy daemon needs its buffers again.
//
// It knows nothing of what the buffers hold or who reads them. A FreeList
// is safe for concurrent use (one mutex); Put tells its caller when to
// start the goroutine that runs the trims, which the owner runs.
package bufpool

import "sync"

// FreeList holds idle buffers by capacity. The zero value is empty and
// ready to use; it is safe for concurrent use.
type FreeList struct {
	mu       sync.Mutex
	free     map[int][][]byte // capacity -> idle buffers
	idle     int              // bytes in free
	low      int              // the fewest bytes idle since the last trim
	trimming bool             // the owner's trimmer runs
}

// Get returns an idle buffer of capacity size, at full length and with
// its old contents, or nil if there is none.
func (l *FreeList) Get(size int) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	bs := l.free[size]
	if len(bs) == 0 {
		return nil
	}
	b := bs[len(bs)-1]
	bs[len(bs)-1] = nil
	l.free[size] = bs[:len(bs)-1]
	l.idle -= size
	l.low = min(l.low, l.idle)
	return b
}

// Put keeps b, under its capacity, unless that would take the idle bytes
// past maxIdle. It reports whether the owner should start a trimmer:
// the list holds buffers and no trimmer runs.
func (l *FreeList) Put(b []byte, maxIdle int) (startTrimmer bool) {
	size := cap(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.idle+size > maxIdle {
		return false
	}
	if l.free == nil {
		l.free = map[int][][]byte{}
	}
	l.free[size] = append(l.free[size], b[:size])
	l.idle += size
	if l.trimming {
		return false
	}
	l.trimming, l.low = true, l.idle
	return true
}

// Trim drops buffers worth the bytes that stayed idle since the last
// trim (none of them was needed) and reports whether any remain; when
// none do, the trimmer should stop, and the next Put asks for another.
func (l *FreeList) Trim() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for size, bs := range l.free {
		for len(bs) > 0 && l.low > 0 {
			bs[len(bs)-1] = nil
			bs = bs[:len(bs)-1]
			l.idle -= size
			l.low -= size
		}
		l.free[size] = bs
	}
	l.low = l.idle
	l.trimming = l.idle > 0
	return l.trimming
}

// Idle returns the bytes of the buffers held, and whether a trimmer runs.
func (l *FreeList) Idle() (bytes int, trimming bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.idle, l.trimming
}

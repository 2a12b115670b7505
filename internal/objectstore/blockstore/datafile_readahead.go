package blockstore

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
)

// Readahead for sequential large reads. When large direct reads start
// where the previous one ended on the device, twice in a row (an object
// read in pieces, or objects written one after another and read back in
// that order), the store reads the next two stretches of the device, each
// as long as this read, into spare staging buffers while the caller deals
// with this one. The next read takes its stretch if it starts there. The
// kernel does the same for a buffered file; direct reads get no help from
// it. Without it a 4 MiB read waits for the device and then copies and
// checks the data while the device idles; with it the two overlap.
//
// A prefetch holds bytes of the data file as they were when it was read.
// It is used only if no write to the data file began or was under way
// since it started (dataWrites): then the file still holds those bytes,
// and the read lays newer deferred data over them from the data overlay
// as any read does.

// dataWrites counts writes to the data file: gen moves when a batch of
// writes begins and again when it ends, active counts batches under way.
type dataWrites struct {
	gen, active atomic.Int64
}

func (w *dataWrites) begin() {
	w.active.Add(1)
	w.gen.Add(1)
}

func (w *dataWrites) end() {
	w.gen.Add(1)
	w.active.Add(-1)
}

// quiet returns the generation and whether no write is under way; a
// prefetch started now is good while the generation stays the same.
func (w *dataWrites) quiet() (int64, bool) {
	g := w.gen.Load()
	return g, w.active.Load() == 0
}

// prefetch is one readahead: len(buf) bytes at off read into buf (a
// staging buffer) by a goroutine that closes done.
type prefetch struct {
	off  uint64
	buf  []byte
	gen  int64
	done chan struct{}
	err  error
}

// readahead tracks one sequential stream and its prefetches.
type readahead struct {
	mu      sync.Mutex
	lastEnd uint64      // device offset where the last large read ended
	run     int         // consecutive large reads that each began at lastEnd
	ahead   []*prefetch // not yet taken, in device order
	wg      sync.WaitGroup
}

// readaheadDepth is how many reads' worth the stream reads ahead: two
// keep the device busy while the caller copies and checks one.
const readaheadDepth = 2

// readaheadAfter is how many reads in a row must each continue the last
// before the store reads ahead: large reads from many clients at once
// sometimes land one after another on the device by chance, and a
// prefetch for them would only cost the device time.
const readaheadAfter = 2

// startRead notes a large read of n bytes at off and, once
// readaheadAfter reads in a row have each continued the last one, makes
// sure the readaheadDepth stretches of n bytes after it are being
// prefetched. It returns the prefetch for exactly this read, if there is
// one, which the caller takes (takePrefetch) and gives back.
func (d *dataFile) startRead(off uint64, n int) *prefetch {
	ra := &d.ra
	ra.mu.Lock()
	defer ra.mu.Unlock()
	sequential := off == ra.lastEnd
	if sequential {
		ra.run++
	} else {
		ra.run = 0
	}
	ra.lastEnd = off + uint64(n)
	var mine *prefetch
	horizon := off + uint64((readaheadDepth+1)*n)
	keep := ra.ahead[:0]
	for _, p := range ra.ahead {
		switch {
		case mine == nil && p.off == off && len(p.buf) == n:
			mine = p
		case sequential && len(p.buf) == n && p.off > off && p.off < horizon:
			keep = append(keep, p)
		default:
			d.dropPrefetch(p)
		}
	}
	ra.ahead = keep
	if ra.run < readaheadAfter || n > dio.StagingSize {
		return mine
	}
	for next := off + uint64(n); next < horizon && next+uint64(n) <= d.size; next += uint64(n) {
		if slices.ContainsFunc(ra.ahead, func(p *prefetch) bool { return p.off == next }) {
			continue
		}
		p := d.prefetch(next, n)
		if p == nil {
			break
		}
		ra.ahead = append(ra.ahead, p)
	}
	return mine
}

// prefetch starts reading n bytes at off into a spare staging buffer;
// nil if none is free or a data write is under way.
func (d *dataFile) prefetch(off uint64, n int) *prefetch {
	gen, quiet := d.writes.quiet()
	if !quiet {
		return nil
	}
	b := d.staging.Get()
	if b == nil {
		return nil
	}
	p := &prefetch{off: off, buf: b[:n], gen: gen, done: make(chan struct{})}
	d.ra.wg.Go(func() {
		defer close(p.done)
		p.err = spread(n, func(lo, hi int) error { return d.readPiece(p.buf[lo:hi], int64(off)+int64(lo)) })
	})
	return p
}

// takePrefetch waits for p and reports whether its bytes are still the
// file's; if not, it gives p's buffer back.
func (d *dataFile) takePrefetch(p *prefetch) bool {
	<-p.done
	if p.err == nil && d.writes.gen.Load() == p.gen {
		d.statReadahead.Add(1)
		return true
	}
	d.staging.Put(p.buf[:cap(p.buf)])
	return false
}

// dropPrefetch gives p's buffer back once its read is done.
func (d *dataFile) dropPrefetch(p *prefetch) {
	d.ra.wg.Go(func() {
		<-p.done
		d.staging.Put(p.buf[:cap(p.buf)])
	})
}

// readPrefetched copies and verifies a prefetched read into dst(), in
// pieces at once, and gives the staging buffer back.
func (d *dataFile) readPrefetched(p *prefetch, dst func() []byte, verify func(lo, hi int) error) error {
	defer d.staging.Put(p.buf[:cap(p.buf)])
	return spread(len(p.buf), func(lo, hi int) error {
		return d.copyVerified(dst(), lo, p.buf[lo:hi], verify)
	})
}

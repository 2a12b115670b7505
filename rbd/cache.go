package rbd

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
)

// The write-back cache (docs/RBD.md "The write-back cache"), as librbd's
// rbd_cache: off unless OpenOptions.Cache asks for it. The image's bytes
// are cached in blocks of cacheBlock bytes; each block knows which of its
// bytes it holds (valid) and which of those were written here and not yet
// to the cluster (dirty). A write is copied into its blocks and returns;
// a flusher writes dirty blocks back when there are more than TargetDirty
// bytes of them or they are older than MaxDirtyAge, and writers wait while
// there are MaxDirty. Flush writes back every block dirtied before it and
// waits. Clean blocks are kept, least recently used dropped first, while
// the cache holds at most Size bytes.
//
// Ordering: a block is written back by one caller at a time, from a copy
// taken when it starts, and a write-back clears a block's dirty bytes only
// if no write came in meanwhile, so an older copy never lands after a
// newer one. A discard (and a write too large for the cache) drops the
// range from the cache and waits for the write-backs in flight of its
// blocks before it goes to the cluster.
//
// Coherence with other openers: dirty bytes are only ever made while this
// Image holds the exclusive lock, which it gives up only after writing
// them back (unlockHeld); clean bytes are used only while it holds the lock
// (or for a snapshot, which does not change), and dropped when it takes
// the lock again, for the last holder may have written.

// cacheBlock is the size of a cache block.
const cacheBlock = 4 << 10

// CacheOptions tune the write-back cache (librbd's rbd_cache_* options;
// DefaultCacheOptions returns their defaults).
type CacheOptions struct {
	// Size bounds the bytes cached, clean and dirty (rbd_cache_size).
	Size uint64
	// MaxDirty is how many dirty bytes there may be before writers wait
	// for write-back (rbd_cache_max_dirty); 0 makes the cache
	// write-through: every write returns once written back, the cache
	// serving reads only.
	MaxDirty uint64
	// TargetDirty is how many dirty bytes start write-back
	// (rbd_cache_target_dirty).
	TargetDirty uint64
	// MaxDirtyAge is how long a block stays dirty before it is
	// written back (rbd_cache_max_dirty_age).
	MaxDirtyAge time.Duration
	// WritethroughUntilFlush makes the cache write-through until the
	// first Flush, for programs that never flush
	// (rbd_cache_writethrough_until_flush).
	WritethroughUntilFlush bool
}

// DefaultCacheOptions returns librbd's defaults: 32 MiB, at most 24 MiB
// dirty, write-back from 16 MiB or after 1 s, write-through until the
// first flush.
func DefaultCacheOptions() CacheOptions {
	return CacheOptions{Size: 32 << 20, MaxDirty: 24 << 20, TargetDirty: 16 << 20, MaxDirtyAge: time.Second, WritethroughUntilFlush: true}
}

// check fails for settings the cache cannot work with.
func (o CacheOptions) check() error {
	switch {
	case o.Size < 16*cacheBlock:
		return fmt.Errorf("%w: cache size %d: want at least %d bytes (EINVAL)", ErrInvalid, o.Size, 16*cacheBlock)
	case o.MaxDirty > o.Size:
		return fmt.Errorf("%w: cache max dirty %d is over the cache size %d (EINVAL)", ErrInvalid, o.MaxDirty, o.Size)
	case o.TargetDirty > o.MaxDirty:
		return fmt.Errorf("%w: cache target dirty %d is over max dirty %d (EINVAL)", ErrInvalid, o.TargetDirty, o.MaxDirty)
	case o.MaxDirty > 0 && o.MaxDirtyAge <= 0:
		return fmt.Errorf("%w: cache max dirty age %v: want more than 0 (EINVAL)", ErrInvalid, o.MaxDirtyAge)
	}
	return nil
}

// cblock is one block of the cache: image bytes [no*cacheBlock,
// (no+1)*cacheBlock).
type cblock struct {
	no    uint64
	data  []byte
	valid spans // the bytes the block holds (the dirty ones among them)
	dirty spans // bytes written here and not yet to the cluster
	gen   uint64
	// first is the sequence number of the oldest write not yet
	// written back (while dirty); gen that of the last.
	first uint64
	since time.Time     // when it became dirty
	busy  bool          // a write-back of it is in flight
	elem  *list.Element // its place in the LRU while clean
}

// fillState follows the reads of one block from the cluster in flight:
// spoiled is set when the block's bytes on the cluster or in the cache
// changed meanwhile, so what they read may be older than the cache.
type fillState struct {
	n       int
	spoiled bool
}

// cache is an Image's write-back cache. Its methods may be called on a
// nil cache (none asked for), where they do nothing.
type cache struct {
	opts CacheOptions

	mu      sync.Mutex
	blocks  map[uint64]*cblock
	lru     list.List // clean blocks, least recently used first
	dirty   uint64    // dirty bytes
	seq     uint64    // writes into the cache so far
	flushed bool      // a Flush has succeeded: write-through-until-flush is over
	fills   map[uint64]*fillState
	changed chan struct{} // closed (and replaced) when a write-back ends or dirty bytes go
	// objectOf returns the data object block no lies in (a block lies
	// within one stripe unit, so in one object); nil: all in one.
	objectOf func(no uint64) uint64
	kick     chan struct{} // wakes the flusher (one token)
}

func newCache(o CacheOptions) *cache {
	return &cache{opts: o, blocks: map[uint64]*cblock{}, fills: map[uint64]*fillState{},
		changed: make(chan struct{}), kick: make(chan struct{}, 1)}
}

// CacheStats describes an Image's cache at an instant.
type CacheStats struct {
	Bytes      uint64 `json:"bytes"`       // cached, clean and dirty (whole blocks)
	DirtyBytes uint64 `json:"dirty_bytes"` // written here, not yet to the cluster
}

// CacheStats returns what the Image's cache holds (zeros without one).
func (img *Image) CacheStats() CacheStats {
	c := img.cache
	if c == nil {
		return CacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Bytes: uint64(len(c.blocks)) * cacheBlock, DirtyBytes: c.dirty}
}

// eachBlock calls f for each cache block [off, off+n) touches, with the
// part of the block it touches ([lo, hi) of the block) and where that
// part starts in the range.
func eachBlock(off, n uint64, f func(no uint64, lo, hi uint32, at uint64)) {
	for pos := off; pos < off+n; {
		no := pos / cacheBlock
		end := min(off+n, (no+1)*cacheBlock)
		f(no, uint32(pos-no*cacheBlock), uint32(end-no*cacheBlock), pos-off)
		pos = end
	}
}

// wake tells the waiters to look again (mu held).
func (c *cache) wake() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// kickFlusher wakes the flusher if it sleeps.
func (c *cache) kickFlusher() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// spoil marks the reads of block no in flight as spoiled (mu held).
func (c *cache) spoil(no uint64) {
	if f := c.fills[no]; f != nil {
		f.spoiled = true
	}
}

// unlinkLRU takes b out of the LRU (mu held).
func (c *cache) unlinkLRU(b *cblock) {
	if b.elem != nil {
		c.lru.Remove(b.elem)
		b.elem = nil
	}
}

// settle puts b, if clean, idle and still cached, at the LRU's end (mu
// held), or forgets it if it holds nothing.
func (c *cache) settle(b *cblock) {
	if len(b.dirty) > 0 || b.busy || c.blocks[b.no] != b {
		return
	}
	if len(b.valid) == 0 {
		c.unlinkLRU(b)
		delete(c.blocks, b.no)
		return
	}
	if b.elem == nil {
		b.elem = c.lru.PushBack(b)
	} else {
		c.lru.MoveToBack(b.elem)
	}
}

// evict drops least recently used clean blocks while the cache holds more
// than its size (mu held).
func (c *cache) evict() {
	for uint64(len(c.blocks))*cacheBlock > c.opts.Size {
		e := c.lru.Front()
		if e == nil {
			return // all dirty or busy: writers wait at MaxDirty
		}
		b := e.Value.(*cblock)
		c.lru.Remove(e)
		b.elem = nil
		delete(c.blocks, b.no)
	}
}

// writeThrough reports whether writes must be written back before they
// return.
func (c *cache) writeThrough() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opts.MaxDirty == 0 || (c.opts.WritethroughUntilFlush && !c.flushed)
}

// throttle waits while the cache holds MaxDirty dirty bytes or more.
func (c *cache) throttle(ctx context.Context) error {
	c.mu.Lock()
	for c.dirty >= c.opts.MaxDirty {
		ch := c.changed
		c.mu.Unlock()
		c.kickFlusher()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		c.mu.Lock()
	}
	c.mu.Unlock()
	return nil
}

// put copies data, the image's new bytes at off, into the cache as dirty
// and returns the write's sequence number.
func (c *cache) put(data []byte, off uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	now := time.Now()
	eachBlock(off, uint64(len(data)), func(no uint64, lo, hi uint32, at uint64) {
		b := c.blocks[no]
		if b == nil {
			b = &cblock{no: no, data: make([]byte, cacheBlock)}
			c.blocks[no] = b
		}
		c.unlinkLRU(b)
		copy(b.data[lo:hi], data[at:])
		b.valid = b.valid.add(lo, hi)
		before := b.dirty.size()
		b.dirty = b.dirty.add(lo, hi)
		c.dirty += b.dirty.size() - before
		if before == 0 {
			b.first, b.since = c.seq, now
		}
		b.gen = c.seq
		c.spoil(no)
	})
	c.evict()
	if c.dirty > c.opts.TargetDirty {
		c.kickFlusher()
	}
	return c.seq
}

// read fills buf with the image's bytes at off: from the cache where it
// holds them, the rest through fetch (from the cluster). useClean says
// whether the cache's clean bytes are the image's (this Image holds the
// exclusive lock, or is open at a snapshot); if so what fetch read is
// kept as clean bytes too. Dirty bytes are always the image's.
func (c *cache) read(ctx context.Context, buf []byte, off uint64, useClean bool, fetch func(ctx context.Context, buf []byte, off uint64) error) error {
	n := uint64(len(buf))
	mask := func(b *cblock) spans {
		if useClean {
			return b.valid
		}
		return b.dirty
	}
	c.mu.Lock()
	hit := true
	eachBlock(off, n, func(no uint64, lo, hi uint32, _ uint64) {
		if b := c.blocks[no]; hit && (b == nil || !mask(b).covers(lo, hi)) {
			hit = false
		}
	})
	if hit {
		eachBlock(off, n, func(no uint64, lo, hi uint32, at uint64) {
			b := c.blocks[no]
			copy(buf[at:], b.data[lo:hi])
			if b.elem != nil {
				c.lru.MoveToBack(b.elem)
			}
		})
		c.mu.Unlock()
		return nil
	}
	eachBlock(off, n, func(no uint64, _, _ uint32, _ uint64) {
		f := c.fills[no]
		if f == nil {
			f = &fillState{}
			c.fills[no] = f
		}
		f.n++
	})
	c.mu.Unlock()

	err := fetch(ctx, buf, off)

	c.mu.Lock()
	defer c.mu.Unlock()
	spoiled := map[uint64]bool{}
	eachBlock(off, n, func(no uint64, _, _ uint32, _ uint64) {
		f := c.fills[no]
		if f.spoiled {
			spoiled[no] = true
		}
		if f.n--; f.n == 0 {
			delete(c.fills, no)
		}
	})
	if err != nil {
		return err
	}
	// What the cache holds is as new as what was read or newer: dirty
	// bytes always, clean ones while they are the image's, and those of
	// a block written back while the read was in flight.
	keep := useClean && n <= c.opts.Size/2
	eachBlock(off, n, func(no uint64, lo, hi uint32, at uint64) {
		b := c.blocks[no]
		if b != nil {
			m := b.dirty
			if useClean || spoiled[no] {
				m = b.valid
			}
			for _, r := range m.clip(lo, hi) {
				copy(buf[at+uint64(r.lo-lo):], b.data[r.lo:r.hi])
			}
		}
		if !keep || spoiled[no] {
			return
		}
		if b == nil {
			b = &cblock{no: no, data: make([]byte, cacheBlock)}
			c.blocks[no] = b
		}
		copy(b.data[lo:hi], buf[at:at+uint64(hi-lo)])
		b.valid = b.valid.add(lo, hi)
		c.settle(b)
	})
	c.evict()
	return nil
}

// dropRange drops [off, off+n) from the cache, dirty bytes too (the range
// is about to be discarded or overwritten on the cluster), and waits until
// no write-back of its blocks is in flight (one might carry older bytes of
// the range).
func (c *cache) dropRange(ctx context.Context, off, n uint64) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	eachBlock(off, n, func(no uint64, lo, hi uint32, _ uint64) {
		c.spoil(no)
		b := c.blocks[no]
		if b == nil {
			return
		}
		before := b.dirty.size()
		b.dirty = b.dirty.remove(lo, hi)
		c.dirty -= before - b.dirty.size()
		b.valid = b.valid.remove(lo, hi)
		c.settle(b)
	})
	c.wake()
	for {
		busy := false
		eachBlock(off, n, func(no uint64, _, _ uint32, _ uint64) {
			if b := c.blocks[no]; b != nil && b.busy {
				busy = true
			}
		})
		ch := c.changed
		c.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		c.mu.Lock()
	}
}

// dropClean drops the clean bytes of [off, off+n) once the range changed
// on the cluster by another path than the cache (a discard): a read that
// fetched the range before may have kept its older bytes.
func (c *cache) dropClean(off, n uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	eachBlock(off, n, func(no uint64, lo, hi uint32, _ uint64) {
		c.spoil(no)
		if b := c.blocks[no]; b != nil {
			v := b.valid.remove(lo, hi)
			for _, r := range b.dirty.clip(lo, hi) {
				v = v.add(r.lo, r.hi)
			}
			b.valid = v
			c.settle(b)
		}
	})
}

// dropAllClean drops every clean byte: the image may have changed under
// them (the exclusive lock changed hands, a resize or rollback).
func (c *cache) dropAllClean() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.fills {
		f.spoiled = true
	}
	for _, b := range c.blocks {
		b.valid = slices.Clone(b.dirty)
		c.settle(b)
	}
}

// writeBack writes back the dirty blocks want chooses (it is called with
// mu held), through w, until none is left: it waits for the write-backs of
// those blocks already in flight and writes again those written to
// meanwhile. It returns the first failure; the blocks then stay dirty.
func (c *cache) writeBack(ctx context.Context, want func(b *cblock) bool, w func(ctx context.Context, runs []run) error) error {
	for {
		c.mu.Lock()
		var todo []*cblock
		busy := false
		for _, b := range c.blocks {
			switch {
			case len(b.dirty) == 0 || !want(b):
			case b.busy:
				busy = true
			default:
				todo = append(todo, b)
			}
		}
		if len(todo) == 0 {
			ch := c.changed
			c.mu.Unlock()
			if !busy {
				return nil
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			continue
		}
		slices.SortFunc(todo, func(a, b *cblock) int { return cmpUint64(a.no, b.no) })
		// One group per data object: each is written back, and its
		// blocks made clean (writers waiting at MaxDirty woken), as soon
		// as its object's operation is done.
		type group struct {
			blocks []int // in todo
			runs   []run
		}
		var groups []*group
		byObject := map[uint64]*group{}
		gens := make([]uint64, len(todo))
		for i, b := range todo {
			b.busy, gens[i] = true, b.gen
			var obj uint64
			if c.objectOf != nil {
				obj = c.objectOf(b.no)
			}
			g := byObject[obj]
			if g == nil {
				g = &group{}
				byObject[obj] = g
				groups = append(groups, g)
			}
			g.blocks = append(g.blocks, i)
			for _, r := range b.dirty {
				at := b.no*cacheBlock + uint64(r.lo)
				if k := len(g.runs) - 1; k >= 0 && g.runs[k].off+uint64(len(g.runs[k].data)) == at {
					g.runs[k].data = append(g.runs[k].data, b.data[r.lo:r.hi]...)
				} else {
					g.runs = append(g.runs, run{off: at, data: slices.Clone(b.data[r.lo:r.hi])})
				}
			}
		}
		c.mu.Unlock()
		err := inParallel(ctx, len(groups), writeBackInFlight, func(ctx context.Context, k int) error {
			g := groups[k]
			err := w(ctx, g.runs)
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, i := range g.blocks {
				b := todo[i]
				b.busy = false
				c.spoil(b.no)
				if err == nil {
					if b.gen == gens[i] {
						c.dirty -= b.dirty.size()
						b.dirty = nil
					} else {
						b.first = gens[i] + 1 // what came before is on the cluster
					}
				}
				c.settle(b)
			}
			c.evict()
			c.wake()
			return err
		})
		if err != nil {
			return err
		}
	}
}

// writeBackInFlight bounds the data objects one write-back has in flight.
const writeBackInFlight = 16

// inParallel runs f(ctx, i) for i from 0 to n-1, at most max at a time,
// and returns the first error (every call runs: each one's outcome is
// recorded by f).
func inParallel(ctx context.Context, n, max int, f func(ctx context.Context, i int) error) error {
	if n == 1 {
		return f(ctx, 0)
	}
	sem := make(chan struct{}, max)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// run is contiguous dirty bytes to write back at image offset off.
type run struct {
	off  uint64
	data []byte
}

// maxWritesPerOp bounds the writes one object operation of a write-back
// carries (the wire allows 1024 sub-operations).
const maxWritesPerOp = 256

// writeBackRuns writes runs to the data objects, for a write-back: one
// operation per object, carrying every run's bytes in that object (4 KiB
// random writes written back together are mostly several per object),
// MaxInFlight objects in flight at once. The caller holds the gate and
// the exclusive lock.
func (img *Image) writeBackRuns(ctx context.Context, runs []run) error {
	if img.parent != nil {
		// A clone's objects not yet copied up need the parent's bytes
		// around the new ones (clone.go): each run the clone's way.
		for _, r := range runs {
			if err := img.writeObjects(ctx, r.data, r.off); err != nil {
				return err
			}
		}
		return nil
	}
	l := img.st.Layout()
	type objectWrite struct {
		no uint64
		op *rados.WriteOp
		n  int
	}
	var writes []*objectWrite
	last := map[uint64]*objectWrite{}
	for _, r := range runs {
		for _, p := range l.Pieces(r.off, uint64(len(r.data))) {
			w := last[p.ObjectNo]
			if w == nil || w.n == maxWritesPerOp {
				w = &objectWrite{no: p.ObjectNo, op: rados.NewWriteOp()}
				last[p.ObjectNo] = w
				writes = append(writes, w)
			}
			at := p.FileOff - r.off
			w.op.Write(r.data[at:at+p.Length], p.ObjectOff)
			w.n++
		}
	}
	nos := make([]uint64, 0, len(last))
	for no := range last {
		nos = append(nos, no)
	}
	slices.Sort(nos)
	// The map says exists before a write can create an object.
	if err := img.markObjects(ctx, nos, clsrbd.ObjectExists, clsrbd.AnyState); err != nil {
		return err
	}
	err := img.parallel(ctx, len(writes), func(ctx context.Context, i int) error {
		w := writes[i]
		return img.data.OperateWrite(ctx, dataObject(img.h.ObjectPrefix, w.no), w.op)
	})
	if err != nil {
		return fmt.Errorf("rbd: image %q: %w", img.name, classify(err))
	}
	return nil
}

// upTo returns a choice for writeBack: the blocks dirtied by writes up to
// sequence number seq.
func upTo(seq uint64) func(b *cblock) bool {
	return func(b *cblock) bool { return b.first <= seq }
}

// flushRound bounds the dirty bytes one round of the flusher writes
// back, so that writers waiting at MaxDirty go on as soon as the round
// is done rather than after all that is over the target.
const flushRound = 8 << 20

// pick chooses what the flusher writes back now, oldest first: the dirty
// blocks beyond TargetDirty (or beyond MaxDirty's, where writers wait),
// and those dirty for MaxDirtyAge or longer, at most flushRound bytes. It
// returns nil for nothing, and when to look again.
func (c *cache) pick(now time.Time) (want func(b *cblock) bool, next time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next = c.opts.MaxDirtyAge
	var dirty []*cblock
	for _, b := range c.blocks {
		if len(b.dirty) > 0 && !b.busy {
			dirty = append(dirty, b)
		}
	}
	slices.SortFunc(dirty, func(a, b *cblock) int { return cmpUint64(a.first, b.first) })
	var over uint64
	if c.dirty > c.opts.TargetDirty || c.dirty >= c.opts.MaxDirty {
		over = max(c.dirty-min(c.dirty, c.opts.TargetDirty), 1)
	}
	chosen := map[uint64]bool{}
	var bytes uint64
	for _, b := range dirty {
		age := now.Sub(b.since)
		if bytes >= flushRound || (over == 0 && age < c.opts.MaxDirtyAge) {
			next = min(next, max(c.opts.MaxDirtyAge-age, 0))
			continue
		}
		chosen[b.no] = true
		n := b.dirty.size()
		bytes += n
		over -= min(over, n)
	}
	if len(chosen) == 0 {
		return nil, next
	}
	seq := c.seq
	return func(b *cblock) bool { return chosen[b.no] && b.first <= seq }, next
}

// startCache starts the write-back cache o asks for, and for a writable
// image its flusher, which Close stops.
func (img *Image) startCache(o *CacheOptions) {
	if o == nil {
		return
	}
	img.cache = newCache(*o)
	l := img.st.Layout()
	img.cache.objectOf = func(no uint64) uint64 {
		obj, _, _ := l.Locate(no * cacheBlock)
		return obj
	}
	if img.readOnly || o.MaxDirty == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	img.stopFlusher = func() { cancel(); <-done }
	go func() {
		defer close(done)
		img.flusher(ctx)
	}()
}

// flusher writes back what the cache's settings want written back, when
// writes kick it and when the oldest dirty block comes of age. After a
// failure it waits for the age timer before it tries again (the data
// stays dirty; Flush reports the failure).
func (img *Image) flusher(ctx context.Context) {
	c := img.cache
	t := time.NewTimer(c.opts.MaxDirtyAge)
	defer t.Stop()
	kick := c.kick
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-t.C:
		}
		kick = c.kick
		want, next := c.pick(time.Now())
		if want != nil {
			if err := img.writeBackCache(ctx, want); err != nil {
				if ctx.Err() != nil {
					return
				}
				img.pool.log.Warn("rbd: cache write-back failed; the data stays dirty", "image", img.name, "err", err)
				kick, next = nil, c.opts.MaxDirtyAge
			} else {
				next = 0 // look again at once: more may be due
			}
		}
		t.Reset(next)
	}
}

// writeBackCache writes back the blocks want chooses, holding the
// exclusive lock (taking it again if it was lost).
func (img *Image) writeBackCache(ctx context.Context, want func(b *cblock) bool) error {
	leave, err := img.enter(ctx, false, true)
	if err != nil {
		return err
	}
	defer leave()
	if err := img.cache.writeBack(ctx, want, img.writeBackRuns); err != nil {
		return fmt.Errorf("rbd: image %q: cache write-back: %w", img.name, err)
	}
	return nil
}

// cachedWrite writes data at off through the cache: into it, returning
// at once in write-back mode; written back before it returns in
// write-through mode or when fua asks. A write larger than MaxDirty goes
// around the cache.
func (img *Image) cachedWrite(ctx context.Context, data []byte, off uint64, fua bool) error {
	c := img.cache
	n := uint64(len(data))
	around := n > c.opts.MaxDirty && c.opts.MaxDirty > 0
	through := fua || c.writeThrough()
	if !through && !around {
		if err := c.throttle(ctx); err != nil {
			return err
		}
	}
	leave, err := img.enter(ctx, false, true)
	if err != nil {
		return err
	}
	defer leave()
	if err := img.checkWrite("write"); err != nil {
		return err
	}
	if err := img.checkRange("write", off, n); err != nil {
		return err
	}
	if around {
		if err := c.dropRange(ctx, off, n); err != nil {
			return err
		}
		defer c.dropClean(off, n)
		return img.writeObjects(ctx, data, off)
	}
	seq := c.put(data, off)
	if !through {
		return nil
	}
	first, last := off/cacheBlock, (off+max(n, 1)-1)/cacheBlock
	err = c.writeBack(ctx, func(b *cblock) bool { return b.no >= first && b.no <= last && b.first <= seq }, img.writeBackRuns)
	if err != nil {
		return fmt.Errorf("rbd: image %q: write through the cache: %w", img.name, err)
	}
	return nil
}

// WriteAtFUA writes data at offset off and returns once it is durable on
// every replica, with the cache on or off (a write with NBD's FUA flag).
func (img *Image) WriteAtFUA(ctx context.Context, data []byte, off uint64) error {
	if img.cache == nil {
		return img.WriteAt(ctx, data, off)
	}
	return img.cachedWrite(ctx, data, off, true)
}

// cachedRead reads through the cache (the gate held).
func (img *Image) cachedRead(ctx context.Context, buf []byte, off uint64) error {
	useClean := img.snap != nil || img.owns()
	return img.cache.read(ctx, buf, off, useClean, img.readData)
}

// flushCache writes back every block dirtied before it was called and
// waits: Flush with the cache on. A failure leaves the data dirty (a later
// Flush tries again) and is returned.
func (img *Image) flushCache(ctx context.Context) error {
	if err := img.writeBackDirty(ctx); err != nil {
		return err
	}
	c := img.cache
	c.mu.Lock()
	c.flushed = true
	c.mu.Unlock()
	return nil
}

// writeBackDirty writes back every block dirtied before it was called,
// for what reads the cluster rather than the image's bytes (allocated
// extents, a copy). It does nothing without a cache.
func (img *Image) writeBackDirty(ctx context.Context) error {
	c := img.cache
	if c == nil {
		return nil
	}
	c.mu.Lock()
	seq := c.seq
	pending := c.dirty > 0
	c.mu.Unlock()
	if !pending {
		return nil
	}
	return img.writeBackCache(ctx, upTo(seq))
}

// flushLocked writes back everything dirty, for a caller holding the gate
// exclusively and the exclusive lock (a snapshot, a resize, a release of
// the lock): nothing else writes meanwhile.
func (img *Image) flushLocked(ctx context.Context) error {
	c := img.cache
	if c == nil {
		return nil
	}
	c.mu.Lock()
	seq := c.seq
	c.mu.Unlock()
	if err := c.writeBack(ctx, upTo(seq), img.writeBackRuns); err != nil {
		return fmt.Errorf("rbd: image %q: cache write-back: %w", img.name, err)
	}
	return nil
}

// closeCache writes the cache back and stops its flusher: the first step
// of Close.
func (img *Image) closeCache(ctx context.Context) error {
	if img.cache == nil {
		return nil
	}
	var err error
	if !img.readOnly {
		err = img.flushCache(ctx)
	}
	if img.stopFlusher != nil {
		img.stopFlusher()
	}
	if err != nil {
		return fmt.Errorf("%w; the data written since the last successful flush may be lost", err)
	}
	return nil
}

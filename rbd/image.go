package rbd

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// OpenOptions say how to open an image.
type OpenOptions struct {
	// ReadOnly refuses every change (ErrReadOnly).
	ReadOnly bool
	// Snap opens the image as it was at the named snapshot, read-only.
	Snap string
	// Cache turns on the write-back cache (cache.go; nil: off). Start
	// from DefaultCacheOptions.
	Cache *CacheOptions
	// MaxAsync bounds the asynchronous calls in flight (aio.go; default
	// 64): one more waits for a slot.
	MaxAsync int
}

// Image is an open image. Its methods are safe for concurrent use.
type Image struct {
	pool     *Pool
	name, id string
	ino      uint64 // the id as a number: the striper's file
	data     *rados.IOContext
	st       *striper.Striper
	readOnly bool

	// gate is held shared by I/O and exclusively by what changes the
	// header (size, snapshots), so that no write runs under a snap
	// context or a size that is changing.
	gate *gate
	// hmu guards h and snap for readers without the gate (Stat); they
	// change only under the gate held exclusively, and hmu.
	hmu  sync.Mutex
	h    clsrbd.Header
	snap *clsrbd.Snapshot // the snapshot opened at, nil for the head

	// stale is set when another opener changed the header (a notice) or
	// the watch was lost: the next call reads the header again.
	stale atomic.Bool
	// acq is held (a token in it) by the one caller acquiring the
	// exclusive lock (exlock.go).
	acq chan struct{}
	// lk guards the exclusive lock's state and the header watch.
	lk        sync.Mutex
	owner     bool   // this Image holds the exclusive lock
	cookie    string // the cookie it holds it with
	releasing bool   // a release (at another's request) is under way
	acquiring bool   // acquire is taking the lock
	requested bool   // another asked for the lock while it was being taken
	watch     *rados.Watch
	changed   chan struct{} // closed (and replaced) when the lock may have changed hands

	om objectMap // the holder's copy of the object map (objectmap.go)

	// parent is a clone's parent, open at its snapshot (clone.go); nil
	// for an image that is not a clone. It changes under the gate held
	// exclusively.
	parent *Image

	cache       *cache // the write-back cache, nil if off (cache.go)
	stopFlusher func()
	async       *asyncOps // the asynchronous calls in flight (aio.go)
}

// Open opens image name. It is ErrNotFound if there is no such image or
// snapshot, ErrUnsupported if the image has features this version does
// not know. The Image watches the image's header, to hear of other
// openers' changes and lock requests; Close it when done, which releases
// the exclusive lock it may hold (an Image not closed holds it until its
// Conn closes and the watch times out, 30 s, and is then fenced).
func (p *Pool) Open(ctx context.Context, name string, o OpenOptions) (*Image, error) {
	if o.Cache != nil {
		if err := o.Cache.check(); err != nil {
			return nil, fmt.Errorf("rbd: open %q: %w", name, err)
		}
	}
	img, err := p.open(ctx, name, o)
	if err != nil {
		return nil, err
	}
	if err := img.watchHeader(ctx); err != nil {
		if !img.readOnly {
			return nil, err
		}
		// A reader can do without (a full cluster refuses watches): it
		// tries again at each call, and misses others' changes meanwhile.
		p.log.Warn("rbd: no header watch for a read-only open; will retry", "image", name, "err", err)
		img.stale.Store(true)
	}
	img.async = newAsyncOps(o.MaxAsync)
	img.startCache(o.Cache)
	return img, nil
}

// open opens image name without watching its header (for a look at it:
// Stat, Remove).
func (p *Pool) open(ctx context.Context, name string, o OpenOptions) (*Image, error) {
	id, err := p.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	img, err := p.openID(ctx, name, id, o, 0)
	if err != nil {
		return nil, err
	}
	if err := img.openParent(ctx, 0); err != nil {
		return nil, err
	}
	return img, nil
}

// openID opens image id (named name) as open does, at snapshot snapID if
// not 0 (a clone's parent, read-only), without its parent (openParent).
func (p *Pool) openID(ctx context.Context, name, id string, o OpenOptions, snapID uint64) (*Image, error) {
	h, err := p.header(ctx, name, id)
	if err != nil {
		return nil, err
	}
	ino, err := clsrbd.ParseID(id)
	if err != nil {
		return nil, fmt.Errorf("rbd: image %q: %w", name, err)
	}
	dataPool := p.io.PoolName()
	if h.DataPool != clsrbd.NoDataPool {
		if dataPool, err = p.conn.PoolName(h.DataPool); err != nil {
			return nil, fmt.Errorf("rbd: image %q: data pool %d: %w", name, h.DataPool, err)
		}
	}
	data, err := p.conn.OpenIOContext(dataPool)
	if err != nil {
		return nil, fmt.Errorf("rbd: image %q: data pool %q: %w", name, dataPool, err)
	}
	l := layout.Layout{ObjectSize: uint32(h.ObjectSize()), StripeUnit: uint32(h.StripeUnit), StripeCount: uint32(h.StripeCount), Pool: data.PoolID()}
	prefix := h.ObjectPrefix
	st, err := striper.New(data, l, striper.Options{MaxInFlight: p.opts.MaxInFlight,
		ObjectName: func(_, no uint64) string { return dataObject(prefix, no) }})
	if err != nil {
		return nil, fmt.Errorf("rbd: image %q: %w", name, err)
	}
	img := &Image{pool: p, name: name, id: id, ino: ino, data: data, st: st, readOnly: o.ReadOnly || o.Snap != "", h: h, gate: newGate(),
		acq: make(chan struct{}, 1), changed: make(chan struct{}), om: objectMap{mu: make(chan struct{}, 1)}}
	if snapID != 0 {
		img.readOnly = true
		for _, s := range h.Snapshots {
			if s.ID == snapID {
				img.snap = &s
			}
		}
		if img.snap == nil {
			return nil, fmt.Errorf("%w: image %q has no snapshot %d (ENOENT)", ErrNotFound, name, snapID)
		}
		data.SetReadSnap(snapID)
	} else if o.Snap != "" {
		s, ok := h.Snap(o.Snap)
		if !ok {
			return nil, fmt.Errorf("%w: image %q has no snapshot %q (ENOENT)", ErrNotFound, name, o.Snap)
		}
		img.snap = &s
		data.SetReadSnap(s.ID)
	} else if err := img.setSnapContext(); err != nil {
		return nil, err
	}
	return img, nil
}

// dataObject names data object no of an image with object prefix prefix.
func dataObject(prefix string, no uint64) string { return fmt.Sprintf("%s.%016x", prefix, no) }

// setSnapContext makes later writes carry the header's snap context.
func (img *Image) setSnapContext() error {
	seq, snaps := img.h.SnapContext()
	if err := img.data.SetSnapWriteContext(seq, snaps); err != nil {
		return fmt.Errorf("rbd: image %q: snap context: %w", img.name, err)
	}
	return nil
}

// reload reads the header again (the gate held exclusively).
func (img *Image) reload(ctx context.Context) error {
	h, err := img.pool.header(ctx, img.name, img.id)
	if err != nil {
		return err
	}
	img.hmu.Lock()
	defer img.hmu.Unlock()
	img.h = h
	if img.snap != nil {
		s, ok := h.Snap(img.snap.Name)
		if !ok || s.ID != img.snap.ID {
			return fmt.Errorf("%w: snapshot %q of image %q was removed (ENOENT)", ErrNotFound, img.snap.Name, img.name)
		}
		img.snap = &s
		return nil
	}
	if h.Parent.IsZero() {
		img.parent = nil // flattened (by this opener or another)
	}
	return img.setSnapContext()
}

// Refresh reads the header again, to see the resizes and snapshots of
// other clients. (An Image refreshes by itself before its next call when
// another opener tells it of a change; Refresh is for those that did not.)
func (img *Image) Refresh(ctx context.Context) error {
	if err := img.gate.lock(ctx); err != nil {
		return err
	}
	defer img.gate.unlock()
	img.stale.Store(false)
	if err := img.reload(ctx); err != nil {
		img.stale.Store(true)
		return err
	}
	return nil
}

// enter takes the gate for a call: shared for I/O, exclusively (excl)
// for a header change. It refreshes the header first if another opener
// changed it, and for a change (write) of a writable image takes the
// exclusive lock first; leave undoes it.
func (img *Image) enter(ctx context.Context, excl, write bool) (leave func(), err error) {
	for {
		if img.stale.Load() {
			if img.watchHeader(ctx) == nil { // a lost watch: watch again (else try again next call)
				if err := img.Refresh(ctx); err != nil {
					return nil, err
				}
			}
		}
		take, drop := img.gate.rlock, img.gate.runlock
		if excl {
			take, drop = img.gate.lock, img.gate.unlock
		}
		if err := take(ctx); err != nil {
			return nil, err
		}
		if !write || img.readOnly || img.owns() {
			return drop, nil
		}
		// Acquire with the gate held: a release asked for meanwhile waits
		// for the gate, so this call is done before the lock moves on
		// (no two openers can starve each other).
		if err := img.acquire(ctx); err != nil {
			drop()
			return nil, err
		}
		if !img.stale.Load() {
			return drop, nil
		}
		// The last holder changed the header before it released (its
		// notice set stale): read it before writing.
		drop()
	}
}

// Info describes an image.
type Info struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	// Size in bytes (at the snapshot, for an image opened at one).
	Size        uint64 `json:"size"`
	Order       uint8  `json:"order"`
	ObjectSize  uint64 `json:"object_size"`
	StripeUnit  uint64 `json:"stripe_unit"`
	StripeCount uint64 `json:"stripe_count"`
	// Objects is how many data objects an image of Size bytes spans.
	Objects         uint64    `json:"objects"`
	BlockNamePrefix string    `json:"block_name_prefix"`
	Features        []string  `json:"features"`
	Pool            string    `json:"pool"`
	DataPool        string    `json:"data_pool,omitempty"`
	Created         time.Time `json:"create_timestamp"`
	Snapshots       int       `json:"snapshot_count"`
	// Snap names the snapshot the image is open at, if any.
	Snap     string `json:"snapshot,omitempty"`
	ReadOnly bool   `json:"read_only"`
	// Parent is a clone's parent and overlap; nil for another image.
	Parent *ParentInfo `json:"parent,omitempty"`
}

// featureNames lists the features by librbd's names.
func featureNames(f uint64) []string {
	names := []string{}
	for _, x := range []struct {
		bit  uint64
		name string
	}{{clsrbd.FeatureLayering, "layering"}, {clsrbd.FeatureStripingV2, "striping"}, {clsrbd.FeatureObjectMap, "object-map"}} {
		if f&x.bit != 0 {
			names = append(names, x.name)
		}
	}
	return names
}

// Stat returns the image's information.
func (img *Image) Stat() Info {
	img.hmu.Lock()
	defer img.hmu.Unlock()
	h := img.h
	size := img.size()
	info := Info{Name: img.name, ID: img.id, Size: size, Order: h.Order, ObjectSize: h.ObjectSize(), StripeUnit: h.StripeUnit,
		StripeCount: h.StripeCount, Objects: img.st.Layout().ObjectCount(size), BlockNamePrefix: h.ObjectPrefix,
		Features: featureNames(h.Features), Pool: img.pool.Name(), Created: time.Unix(0, h.Created).UTC(),
		Snapshots: len(h.Snapshots), ReadOnly: img.readOnly, Parent: img.parentInfo()}
	if h.DataPool != clsrbd.NoDataPool {
		info.DataPool = img.data.PoolName()
	}
	if img.snap != nil {
		info.Snap = img.snap.Name
	}
	return info
}

// Size returns the image's size in bytes.
func (img *Image) Size() uint64 {
	img.hmu.Lock()
	defer img.hmu.Unlock()
	return img.size()
}

func (img *Image) size() uint64 {
	if img.snap != nil {
		return img.snap.Size
	}
	return img.h.Size
}

// checkRange fails unless [off, off+n) lies within the image.
func (img *Image) checkRange(what string, off, n uint64) error {
	if size := img.size(); off > size || n > size-off {
		return fmt.Errorf("%w: %s [%d,+%d) of image %q goes past its end (%d bytes) (EINVAL)", ErrInvalid, what, off, n, img.name, size)
	}
	return nil
}

// checkWrite fails for an image that may not change.
func (img *Image) checkWrite(what string) error {
	if img.readOnly {
		at := ""
		if img.snap != nil {
			at = fmt.Sprintf(" at snapshot %q", img.snap.Name)
		}
		return fmt.Errorf("%w: %s: image %q is open read-only%s (EROFS)", ErrReadOnly, what, img.name, at)
	}
	return nil
}

// ReadAt fills buf with the bytes at offset off. Bytes never written read
// as zeros. A range past the image's end is ErrInvalid.
func (img *Image) ReadAt(ctx context.Context, buf []byte, off uint64) error {
	leave, err := img.enter(ctx, false, false)
	if err != nil {
		return err
	}
	defer leave()
	if err := img.checkRange("read", off, uint64(len(buf))); err != nil {
		return err
	}
	if img.cache != nil {
		return img.cachedRead(ctx, buf, off)
	}
	return img.readData(ctx, buf, off)
}

// WriteAt writes data at offset off, and returns once it is durable on
// every replica — or, with the cache on, once it is in the cache (Flush
// makes it durable). A range past the image's end is ErrInvalid.
func (img *Image) WriteAt(ctx context.Context, data []byte, off uint64) error {
	if img.cache != nil {
		return img.cachedWrite(ctx, data, off, false)
	}
	leave, err := img.enter(ctx, false, true)
	if err != nil {
		return err
	}
	defer leave()
	if err := img.checkWrite("write"); err != nil {
		return err
	}
	if err := img.checkRange("write", off, uint64(len(data))); err != nil {
		return err
	}
	return img.writeObjects(ctx, data, off)
}

// writeObjects writes data at off to the data objects (the gate and the
// exclusive lock held).
func (img *Image) writeObjects(ctx context.Context, data []byte, off uint64) error {
	// The map says exists before the write can create an object.
	if err := img.markObjects(ctx, img.objectsOf(off, uint64(len(data)), false), clsrbd.ObjectExists, clsrbd.AnyState); err != nil {
		return err
	}
	return img.writeData(ctx, data, off)
}

// Discard makes [off, off+length) read as zeros and frees what it can:
// data objects it covers whole are removed, parts of others zeroed.
func (img *Image) Discard(ctx context.Context, off, length uint64) error {
	leave, err := img.enter(ctx, false, true)
	if err != nil {
		return err
	}
	defer leave()
	if err := img.checkWrite("discard"); err != nil {
		return err
	}
	if err := img.checkRange("discard", off, length); err != nil {
		return err
	}
	if err := img.cache.dropRange(ctx, off, length); err != nil {
		return err
	}
	defer img.cache.dropClean(off, length)
	return img.discardData(ctx, off, length)
}

// discardData zeroes [off, off+length) (the gate held, the range checked):
// objects removed whole are pending while they go, nonexistent after.
func (img *Image) discardData(ctx context.Context, off, length uint64) error {
	if img.parent != nil {
		return img.discardClone(ctx, off, length)
	}
	removed := img.objectsOf(off, length, true)
	if err := img.markObjects(ctx, removed, clsrbd.ObjectPending, clsrbd.ObjectExists); err != nil {
		return err
	}
	if err := img.st.Zero(ctx, img.ino, off, length); err != nil {
		return fmt.Errorf("rbd: image %q: %w", img.name, classify(err))
	}
	return img.markObjects(ctx, removed, clsrbd.ObjectNonexistent, clsrbd.ObjectPending)
}

// WriteZeroes makes [off, off+length) read as zeros. It is Discard: a
// discarded range always reads back as zeros here (librbd may leave a
// discarded range's data unless asked to zero it).
func (img *Image) WriteZeroes(ctx context.Context, off, length uint64) error {
	return img.Discard(ctx, off, length)
}

// Flush returns once the writes in progress when it was called have
// completed and, with the cache on, once every write that returned before
// it is durable (a failed write-back is returned; its data stays in the
// cache, dirty, for the next Flush). Without the cache writes are durable
// when WriteAt returns, so Flush only waits for the calls of other
// goroutines.
func (img *Image) Flush(ctx context.Context) error {
	if err := img.gate.lock(ctx); err != nil { // taken once every call in progress is done
		return err
	}
	img.gate.unlock()
	if img.cache != nil {
		return img.flushCache(ctx)
	}
	return nil
}

// ResizeOptions qualify Resize.
type ResizeOptions struct {
	// AllowShrink allows a smaller size, which discards the bytes
	// beyond it (kept only by snapshots).
	AllowShrink bool
}

// Resize sets the image's size. Growing adds zeros; shrinking removes or
// truncates the data objects beyond the new size, and is ErrInvalid
// without AllowShrink.
func (img *Image) Resize(ctx context.Context, size uint64, o ResizeOptions) (err error) {
	leave, err := img.enter(ctx, true, true)
	if err != nil {
		return err
	}
	defer img.announce(ctx, &err)
	defer leave()
	if err := img.checkWrite("resize"); err != nil {
		return err
	}
	if err := img.flushLocked(ctx); err != nil {
		return err
	}
	defer img.cache.dropAllClean()
	old := img.h.Size
	switch {
	case size > clsrbd.MaxSize:
		return fmt.Errorf("%w: size %d of image %q is over the largest image (%d bytes) (EINVAL)", ErrInvalid, size, img.name, uint64(clsrbd.MaxSize))
	case size < old && !o.AllowShrink:
		return fmt.Errorf("%w: shrinking image %q from %d to %d bytes discards the data beyond; allow the shrink (--allow-shrink) to do it (EINVAL)", ErrInvalid, img.name, old, size)
	case size == old:
		return nil
	}
	if size < old {
		// A clone's overlap is cut first, so the parent's data never
		// shows past the new end.
		if err := img.cutOverlap(ctx, size); err != nil {
			return err
		}
		// The data goes first: a crash between leaves the old size with
		// zeros at its end, never the new size with stale data beyond.
		if err := img.st.Truncate(ctx, img.ino, old, size); err != nil {
			return fmt.Errorf("rbd: resize %q: %w", img.name, classify(err))
		}
	} else if err := img.resizeObjectMap(ctx, size); err != nil {
		// A larger map first: it may cover more than the image, never less.
		return err
	}
	if _, err := img.pool.io.Exec(ctx, clsrbd.HeaderPrefix+img.id, clsrbd.Class, "set_size", clsrbd.EncodeSize(size)); err != nil {
		return fmt.Errorf("rbd: resize %q: %w", img.name, classify(err))
	}
	if size < old {
		if err := img.resizeObjectMap(ctx, size); err != nil {
			return err
		}
	}
	return img.reload(ctx)
}

// forEachObject runs f on data objects 0 to n-1, at most MaxInFlight at a
// time, and returns the first error.
func (img *Image) forEachObject(ctx context.Context, n uint64, f func(ctx context.Context, name string) error) error {
	return img.parallel(ctx, int(n), func(ctx context.Context, i int) error {
		return f(ctx, dataObject(img.h.ObjectPrefix, uint64(i)))
	})
}

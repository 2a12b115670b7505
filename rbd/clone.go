package rbd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Clones (layering, docs/RBD.md "Clones"): a clone is an image whose
// header names a parent — a protected snapshot of another image, in this
// pool or another — and an overlap, the bytes from its start that read
// through to the parent where the clone has no data object of its own.
// A write to an object the clone lacks first copies the parent's bytes of
// that object up (within the overlap), in the same rados operation that
// creates it (an exclusive create with the whole content), so no object
// ever holds part of what it should and hides the parent's data. A
// discard keeps (empty or zeroed) objects where the parent has data, so
// that the range reads as zeros and not as the parent. The parent lists
// its clones per snapshot in its header (clsrbd "children_<snap>"), so
// that the snapshot cannot be unprotected while they exist.

// maxCloneDepth bounds the chain of parents an open follows (a loop in
// damaged headers must not recurse for ever).
const maxCloneDepth = 32

// ParentInfo describes a clone's parent.
type ParentInfo struct {
	Pool    string `json:"pool"`
	Image   string `json:"image"`
	ImageID string `json:"image_id"`
	Snap    string `json:"snapshot"`
	SnapID  uint64 `json:"snapshot_id"`
	// Overlap is how many bytes from the start read through to the
	// parent where the clone has no data.
	Overlap uint64 `json:"overlap"`
}

// Child names a clone of a snapshot.
type Child struct {
	Pool string `json:"pool"`
	// Image is the clone's name: empty for a clone whose creation did not
	// finish (it has a header and no name; remove it by unprotecting, which
	// drops children whose header is gone, once its header is removed).
	Image   string `json:"image"`
	ImageID string `json:"image_id"`
}

// Clone makes image child in p a clone of snapshot snap of image parent
// in parentPool (nil: p): an image of the snapshot's size that reads as
// the snapshot until written, storing only what is written to it. The
// snapshot must be protected (ErrInvalid otherwise); it cannot be
// unprotected while the clone exists (until Flatten or removal). The
// clone takes the parent's object size and striping unless o says
// otherwise.
func (p *Pool) Clone(ctx context.Context, parentPool *Pool, parent, snap, child string, o CreateOptions) error {
	if parentPool == nil {
		parentPool = p
	}
	if snap == "" {
		return fmt.Errorf("%w: clone %q: a clone's parent is a snapshot; name one (image@snap) (EINVAL)", ErrInvalid, child)
	}
	pimg, err := parentPool.open(ctx, parent, OpenOptions{Snap: snap})
	if err != nil {
		return err
	}
	s := *pimg.snap
	depth := 1
	for pa := pimg.parent; pa != nil; pa = pa.parent {
		depth++
	}
	if depth >= maxCloneDepth {
		return fmt.Errorf("%w: clone %s@%s: the parent is a clone %d deep, the most is %d; flatten it first (EINVAL)", ErrInvalid, parent, snap, depth-1, maxCloneDepth-1)
	}
	if !s.Protected {
		return fmt.Errorf("%w: clone %s@%s: the snapshot is not protected; protect it first (rbd snap protect) (EINVAL)", ErrInvalid, parent, snap)
	}
	if o.Order == 0 {
		o.Order, o.StripeUnit, o.StripeCount = pimg.h.Order, pimg.h.StripeUnit, pimg.h.StripeCount
	}
	spec := clsrbd.ParentSpec{PoolID: parentPool.io.PoolID(), ImageID: pimg.id, SnapID: s.ID, Overlap: s.Size}
	return p.create(ctx, child, s.Size, o, spec, parentPool)
}

// attach records the new image id (in p) as a child of its parent's
// snapshot, in parentPool.
func (p *Pool) attach(ctx context.Context, parentPool *Pool, spec clsrbd.ParentSpec, id string) error {
	req := clsrbd.ChildRequest{SnapID: spec.SnapID, Child: clsrbd.ChildSpec{PoolID: p.io.PoolID(), ImageID: id}}
	if _, err := parentPool.io.Exec(ctx, clsrbd.HeaderPrefix+spec.ImageID, clsrbd.Class, "child_attach", req.Encode()); err != nil {
		if errors.Is(err, rados.ErrInvalid) {
			return fmt.Errorf("%w: the parent snapshot was unprotected meanwhile (EINVAL)", ErrInvalid)
		}
		return fmt.Errorf("attach to the parent: %w", classify(err))
	}
	return nil
}

// detachFrom removes child (pool, id) from the children of snapshot
// spec.SnapID of image spec.ImageID; one already gone is no error.
func detachFrom(ctx context.Context, conn *rados.Conn, spec clsrbd.ParentSpec, child clsrbd.ChildSpec) error {
	pool, err := conn.PoolName(spec.PoolID)
	if err != nil {
		return nil // the parent's pool is gone, and its list with it
	}
	io, err := conn.OpenIOContext(pool)
	if err != nil {
		return fmt.Errorf("parent pool %q: %w", pool, err)
	}
	req := clsrbd.ChildRequest{SnapID: spec.SnapID, Child: child}
	if _, err := io.Exec(ctx, clsrbd.HeaderPrefix+spec.ImageID, clsrbd.Class, "child_detach", req.Encode()); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("detach from the parent: %w", classify(err))
	}
	return nil
}

// nameOf returns the name of image id of the pool ("" if the directory
// has none).
func (p *Pool) nameOf(ctx context.Context, id string) (string, error) {
	got, err := p.io.GetOmapValuesByKeys(ctx, clsrbd.Directory, clsrbd.DirIDKey(id))
	if errors.Is(err, rados.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("rbd: name of image %s in pool %q: %w", id, p.Name(), classify(err))
	}
	return string(got[clsrbd.DirIDKey(id)]), nil
}

// poolByID returns the images of pool id: p itself, or a Pool with p's
// options.
func (p *Pool) poolByID(id int64) (*Pool, error) {
	if id == p.io.PoolID() {
		return p, nil
	}
	name, err := p.conn.PoolName(id)
	if err != nil {
		return nil, fmt.Errorf("%w: pool %d: %w", ErrNotFound, id, err)
	}
	return NewPool(p.conn, name, p.opts)
}

// openParent opens a clone's parent at its snapshot (the header read),
// and the parent's parents; depth counts the clones below img, to refuse
// a loop of parents.
func (img *Image) openParent(ctx context.Context, depth int) error {
	ps := img.h.Parent
	if ps.IsZero() {
		return nil
	}
	if depth >= maxCloneDepth {
		return fmt.Errorf("%w: image %q: a chain of more than %d parents (EINVAL)", ErrInvalid, img.name, maxCloneDepth)
	}
	pp, err := img.pool.poolByID(ps.PoolID)
	if err != nil {
		return fmt.Errorf("rbd: image %q: parent: %w", img.name, err)
	}
	name, err := pp.nameOf(ctx, ps.ImageID)
	if err != nil {
		return err
	}
	if name == "" {
		name = ps.ImageID
	}
	parent, err := pp.openID(ctx, name, ps.ImageID, OpenOptions{ReadOnly: true}, ps.SnapID)
	if err == nil {
		err = parent.openParent(ctx, depth+1)
	}
	if err != nil {
		return fmt.Errorf("rbd: image %q: parent: %w", img.name, err)
	}
	img.parent = parent
	return nil
}

// overlap is how many bytes of the image read through to its parent
// (0 for an image that is not a clone): the snapshot's overlap for an
// image open at one. The gate or hmu held.
func (img *Image) overlap() uint64 {
	switch {
	case img.parent == nil:
		return 0
	case img.snap != nil:
		return min(img.snap.ParentOverlap, img.snap.Size)
	}
	return img.h.Parent.Overlap
}

// parentInfo describes the parent (hmu held); nil for an image that is
// not a clone.
func (img *Image) parentInfo() *ParentInfo {
	if img.parent == nil {
		return nil
	}
	pa := img.parent
	return &ParentInfo{Pool: pa.pool.Name(), Image: pa.name, ImageID: pa.id, Snap: pa.snap.Name, SnapID: pa.snap.ID, Overlap: img.overlap()}
}

// Parent describes the image's parent; nil for an image that is not a
// clone (or no longer: flattened).
func (img *Image) Parent() *ParentInfo {
	img.hmu.Lock()
	defer img.hmu.Unlock()
	return img.parentInfo()
}

// readData fills buf with the image's bytes at off (the gate held, the
// range checked). A clone reads each data object it has, and the parent
// (within the overlap; zeros beyond) where it has none.
func (img *Image) readData(ctx context.Context, buf []byte, off uint64) error {
	if img.parent == nil {
		if err := img.st.ReadAt(ctx, img.ino, buf, off); err != nil {
			return fmt.Errorf("rbd: image %q: %w", img.name, classify(err))
		}
		return nil
	}
	overlap := img.overlap()
	extents := img.st.Layout().FileToExtents(off, uint64(len(buf)))
	err := img.parallel(ctx, len(extents), func(ctx context.Context, i int) error {
		x := extents[i]
		var got []byte
		err := rados.ErrNotFound
		if !img.absentByMap(x.ObjectNo) {
			got, err = img.data.Read(ctx, dataObject(img.h.ObjectPrefix, x.ObjectNo), x.Offset, x.Length)
		}
		if err == nil {
			for _, b := range x.Buffer {
				dst := buf[b.Offset : b.Offset+b.Length]
				clear(dst[copy(dst, got):])
				got = got[min(uint64(len(got)), b.Length):]
			}
			return nil
		}
		if !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("object %d: %w", x.ObjectNo, classify(err))
		}
		for _, b := range x.Buffer {
			dst := buf[b.Offset : b.Offset+b.Length]
			at := off + b.Offset
			var n uint64
			if at < overlap {
				n = min(b.Length, overlap-at)
				if err := img.parent.readData(ctx, dst[:n], at); err != nil {
					return err
				}
			}
			clear(dst[n:])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rbd: image %q: %w", img.name, err)
	}
	return nil
}

// absentByMap reports whether the lock holder's copy of the head's object
// map says data object no does not exist (which it never says of one that
// does), so a clone's read goes to the parent without asking the object.
// False when unknown: not the holder, no trusted map, or an update of the
// map under way (a read does not wait for it).
func (img *Image) absentByMap(no uint64) bool {
	if img.snap != nil || !img.hasObjectMap() {
		return false
	}
	select {
	case img.om.mu <- struct{}{}:
	default:
		return false
	}
	defer img.om.unlock()
	m := &img.om.m
	return img.om.loaded && !img.om.reload.Load() && img.owns() && m.Flags&clsrbd.ObjectMapInvalid == 0 &&
		no < m.Count() && m.State(no) == clsrbd.ObjectNonexistent
}

// gatherExtent returns the bytes of data that object extent x holds.
func gatherExtent(data []byte, x layout.ObjectExtent) []byte {
	if len(x.Buffer) == 1 {
		return data[x.Buffer[0].Offset : x.Buffer[0].Offset+x.Buffer[0].Length]
	}
	buf := make([]byte, 0, x.Length)
	for _, b := range x.Buffer {
		buf = append(buf, data[b.Offset:b.Offset+b.Length]...)
	}
	return buf
}

// inOverlap reports whether any byte of data object no lies within the
// overlap (so that the parent may have data for it).
func (img *Image) inOverlap(no uint64) bool {
	return img.st.Layout().ObjectLen(img.overlap(), no) > 0
}

// wholeObject reports whether object extent x covers its object.
func (img *Image) wholeObject(x layout.ObjectExtent) bool {
	return x.Offset == 0 && x.Length == uint64(img.st.Layout().ObjectSize)
}

// writeData writes data at off (the gate held, the range checked, the
// object map updated). A clone's objects that do not exist yet get the
// parent's data with the write (copyUp).
func (img *Image) writeData(ctx context.Context, data []byte, off uint64) error {
	if img.parent == nil {
		if err := img.st.WriteAt(ctx, img.ino, data, off); err != nil {
			return fmt.Errorf("rbd: image %q: %w", img.name, classify(err))
		}
		return nil
	}
	extents := img.st.Layout().FileToExtents(off, uint64(len(data)))
	err := img.parallel(ctx, len(extents), func(ctx context.Context, i int) error {
		x := extents[i]
		buf := gatherExtent(data, x)
		name := dataObject(img.h.ObjectPrefix, x.ObjectNo)
		if img.wholeObject(x) || !img.inOverlap(x.ObjectNo) {
			return img.data.Write(ctx, name, buf, x.Offset) // nothing of the parent's to keep
		}
		return img.copyUp(ctx, x.ObjectNo,
			func(w *rados.WriteOp) { w.Write(buf, x.Offset) },
			func(w *rados.WriteOp, parent []byte) bool {
				if parent == nil {
					w.Write(buf, x.Offset)
					return true
				}
				content := make([]byte, max(uint64(len(parent)), x.Offset+x.Length))
				copy(content, parent)
				copy(content[x.Offset:], buf)
				w.WriteFull(content)
				return true
			})
	})
	if err != nil {
		return fmt.Errorf("rbd: image %q: %w", img.name, classify(err))
	}
	return nil
}

// copyUp changes data object no of a clone: with change, asserting that
// the object exists; if it does not, it reads the parent's bytes of the
// object (parentData: nil if the parent has none) and creates the object
// exclusively with fresh, which adds the ops that write the whole new
// content (false: nothing to do). Create and content are one rados
// operation, so a crash never leaves an object holding part of the
// parent's data; one created meanwhile (a concurrent write) is changed
// in place.
func (img *Image) copyUp(ctx context.Context, no uint64, change func(*rados.WriteOp), fresh func(w *rados.WriteOp, parent []byte) bool) error {
	name := dataObject(img.h.ObjectPrefix, no)
	for {
		w := rados.NewWriteOp()
		w.AssertExists()
		change(w)
		err := img.data.OperateWrite(ctx, name, w)
		if !errors.Is(err, rados.ErrNotFound) {
			return err
		}
		parent, err := img.parentData(ctx, no)
		if err != nil {
			return err
		}
		w = rados.NewWriteOp()
		w.Create(true)
		if !fresh(w, parent) {
			return nil
		}
		if err := img.data.OperateWrite(ctx, name, w); !errors.Is(err, rados.ErrExists) {
			return err
		}
	}
}

// parentData returns the parent's bytes of data object no of the clone,
// within the overlap, up to the last byte the parent holds data in: nil
// if it holds none there. Only the parent's allocated extents are read.
func (img *Image) parentData(ctx context.Context, no uint64) ([]byte, error) {
	overlap := img.overlap()
	l := img.st.Layout()
	var buf []byte
	var end uint64
	for _, p := range l.ObjectToFile(no, 0, uint64(l.ObjectSize)) {
		if p.FileOff >= overlap {
			continue
		}
		ext, err := img.parent.allocatedExtents(ctx, p.FileOff, min(p.Length, overlap-p.FileOff))
		if err != nil {
			return nil, fmt.Errorf("copy up object %d: %w", no, err)
		}
		for _, e := range ext {
			at := p.ObjectOff + (e.Offset - p.FileOff)
			if buf == nil {
				buf = make([]byte, l.ObjectSize)
			}
			if err := img.parent.readData(ctx, buf[at:at+e.Length], e.Offset); err != nil {
				return nil, fmt.Errorf("copy up object %d: %w", no, err)
			}
			end = max(end, at+e.Length)
		}
	}
	return buf[:end], nil
}

// discardClone makes [off, off+length) of a clone read as zeros (the gate
// held, the range checked): objects outside the overlap as for any image
// (removed whole, or zeroed); objects within it are kept — truncated to
// nothing when covered whole, zeroed in part — and those the clone lacks
// are created (with the parent's data, zeroed) where the parent has data,
// so the parent never shows through a discarded range.
func (img *Image) discardClone(ctx context.Context, off, length uint64) error {
	extents := img.st.Layout().FileToExtents(off, length)
	var kept, removed []uint64
	for _, x := range extents {
		switch {
		case img.inOverlap(x.ObjectNo):
			kept = append(kept, x.ObjectNo)
		case img.wholeObject(x):
			removed = append(removed, x.ObjectNo)
		}
	}
	slices.Sort(kept)
	slices.Sort(removed)
	if err := img.markObjects(ctx, kept, clsrbd.ObjectExists, clsrbd.AnyState); err != nil {
		return err
	}
	if err := img.markObjects(ctx, removed, clsrbd.ObjectPending, clsrbd.ObjectExists); err != nil {
		return err
	}
	err := img.parallel(ctx, len(extents), func(ctx context.Context, i int) error {
		x := extents[i]
		whole := img.wholeObject(x)
		if !img.inOverlap(x.ObjectNo) {
			w := rados.NewWriteOp()
			if whole {
				w.Remove()
			} else {
				w.Zero(x.Offset, x.Length)
			}
			if err := img.data.OperateWrite(ctx, dataObject(img.h.ObjectPrefix, x.ObjectNo), w); err != nil && !errors.Is(err, rados.ErrNotFound) {
				return err
			}
			return nil
		}
		return img.copyUp(ctx, x.ObjectNo,
			func(w *rados.WriteOp) {
				if whole {
					w.Truncate(0)
				} else {
					w.Zero(x.Offset, x.Length)
				}
			},
			func(w *rados.WriteOp, parent []byte) bool {
				if parent == nil || x.Offset >= uint64(len(parent)) {
					return false // the parent has nothing there: the range reads as zeros already
				}
				if !whole {
					content := slices.Clone(parent)
					clear(content[x.Offset:min(x.Offset+x.Length, uint64(len(content)))])
					w.WriteFull(content)
				}
				return true // whole: an empty object
			})
	})
	if err != nil {
		return fmt.Errorf("rbd: image %q: %w", img.name, classify(err))
	}
	return img.markObjects(ctx, removed, clsrbd.ObjectNonexistent, clsrbd.ObjectPending)
}

// cloneExtents is allocatedExtents for a clone: the runs of pieces (the
// pieces of the range asked, in file order) that the clone's objects hold
// (sizes: each existing object's size), and where an object is missing,
// the parent's allocated extents within the overlap — asked of the parent
// once, over the span of the missing runs, and cut to them.
func (img *Image) cloneExtents(ctx context.Context, pieces []layout.Piece, sizes map[uint64]uint64) ([]Extent, error) {
	overlap := img.overlap()
	var own, absent []Extent
	for _, p := range pieces {
		size, ok := sizes[p.ObjectNo]
		switch {
		case ok && size > p.ObjectOff:
			own = appendExtent(own, Extent{Offset: p.FileOff, Length: min(p.Length, size-p.ObjectOff)})
		case !ok && p.FileOff < overlap:
			absent = appendExtent(absent, Extent{Offset: p.FileOff, Length: min(p.Length, overlap-p.FileOff)})
		}
	}
	var inherited []Extent
	if len(absent) > 0 {
		first, last := absent[0], absent[len(absent)-1]
		ext, err := img.parent.allocatedExtents(ctx, first.Offset, last.Offset+last.Length-first.Offset)
		if err != nil {
			return nil, fmt.Errorf("rbd: allocated extents of %q: parent: %w", img.name, err)
		}
		inherited = intersect(ext, absent)
	}
	// Merge the two sorted, disjoint lists.
	out := []Extent{}
	for len(own) > 0 || len(inherited) > 0 {
		if len(inherited) == 0 || len(own) > 0 && own[0].Offset < inherited[0].Offset {
			out, own = appendExtent(out, own[0]), own[1:]
		} else {
			out, inherited = appendExtent(out, inherited[0]), inherited[1:]
		}
	}
	return out, nil
}

// intersect returns the runs both a and b cover (each sorted and
// disjoint), in order.
func intersect(a, b []Extent) []Extent {
	var out []Extent
	for len(a) > 0 && len(b) > 0 {
		start := max(a[0].Offset, b[0].Offset)
		aEnd, bEnd := a[0].Offset+a[0].Length, b[0].Offset+b[0].Length
		if end := min(aEnd, bEnd); end > start {
			out = append(out, Extent{Offset: start, Length: end - start})
		}
		if aEnd <= bEnd {
			a = a[1:]
		} else {
			b = b[1:]
		}
	}
	return out
}

// cutOverlap lowers a clone's overlap to size before a shrink (the gate
// held exclusively); nothing for another image.
func (img *Image) cutOverlap(ctx context.Context, size uint64) error {
	if img.h.Parent.IsZero() || img.h.Parent.Overlap <= size {
		return nil
	}
	if err := img.headerCall(ctx, "set_overlap", clsrbd.EncodeSize(size)); err != nil {
		return fmt.Errorf("rbd: resize %q: cut the parent overlap: %w", img.name, err)
	}
	img.hmu.Lock()
	img.h.Parent.Overlap = size
	img.hmu.Unlock()
	return nil
}

// rollbackOverlap gives a clone rolled back to snapshot s the overlap it
// had then (the gate held exclusively).
func (img *Image) rollbackOverlap(ctx context.Context, s clsrbd.Snapshot) error {
	if img.h.Parent.IsZero() || img.h.Parent.Overlap == s.ParentOverlap {
		return nil
	}
	if err := img.headerCall(ctx, "set_overlap", clsrbd.EncodeSize(s.ParentOverlap)); err != nil {
		return fmt.Errorf("rbd: rollback %q: the parent overlap: %w", img.name, err)
	}
	return nil
}

// Children returns the clones of snapshot snap of the image, sorted by
// pool and image id.
func (img *Image) Children(ctx context.Context, snap string) ([]Child, error) {
	img.hmu.Lock()
	s, err := img.snapshot(snap)
	img.hmu.Unlock()
	if err != nil {
		return nil, err
	}
	cs, err := img.childSpecs(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	out := []Child{}
	for _, c := range cs {
		ch := Child{Pool: fmt.Sprint(c.PoolID), ImageID: c.ImageID}
		if cp, err := img.pool.poolByID(c.PoolID); err == nil {
			ch.Pool = cp.Name()
			if ch.Image, err = cp.nameOf(ctx, c.ImageID); err != nil {
				return nil, err
			}
		}
		out = append(out, ch)
	}
	return out, nil
}

// childSpecs reads the children of snapshot id from the header.
func (img *Image) childSpecs(ctx context.Context, id uint64) ([]clsrbd.ChildSpec, error) {
	out, err := img.pool.io.Exec(ctx, img.headerObject(), clsrbd.Class, "children", clsrbd.ChildRequest{SnapID: id}.Encode())
	if err != nil {
		return nil, fmt.Errorf("rbd: children of %q: %w", img.name, classify(err))
	}
	cs, err := clsrbd.DecodeChildren(out)
	if err != nil {
		return nil, fmt.Errorf("rbd: children of %q: %w", img.name, err)
	}
	return cs, nil
}

// pruneChildren drops the children of snapshot s whose header is gone or
// names another parent (a removal or flatten that stopped between its
// header change and its detach), before an unprotect.
func (img *Image) pruneChildren(ctx context.Context, s clsrbd.Snapshot) error {
	cs, err := img.childSpecs(ctx, s.ID)
	if err != nil {
		return err
	}
	me := clsrbd.ParentSpec{PoolID: img.pool.io.PoolID(), ImageID: img.id, SnapID: s.ID}
	for _, c := range cs {
		// A child whose pool is gone is not there to need the snapshot.
		if cp, err := img.pool.poolByID(c.PoolID); err == nil {
			out, err := cp.io.Exec(ctx, clsrbd.HeaderPrefix+c.ImageID, clsrbd.Class, "get", nil)
			if err == nil {
				h, err := clsrbd.DecodeHeader(out)
				if err != nil {
					continue // a damaged header may still be a clone: keep it
				}
				if p := h.Parent; p.PoolID == me.PoolID && p.ImageID == me.ImageID && p.SnapID == me.SnapID {
					continue // a live child
				}
			} else if !errors.Is(err, rados.ErrNotFound) {
				return fmt.Errorf("rbd: children of %s@%s: child %s: %w", img.name, s.Name, c, classify(err))
			}
		}
		img.pool.log.Info("rbd: dropping a stale child", "image", img.name, "snap", s.Name, "child", c.String())
		if err := detachFrom(ctx, img.pool.conn, me, c); err != nil {
			return fmt.Errorf("rbd: children of %s@%s: %w", img.name, s.Name, err)
		}
	}
	return nil
}

// busyWithChildren is the error of an unprotect refused because snapshot
// s has clones: ErrBusy naming them.
func (img *Image) busyWithChildren(ctx context.Context, s clsrbd.Snapshot, cause error) error {
	cs, err := img.Children(ctx, s.Name)
	if err != nil || len(cs) == 0 {
		return fmt.Errorf("rbd: unprotect snapshot %s@%s: %w", img.name, s.Name, cause)
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Pool + "/" + c.Image
		if c.Image == "" {
			names[i] = c.Pool + "/(id " + c.ImageID + ")"
		}
	}
	return fmt.Errorf("%w: snapshot %s@%s has %d clones (%s); flatten or remove them first (EBUSY)", ErrBusy, img.name, s.Name, len(cs), strings.Join(names, ", "))
}

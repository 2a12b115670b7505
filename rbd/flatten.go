package rbd

import (
	"context"
	"errors"
	"fmt"
	"sync"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
)

// FlattenOptions qualify Flatten.
type FlattenOptions struct {
	// Progress, if set, is told how many of the data objects within the
	// overlap are done, of how many, one call at a time.
	Progress func(done, total uint64)
}

// Flatten makes a clone independent of its parent: every data object
// within the overlap that the clone lacks gets the parent's data (as a
// write's copy-up, MaxInFlight at a time, while I/O goes on), then the
// clone's header forgets the parent and the parent's snapshot forgets the
// clone, so the snapshot can be unprotected and removed. The clone's
// snapshots that read through to the parent keep it: then only the
// head's overlap drops to 0, and the clone detaches from the parent when
// the last such snapshot is removed (as Ceph's). It is ErrInvalid for an
// image that is not a clone.
func (img *Image) Flatten(ctx context.Context, o FlattenOptions) (err error) {
	total, err := img.flattenCopy(ctx, o)
	if err != nil {
		return err
	}
	leave, err := img.enter(ctx, true, true)
	if err != nil {
		return err
	}
	defer img.announce(ctx, &err)
	defer leave()
	if img.parent == nil {
		return nil // flattened meanwhile, by another opener
	}
	if err := img.checkFlatten(); err != nil {
		return err
	}
	if img.h.Parent.Overlap > total {
		return fmt.Errorf("%w: flatten %q: the overlap grew meanwhile (a rollback?); flatten again (EAGAIN)", ErrBusy, img.name)
	}
	if img.snapshotsNeedParent() {
		if img.h.Parent.Overlap == 0 {
			return nil
		}
		if err := img.headerCall(ctx, "set_overlap", clsrbd.EncodeSize(0)); err != nil {
			return fmt.Errorf("rbd: flatten %q: %w", img.name, err)
		}
		return img.reload(ctx)
	}
	return img.detachParent(ctx)
}

// snapshotsNeedParent reports whether a snapshot of the image reads
// through to its parent (the gate held).
func (img *Image) snapshotsNeedParent() bool {
	for _, s := range img.h.Snapshots {
		if s.ParentOverlap > 0 {
			return true
		}
	}
	return false
}

// detachParent removes the parent from the image's header and the image
// from its parent's list (the gate held exclusively). The header first: a
// crash after it leaves the parent listing a child that no longer reads
// it, which the next unprotect drops.
func (img *Image) detachParent(ctx context.Context) error {
	ps := img.h.Parent
	if err := img.headerCall(ctx, "remove_parent", nil); err != nil {
		return fmt.Errorf("rbd: detach %q from its parent: %w", img.name, err)
	}
	if err := detachFrom(ctx, img.pool.conn, ps, clsrbd.ChildSpec{PoolID: img.pool.io.PoolID(), ImageID: img.id}); err != nil {
		return fmt.Errorf("rbd: detach %q from its parent: %w", img.name, err)
	}
	return img.reload(ctx)
}

// detachIfUnused detaches a clone whose head reads nothing of its parent
// (overlap 0: flattened with snapshots, or shrunk to nothing) once no
// snapshot does either: after a snapshot's removal (the gate held
// exclusively).
func (img *Image) detachIfUnused(ctx context.Context) error {
	if img.h.Parent.IsZero() || img.h.Parent.Overlap > 0 || img.snapshotsNeedParent() {
		return nil
	}
	return img.detachParent(ctx)
}

// checkFlatten refuses a flatten of an image that is read-only or not a
// clone (the gate held).
func (img *Image) checkFlatten() error {
	if err := img.checkWrite("flatten"); err != nil {
		return err
	}
	if img.parent == nil {
		return fmt.Errorf("%w: image %q is not a clone; there is nothing to flatten (EINVAL)", ErrInvalid, img.name)
	}
	return nil
}

// flattenCopy copies up every data object of the overlap that the clone
// lacks, with the gate held shared (I/O goes on), and returns the overlap
// it covered.
func (img *Image) flattenCopy(ctx context.Context, o FlattenOptions) (uint64, error) {
	leave, err := img.enter(ctx, false, true)
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := img.checkFlatten(); err != nil {
		return 0, err
	}
	overlap := img.overlap()
	l := img.st.Layout()
	n := l.ObjectCount(overlap)
	var mu sync.Mutex
	var done uint64
	err = img.parallel(ctx, int(n), func(ctx context.Context, i int) error {
		no := uint64(i)
		if err := img.flattenObject(ctx, no); err != nil {
			return fmt.Errorf("object %d: %w", no, err)
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		if o.Progress != nil {
			o.Progress(done, n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("rbd: flatten %q: %w", img.name, classify(err))
	}
	return overlap, nil
}

// flattenObject copies up data object no if the clone lacks it and the
// parent has data for it.
func (img *Image) flattenObject(ctx context.Context, no uint64) error {
	if !img.inOverlap(no) {
		return nil
	}
	name := dataObject(img.h.ObjectPrefix, no)
	if _, err := img.data.Stat(ctx, name); err == nil {
		return nil
	} else if !errors.Is(err, rados.ErrNotFound) {
		return err
	}
	parent, err := img.parentData(ctx, no)
	if err != nil || parent == nil {
		return err
	}
	if err := img.markObjects(ctx, []uint64{no}, clsrbd.ObjectExists, clsrbd.AnyState); err != nil {
		return err
	}
	w := rados.NewWriteOp()
	w.Create(true)
	w.WriteFull(parent)
	if err := img.data.OperateWrite(ctx, name, w); err != nil && !errors.Is(err, rados.ErrExists) {
		return err // exists: written meanwhile, with its copy-up
	}
	return nil
}

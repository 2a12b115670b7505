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
// clone, so the snapshot can be unprotected and removed. It is ErrInvalid
// for an image that is not a clone, ErrBusy for a clone with snapshots
// (they read through to the parent too: remove them first).
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
	if img.overlap() > total {
		return fmt.Errorf("%w: flatten %q: the overlap grew meanwhile (a rollback?); flatten again (EAGAIN)", ErrBusy, img.name)
	}
	// The header first: a crash after it leaves the parent listing a
	// child that no longer reads it, which the next unprotect drops.
	ps := img.h.Parent
	if err := img.headerCall(ctx, "remove_parent", nil); err != nil {
		return fmt.Errorf("rbd: flatten %q: %w", img.name, err)
	}
	if err := detachFrom(ctx, img.pool.conn, ps, clsrbd.ChildSpec{PoolID: img.pool.io.PoolID(), ImageID: img.id}); err != nil {
		return fmt.Errorf("rbd: flatten %q: %w", img.name, err)
	}
	return img.reload(ctx)
}

// checkFlatten refuses a flatten of an image that is read-only, not a
// clone, or has snapshots (the gate held).
func (img *Image) checkFlatten() error {
	if err := img.checkWrite("flatten"); err != nil {
		return err
	}
	if img.parent == nil {
		return fmt.Errorf("%w: image %q is not a clone; there is nothing to flatten (EINVAL)", ErrInvalid, img.name)
	}
	if n := len(img.h.Snapshots); n > 0 {
		return fmt.Errorf("%w: clone %q has %d snapshots, which read through to its parent too; remove them before flattening (EBUSY)", ErrBusy, img.name, n)
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

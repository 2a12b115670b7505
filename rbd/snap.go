package rbd

import (
	"context"
	"errors"
	"fmt"
	"time"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
)

// SnapInfo is one snapshot of an image.
type SnapInfo struct {
	ID        uint64    `json:"id"`
	Name      string    `json:"name"`
	Size      uint64    `json:"size"`
	Protected bool      `json:"protected"`
	Created   time.Time `json:"timestamp"`
}

// SnapList returns the image's snapshots, oldest first.
func (img *Image) SnapList() []SnapInfo {
	img.hmu.Lock()
	defer img.hmu.Unlock()
	out := []SnapInfo{}
	for _, s := range img.h.Snapshots {
		out = append(out, SnapInfo{ID: s.ID, Name: s.Name, Size: s.Size, Protected: s.Protected, Created: time.Unix(0, s.Created).UTC()})
	}
	return out
}

// snapshot returns the snapshot named name (mu held).
func (img *Image) snapshot(name string) (clsrbd.Snapshot, error) {
	s, ok := img.h.Snap(name)
	if !ok {
		return s, fmt.Errorf("%w: image %q has no snapshot %q (ENOENT)", ErrNotFound, img.name, name)
	}
	return s, nil
}

// headerCall runs a write method of the rbd class on the header.
func (img *Image) headerCall(ctx context.Context, method string, in []byte) error {
	_, err := img.pool.io.Exec(ctx, clsrbd.HeaderPrefix+img.id, clsrbd.Class, method, in)
	return classify(err)
}

// SnapCreate takes a snapshot named name: the image as it is once the
// writes in progress have completed. It is ErrExists if the image has a
// snapshot of that name.
func (img *Image) SnapCreate(ctx context.Context, name string) (err error) {
	leave, err := img.enter(ctx, true, true)
	if err != nil {
		return err
	}
	defer img.announce(ctx, &err)
	defer leave()
	if err := img.checkWrite("snapshot"); err != nil {
		return err
	}
	if err := img.flushLocked(ctx); err != nil { // the snapshot has what was written before it
		return err
	}
	if err := checkName("snapshot", name); err != nil {
		return err
	}
	if _, ok := img.h.Snap(name); ok {
		return fmt.Errorf("%w: image %q has a snapshot %q (EEXIST)", ErrExists, img.name, name)
	}
	id, err := img.data.SelfManagedSnapCreate(ctx)
	if err != nil {
		return fmt.Errorf("rbd: snapshot %s@%s: allocate an id in pool %q: %w", img.name, name, img.data.PoolName(), classify(err))
	}
	// The snapshot's object map first: a snapshot never lacks one.
	if err := img.copyObjectMap(ctx, 0, id, img.st.Layout().ObjectCount(img.h.Size)); err != nil {
		_ = img.data.SelfManagedSnapRemove(ctx, id) // best effort: give the unused id back
		return fmt.Errorf("rbd: snapshot %s@%s: %w", img.name, name, err)
	}
	if err := img.headerCall(ctx, "snap_add", clsrbd.SnapRequest{ID: id, Name: name}.Encode()); err != nil {
		_ = img.removeObjectMap(ctx, id)            // best effort, as below
		_ = img.data.SelfManagedSnapRemove(ctx, id) // best effort: give the unused id back
		return fmt.Errorf("rbd: snapshot %s@%s: %w", img.name, name, err)
	}
	return img.reload(ctx)
}

// SnapRemove removes snapshot name; the OSDs then trim the data only it
// kept. It is ErrBusy while the snapshot is protected.
func (img *Image) SnapRemove(ctx context.Context, name string) (err error) {
	leave, err := img.enter(ctx, true, true)
	if err != nil {
		return err
	}
	defer img.announce(ctx, &err)
	defer leave()
	if err := img.checkWrite("remove snapshot"); err != nil {
		return err
	}
	s, err := img.snapshot(name)
	if err != nil {
		return err
	}
	if s.Protected {
		return fmt.Errorf("%w: snapshot %s@%s is protected; unprotect it first (EBUSY)", ErrBusy, img.name, name)
	}
	if err := img.headerCall(ctx, "snap_remove", clsrbd.SnapRequest{ID: s.ID}.Encode()); err != nil {
		return fmt.Errorf("rbd: remove snapshot %s@%s: %w", img.name, name, err)
	}
	if err := img.reload(ctx); err != nil {
		return err
	}
	if err := img.data.SelfManagedSnapRemove(ctx, s.ID); err != nil {
		return fmt.Errorf("rbd: remove snapshot %s@%s: release id %d in pool %q: %w", img.name, name, s.ID, img.data.PoolName(), classify(err))
	}
	if err := img.removeObjectMap(ctx, s.ID); err != nil {
		return err
	}
	// A flattened clone leaves its parent with its last snapshot that
	// read through to it.
	return img.detachIfUnused(ctx)
}

// SnapProtect protects snapshot name from removal (clones will need it).
// It is ErrInvalid if it is protected already.
func (img *Image) SnapProtect(ctx context.Context, name string) error {
	return img.setProtected(ctx, name, true)
}

// SnapUnprotect lets snapshot name be removed again. It is ErrInvalid if
// it is not protected.
func (img *Image) SnapUnprotect(ctx context.Context, name string) error {
	return img.setProtected(ctx, name, false)
}

func (img *Image) setProtected(ctx context.Context, name string, protected bool) (err error) {
	leave, err := img.enter(ctx, true, true)
	if err != nil {
		return err
	}
	defer img.announce(ctx, &err)
	defer leave()
	if err := img.checkWrite("protect snapshot"); err != nil {
		return err
	}
	s, err := img.snapshot(name)
	if err != nil {
		return err
	}
	if s.Protected == protected {
		state := "protected"
		if !protected {
			state = "not protected"
		}
		return fmt.Errorf("%w: snapshot %s@%s is %s already (EINVAL)", ErrInvalid, img.name, name, state)
	}
	if !protected {
		if err := img.pruneChildren(ctx, s); err != nil {
			return err
		}
	}
	if err := img.headerCall(ctx, "snap_protect", clsrbd.SnapRequest{ID: s.ID, Protected: protected}.Encode()); err != nil {
		if !protected && errors.Is(err, ErrBusy) {
			return img.busyWithChildren(ctx, s, err)
		}
		return fmt.Errorf("rbd: protect snapshot %s@%s: %w", img.name, name, err)
	}
	return img.reload(ctx)
}

// SnapRollback makes the image what it was at snapshot name: every data
// object rolled back to its version then (those that did not exist then
// removed), and the size the snapshot's. The versions it replaces stay in
// the snapshots taken after name.
func (img *Image) SnapRollback(ctx context.Context, name string) (err error) {
	leave, err := img.enter(ctx, true, true)
	if err != nil {
		return err
	}
	defer img.announce(ctx, &err)
	defer leave()
	if err := img.checkWrite("rollback"); err != nil {
		return err
	}
	if err := img.flushLocked(ctx); err != nil {
		return err
	}
	defer img.cache.dropAllClean()
	s, err := img.snapshot(name)
	if err != nil {
		return err
	}
	if err := img.invalidateObjectMap(ctx); err != nil {
		return err
	}
	l := img.st.Layout()
	n := max(l.ObjectCount(img.h.Size), l.ObjectCount(s.Size))
	err = img.forEachObject(ctx, n, func(ctx context.Context, object string) error {
		if err := img.data.Rollback(ctx, object, s.ID); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("object %s: %w", object, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rbd: rollback %s to %s: %w", img.name, name, classify(err))
	}
	if s.Size != img.h.Size {
		if err := img.headerCall(ctx, "set_size", clsrbd.EncodeSize(s.Size)); err != nil {
			return fmt.Errorf("rbd: rollback %s to %s: %w", img.name, name, err)
		}
	}
	if err := img.rollbackOverlap(ctx, s); err != nil {
		return err
	}
	// The head's objects are now the snapshot's: so is its map.
	if err := img.copyObjectMap(ctx, s.ID, 0, l.ObjectCount(s.Size)); err != nil {
		return fmt.Errorf("rbd: rollback %s to %s: %w", img.name, name, err)
	}
	return img.reload(ctx)
}

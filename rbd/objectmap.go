package rbd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
)

// The object map (docs/RBD.md "The object map"): for an image with the
// object-map feature, which data objects exist, kept by the holder of the
// exclusive lock in rbd_object_map.<id> (and copied at each snapshot to
// rbd_object_map.<id>.<snap>). The holder loads it when it takes the lock
// and updates it through the rbd class before a write can create an
// object (exists) and around a discard that removes one (pending, then
// nonexistent), so it never says nonexistent for an object that exists.
// Readers (AllocatedExtents, DiskUsage, export) skip the objects it says
// do not exist; a map flagged invalid is not trusted until
// RebuildObjectMap.

// objectMap is the lock holder's copy of the head's map.
type objectMap struct {
	// mu is a token (a channel of one) held across an update's call, so
	// updates apply in order; a waiter's context ends its wait.
	mu     chan struct{}
	m      clsrbd.ObjectMap
	loaded bool
	// reload is set when the lock is taken: the last holder changed the
	// map, so the next update reads it first.
	reload atomic.Bool
}

// lock takes the map's token, or fails when ctx ends.
func (om *objectMap) lock(ctx context.Context) error {
	select {
	case om.mu <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (om *objectMap) unlock() { <-om.mu }

// hasObjectMap reports whether the image has the feature (gate held).
func (img *Image) hasObjectMap() bool { return img.h.Features&clsrbd.FeatureObjectMap != 0 }

// mapObject names the map of the head (snap 0) or a snapshot.
func (img *Image) mapObject(snap uint64) string { return clsrbd.ObjectMapName(img.id, snap) }

// loadObjectMap reads the head's map once the lock is taken. A map that
// is missing or does not decode is replaced by one that says every object
// may exist, flagged invalid; one of the wrong size is resized (an object
// past the image's end cannot exist; one past the map's end might, and
// flags it invalid).
//
// It runs at the first update after the lock was taken (om.mu held, the
// gate held).
func (img *Image) loadObjectMap(ctx context.Context) error {
	count := img.st.Layout().ObjectCount(img.h.Size)
	img.om.loaded = false
	m, err := img.readObjectMap(ctx, 0)
	switch {
	case err == nil && m.Count() >= count:
		if m.Count() > count {
			if _, err := img.pool.io.Exec(ctx, img.mapObject(0), clsrbd.Class, "object_map_resize", clsrbd.EncodeSize(count)); err != nil {
				return fmt.Errorf("rbd: image %q: resize the object map: %w", img.name, classify(err))
			}
			m.Resize(count)
		}
	case err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, errBadObjectMap):
		img.pool.log.Warn("rbd: object map invalid; rebuild it (cuttle rbd object-map rebuild)", "image", img.name, "err", err)
		old := m
		m = clsrbd.NewObjectMap(count)
		for n := range count {
			st := clsrbd.ObjectExists
			if err == nil && n < old.Count() {
				st = old.State(n)
			}
			m.Set(n, st)
		}
		m.Flags |= clsrbd.ObjectMapInvalid
		if err := img.pool.io.WriteFull(ctx, img.mapObject(0), m.Encode()); err != nil {
			return fmt.Errorf("rbd: image %q: write the object map: %w", img.name, classify(err))
		}
	default:
		return err
	}
	img.om.m, img.om.loaded = m, true
	return nil
}

// errBadObjectMap: a map object that does not decode.
var errBadObjectMap = errors.New("bad object map")

// readObjectMap reads the map of the head (snap 0) or a snapshot:
// ErrNotFound if there is none, errBadObjectMap if it does not decode.
func (img *Image) readObjectMap(ctx context.Context, snap uint64) (clsrbd.ObjectMap, error) {
	b, err := img.pool.io.Read(ctx, img.mapObject(snap), 0, 0)
	if err != nil {
		return clsrbd.ObjectMap{}, fmt.Errorf("rbd: image %q: read the object map: %w", img.name, classify(err))
	}
	m, err := clsrbd.DecodeObjectMap(b)
	if err != nil {
		return clsrbd.ObjectMap{}, fmt.Errorf("rbd: image %q: %w: %w", img.name, errBadObjectMap, err)
	}
	return m, nil
}

// trustedObjectMap returns the map to answer from, for the head or the
// snapshot the image is open at: the holder's copy, or the one stored;
// ok is false when there is none to trust (no feature, none stored,
// flagged invalid).
func (img *Image) trustedObjectMap(ctx context.Context) (m clsrbd.ObjectMap, ok bool) {
	if !img.hasObjectMap() {
		return m, false
	}
	var snap uint64
	if img.snap != nil {
		snap = img.snap.ID
	} else {
		if err := img.om.lock(ctx); err != nil {
			return m, false
		}
		loaded := img.om.loaded && !img.om.reload.Load() && img.owns()
		if loaded {
			m = img.om.m.Clone()
		}
		img.om.unlock()
		if loaded {
			return m, m.Flags&clsrbd.ObjectMapInvalid == 0
		}
	}
	m, err := img.readObjectMap(ctx, snap)
	if err != nil {
		return m, false
	}
	return m, m.Flags&clsrbd.ObjectMapInvalid == 0
}

// markObjects sets the objects nos (sorted) to state, those that are in
// state expect (clsrbd.AnyState: any) and not in state already, first on
// the OSD and then in the holder's copy: one call per run of adjacent
// objects. It does nothing for an image without the feature.
func (img *Image) markObjects(ctx context.Context, nos []uint64, state, expect uint8) error {
	if !img.hasObjectMap() || len(nos) == 0 {
		return nil
	}
	if err := img.om.lock(ctx); err != nil {
		return err
	}
	defer img.om.unlock()
	if img.om.reload.Swap(false) || !img.om.loaded {
		if err := img.loadObjectMap(ctx); err != nil {
			img.om.reload.Store(true)
			return err
		}
	}
	m := &img.om.m
	change := func(n uint64) bool {
		s := m.State(n)
		return n < m.Count() && s != state && (expect == clsrbd.AnyState || s == expect)
	}
	for i := 0; i < len(nos); {
		if !change(nos[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(nos) && nos[j] == nos[j-1]+1 && change(nos[j]) {
			j++
		}
		u := clsrbd.ObjectMapUpdate{Start: nos[i], End: nos[j-1] + 1, State: state, Expect: expect}
		if _, err := img.pool.io.Exec(ctx, img.mapObject(0), clsrbd.Class, "object_map_update", u.Encode()); err != nil {
			return fmt.Errorf("rbd: image %q: update the object map: %w", img.name, classify(err))
		}
		for n := u.Start; n < u.End; n++ {
			m.Set(n, state)
		}
		i = j
	}
	return nil
}

// objectsOf returns the data objects [off, off+length) touches, sorted;
// whole lists only those it covers entirely (a discard removes them).
func (img *Image) objectsOf(off, length uint64, whole bool) []uint64 {
	l := img.st.Layout()
	var nos []uint64
	for _, x := range l.FileToExtents(off, length) {
		if whole && (x.Offset != 0 || x.Length != uint64(l.ObjectSize)) {
			continue
		}
		nos = append(nos, x.ObjectNo)
	}
	slices.Sort(nos)
	return slices.Compact(nos)
}

// resizeObjectMap makes the stored map and the holder's copy cover the
// objects of size bytes.
func (img *Image) resizeObjectMap(ctx context.Context, size uint64) error {
	if !img.hasObjectMap() {
		return nil
	}
	count := img.st.Layout().ObjectCount(size)
	if count > clsrbd.MaxObjectMapObjects {
		return fmt.Errorf("%w: %d objects are over the object map's largest (%d); use larger objects (EINVAL)", ErrInvalid, count, clsrbd.MaxObjectMapObjects)
	}
	if err := img.om.lock(ctx); err != nil {
		return err
	}
	defer img.om.unlock()
	if _, err := img.pool.io.Exec(ctx, img.mapObject(0), clsrbd.Class, "object_map_resize", clsrbd.EncodeSize(count)); err != nil {
		return fmt.Errorf("rbd: image %q: resize the object map: %w", img.name, classify(err))
	}
	if img.om.loaded {
		img.om.m.Resize(count)
	}
	return nil
}

// copyObjectMap writes the map of snapshot from (0: the head) as the map
// of to: at a snapshot (head → snap) and a rollback (snap → head). A
// source that cannot be read gives an invalid map that says every object
// may exist.
func (img *Image) copyObjectMap(ctx context.Context, from, to uint64, count uint64) error {
	if !img.hasObjectMap() {
		return nil
	}
	if err := img.om.lock(ctx); err != nil {
		return err
	}
	defer img.om.unlock()
	var m clsrbd.ObjectMap
	if from == 0 && img.om.loaded && !img.om.reload.Load() {
		m = img.om.m.Clone()
	} else {
		var err error
		if m, err = img.readObjectMap(ctx, from); err != nil {
			img.pool.log.Warn("rbd: no object map to copy; the copy is invalid", "image", img.name, "err", err)
			m = clsrbd.NewObjectMap(count)
			for n := range count {
				m.Set(n, clsrbd.ObjectExists)
			}
			m.Flags |= clsrbd.ObjectMapInvalid
		}
	}
	if err := img.pool.io.WriteFull(ctx, img.mapObject(to), m.Encode()); err != nil {
		return fmt.Errorf("rbd: image %q: write the object map: %w", img.name, classify(err))
	}
	if to == 0 {
		img.om.m, img.om.loaded = m, true
	}
	return nil
}

// removeObjectMap deletes the map of a snapshot (or the head).
func (img *Image) removeObjectMap(ctx context.Context, snap uint64) error {
	if err := img.pool.io.Delete(ctx, img.mapObject(snap)); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("rbd: image %q: remove the object map: %w", img.name, classify(err))
	}
	return nil
}

// RebuildObjectMap makes the head's object map anew from the data objects
// that exist (one stat each) and clears its invalid flag. It takes the
// exclusive lock; ErrInvalid for an image without the object-map feature.
func (img *Image) RebuildObjectMap(ctx context.Context) (err error) {
	leave, err := img.enter(ctx, true, true)
	if err != nil {
		return err
	}
	defer leave()
	if err := img.checkWrite("rebuild the object map"); err != nil {
		return err
	}
	if !img.hasObjectMap() {
		return fmt.Errorf("%w: image %q has no object map (the object-map feature) (EINVAL)", ErrInvalid, img.name)
	}
	count := img.st.Layout().ObjectCount(img.h.Size)
	m := clsrbd.NewObjectMap(count)
	var mu sync.Mutex
	err = img.parallel(ctx, int(count), func(ctx context.Context, i int) error {
		_, err := img.data.Stat(ctx, dataObject(img.h.ObjectPrefix, uint64(i)))
		if errors.Is(err, rados.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		mu.Lock()
		m.Set(uint64(i), clsrbd.ObjectExists)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("rbd: rebuild the object map of %q: %w", img.name, classify(err))
	}
	if err := img.om.lock(ctx); err != nil {
		return err
	}
	defer img.om.unlock()
	if err := img.pool.io.WriteFull(ctx, img.mapObject(0), m.Encode()); err != nil {
		return fmt.Errorf("rbd: rebuild the object map of %q: %w", img.name, classify(err))
	}
	img.om.m, img.om.loaded = m, true
	return nil
}

// Usage is an image's space: what it may hold and what it holds.
type Usage struct {
	Name string `json:"name"`
	Snap string `json:"snapshot,omitempty"`
	// Provisioned is the image's size.
	Provisioned uint64 `json:"provisioned_size"`
	// Used is the bytes of its data objects that exist, counted to the
	// image's end: from the object map (each existing object's share of
	// the image) or, without a trusted map, from each object's size.
	Used uint64 `json:"used_size"`
	// FromObjectMap says the object map answered (else a stat an object).
	FromObjectMap bool `json:"from_object_map"`
}

// DiskUsage returns the image's usage (at the snapshot it is open at).
func (img *Image) DiskUsage(ctx context.Context) (Usage, error) {
	leave, err := img.enter(ctx, false, false)
	if err != nil {
		return Usage{}, err
	}
	defer leave()
	size := img.size()
	l := img.st.Layout()
	count := l.ObjectCount(size)
	u := Usage{Name: img.name, Provisioned: size}
	if img.snap != nil {
		u.Snap = img.snap.Name
	}
	if m, ok := img.trustedObjectMap(ctx); ok {
		u.FromObjectMap = true
		for n := range count {
			if m.State(n) != clsrbd.ObjectNonexistent {
				u.Used += l.ObjectLen(size, n)
			}
		}
		return u, nil
	}
	var mu sync.Mutex
	err = img.parallel(ctx, int(count), func(ctx context.Context, i int) error {
		st, err := img.data.Stat(ctx, dataObject(img.h.ObjectPrefix, uint64(i)))
		if errors.Is(err, rados.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		mu.Lock()
		u.Used += min(st.Size, l.ObjectLen(size, uint64(i)))
		mu.Unlock()
		return nil
	})
	if err != nil {
		return Usage{}, fmt.Errorf("rbd: disk usage of %q: %w", img.name, classify(err))
	}
	return u, nil
}

// invalidateObjectMap flags the head's map invalid: before a change that
// cannot keep it right step by step (a rollback, which then writes the
// snapshot's map over it), so a crash midway leaves it distrusted.
func (img *Image) invalidateObjectMap(ctx context.Context) error {
	if !img.hasObjectMap() {
		return nil
	}
	u := clsrbd.ObjectMapUpdate{Expect: clsrbd.AnyState, SetFlags: clsrbd.ObjectMapInvalid}
	_, err := img.pool.io.Exec(ctx, img.mapObject(0), clsrbd.Class, "object_map_update", u.Encode())
	if err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("rbd: image %q: flag the object map invalid: %w", img.name, classify(err))
	}
	if err := img.om.lock(ctx); err != nil {
		return err
	}
	img.om.m.Flags |= clsrbd.ObjectMapInvalid
	img.om.unlock()
	return nil
}

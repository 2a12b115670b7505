package memstore

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// view is a transaction's copy-on-write picture of the store: the
// collections it has looked at or changed, over the store's unchanged
// state. The store is locked for writing while a view exists.
type view struct {
	s     *Store
	colls map[objectstore.CollectionID]*collView
	grown uint64 // pages this transaction has allocated (a memory guard)
}

// collView is one collection as the transaction sees it.
type collView struct {
	exists bool
	// fresh: the collection was created or removed by this transaction, so
	// the store's objects in it are not visible.
	fresh bool
	objs  map[objid.ID]*object // objects the transaction owns; nil: removed
	count int                  // objects in the collection as the view sees it
}

func newView(s *Store) *view {
	return &view{s: s, colls: map[objectstore.CollectionID]*collView{}}
}

func (v *view) coll(c objectstore.CollectionID) *collView {
	cv := v.colls[c]
	if cv == nil {
		cv = &collView{objs: map[objid.ID]*object{}}
		if bc := v.s.colls[c]; bc != nil {
			cv.exists, cv.count = true, len(bc.objs)
		}
		v.colls[c] = cv
	}
	return cv
}

// existing returns c's view, or ErrCollectionNotFound.
func (v *view) existing(c objectstore.CollectionID) (*collView, error) {
	cv := v.coll(c)
	if !cv.exists {
		return nil, fmt.Errorf("collection %v: %w", c, objectstore.ErrCollectionNotFound)
	}
	return cv, nil
}

// lookup returns o as the view sees it; the caller must not change it.
func (v *view) lookup(c objectstore.CollectionID, o objid.ID) (*object, error) {
	cv, err := v.existing(c)
	if err != nil {
		return nil, err
	}
	if obj, ok := cv.objs[o]; ok && obj != nil {
		return obj, nil
	} else if !ok && !cv.fresh {
		if obj := v.s.colls[c].objs[o]; obj != nil {
			return obj, nil
		}
	}
	return nil, fmt.Errorf("%v %v: %w", c, o, objectstore.ErrNotFound)
}

// mutable returns a copy of o that the transaction owns, creating o if it
// is missing and create is set.
func (v *view) mutable(c objectstore.CollectionID, o objid.ID, create bool) (*object, error) {
	cv, err := v.existing(c)
	if err != nil {
		return nil, err
	}
	if obj := cv.objs[o]; obj != nil {
		return obj, nil
	}
	base, err := v.lookup(c, o)
	switch {
	case err == nil:
		cv.objs[o] = base.clone()
	case create && errors.Is(err, objectstore.ErrNotFound):
		cv.objs[o] = newObject()
		cv.count++
	default:
		return nil, err
	}
	return cv.objs[o], nil
}

// put makes obj (which the caller gives up) o, replacing any object there.
func (v *view) put(c objectstore.CollectionID, o objid.ID, obj *object) error {
	if _, err := v.lookup(c, o); errors.Is(err, objectstore.ErrNotFound) {
		v.colls[c].count++
	} else if err != nil {
		return err
	}
	v.colls[c].objs[o] = obj
	return nil
}

func (v *view) remove(c objectstore.CollectionID, o objid.ID) error {
	if _, err := v.lookup(c, o); err != nil {
		return err
	}
	cv := v.colls[c]
	cv.objs[o] = nil
	cv.count--
	return nil
}

// apply runs one validated operation against the view.
func (v *view) apply(op *objectstore.Op) error {
	c, o := op.Collection, op.Object
	var obj *object
	var err error
	switch op.Code {
	case objectstore.OpTouch:
		_, err = v.mutable(c, o, true)
	case objectstore.OpWrite:
		if obj, err = v.mutable(c, o, true); err == nil {
			v.grown += obj.write(op.Offset, op.Data)
		}
	case objectstore.OpZero:
		if obj, err = v.mutable(c, o, true); err == nil {
			obj.zero(op.Offset, op.Length)
		}
	case objectstore.OpTruncate:
		if obj, err = v.mutable(c, o, false); err == nil {
			obj.truncate(op.Offset)
		}
	case objectstore.OpRemove:
		err = v.remove(c, o)
	case objectstore.OpClone:
		if obj, err = v.lookup(c, o); err == nil && o != op.Dest {
			v.grown += uint64(len(obj.pages))
			err = v.put(c, op.Dest, obj.clone())
		}
	case objectstore.OpCloneRange:
		err = v.cloneRange(op)
	case objectstore.OpMove:
		err = v.move(op)
	case objectstore.OpSplitCollection:
		err = v.split(op)
	case objectstore.OpCreateCollection, objectstore.OpRemoveCollection:
		err = v.collectionOp(op)
	default:
		err = v.applyMeta(op)
	}
	if err == nil && v.grown > v.s.total/PageSize {
		err = fmt.Errorf("transaction allocates %d pages: %w", v.grown, objectstore.ErrNoSpace)
	}
	return err
}

// applyMeta runs the attribute and omap operations.
func (v *view) applyMeta(op *objectstore.Op) error {
	create := op.Code == objectstore.OpSetAttrs || op.Code == objectstore.OpOmapSetKeys || op.Code == objectstore.OpOmapSetHeader
	obj, err := v.mutable(op.Collection, op.Object, create)
	if err != nil {
		return err
	}
	switch op.Code {
	case objectstore.OpSetAttrs:
		for k, val := range op.Attrs {
			obj.attrs[k] = bytes.Clone(val)
		}
	case objectstore.OpRmAttr:
		delete(obj.attrs, op.Key)
	case objectstore.OpOmapSetKeys:
		for k, val := range op.Attrs {
			obj.omap[k] = bytes.Clone(val)
		}
	case objectstore.OpOmapRmKeys:
		for _, k := range op.Keys {
			delete(obj.omap, k)
		}
	case objectstore.OpOmapRmKeyRange:
		for k := range obj.omap {
			if k >= op.Key && k < op.EndKey {
				delete(obj.omap, k)
			}
		}
	case objectstore.OpOmapClear:
		obj.omap, obj.header = map[string][]byte{}, nil
	case objectstore.OpOmapSetHeader:
		obj.header = bytes.Clone(op.Data)
	default:
		return fmt.Errorf("%w: op code %d", objectstore.ErrInvalid, op.Code)
	}
	return nil
}

// cloneRange zeroes the destination range, then writes the source's
// allocated bytes into it, so holes stay holes. The source is read before
// the destination changes, which makes an overlapping copy a memmove.
func (v *view) cloneRange(op *objectstore.Op) error {
	src, err := v.lookup(op.Collection, op.Object)
	if err != nil {
		return err
	}
	if op.Offset > src.size || op.Length > src.size-op.Offset {
		return fmt.Errorf("%w: source range %d+%d beyond size %d", objectstore.ErrInvalid, op.Offset, op.Length, src.size)
	}
	exts := src.extents(op.Offset, op.Length)
	if op.Length == 0 {
		exts = nil
	}
	data := make([][]byte, len(exts))
	for i, e := range exts {
		data[i] = src.read(e.Offset, e.Length)
	}
	dst, err := v.mutable(op.Collection, op.Dest, true)
	if err != nil {
		return err
	}
	dst.zero(op.DestOffset, op.Length)
	for i, e := range exts {
		v.grown += dst.write(op.DestOffset+e.Offset-op.Offset, data[i])
	}
	return nil
}

// move renames o to op.Dest in op.DestCollection, replacing any object
// there.
func (v *view) move(op *objectstore.Op) error {
	obj, err := v.lookup(op.Collection, op.Object)
	if err != nil {
		return err
	}
	if _, err := v.existing(op.DestCollection); err != nil {
		return err
	}
	if op.Collection == op.DestCollection && op.Object == op.Dest {
		return nil
	}
	if err := v.remove(op.Collection, op.Object); err != nil {
		return err
	}
	return v.put(op.DestCollection, op.Dest, obj.clone())
}

// split moves the objects of op.Collection that the split selects to
// op.DestCollection.
func (v *view) split(op *objectstore.Op) error {
	from, to := op.Collection, op.DestCollection
	cv, err := v.existing(from)
	if err != nil {
		return err
	}
	if _, err := v.existing(to); err != nil {
		return err
	}
	bits, rem := uint8(op.Offset), uint32(op.Length)
	var moving []objid.ID
	for o, obj := range cv.objs {
		if obj != nil && objectstore.SplitMatches(from, o, bits, rem) {
			moving = append(moving, o)
		}
	}
	if bc := v.s.colls[from]; bc != nil && !cv.fresh {
		for o := range bc.objs {
			if _, mine := cv.objs[o]; !mine && objectstore.SplitMatches(from, o, bits, rem) {
				moving = append(moving, o)
			}
		}
	}
	for _, o := range moving {
		obj, err := v.lookup(from, o)
		if err != nil {
			return err
		}
		if err := v.remove(from, o); err != nil {
			return err
		}
		if err := v.put(to, o, obj.clone()); err != nil {
			return err
		}
	}
	return nil
}

func (v *view) collectionOp(op *objectstore.Op) error {
	cv := v.coll(op.Collection)
	switch {
	case op.Code == objectstore.OpCreateCollection && cv.exists:
		return fmt.Errorf("collection %v: %w", op.Collection, objectstore.ErrExists)
	case op.Code == objectstore.OpRemoveCollection && !cv.exists:
		return fmt.Errorf("collection %v: %w", op.Collection, objectstore.ErrCollectionNotFound)
	case op.Code == objectstore.OpRemoveCollection && cv.count > 0:
		return fmt.Errorf("collection %v holds %d objects: %w", op.Collection, cv.count, objectstore.ErrNotEmpty)
	}
	cv.exists = op.Code == objectstore.OpCreateCollection
	cv.fresh, cv.count, cv.objs = true, 0, map[objid.ID]*object{}
	return nil
}

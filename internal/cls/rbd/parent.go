package rbd

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Clones (layering): a clone's header holds its parent under the key
// "parent" (a ParentSpec: the parent's pool, image id and snapshot id,
// and the overlap, the bytes of the clone that read through to the
// parent where the clone has no object); the parent's header holds the
// clones of each of its snapshots under "children_<snap id as %016x>"
// (a list of ChildSpec, sorted). A snapshot with children cannot be
// unprotected nor removed (EBUSY, naming them); a child can be attached
// only to a protected snapshot.

// The header keys of layering.
const (
	keyParent = "parent"
	// ChildrenKeyPrefix + the snapshot id as %016x keys a snapshot's
	// children in its image's header.
	ChildrenKeyPrefix = "children_"
)

// ChildrenKey is the header key of snapshot id's children.
func ChildrenKey(id uint64) string { return fmt.Sprintf("%s%016x", ChildrenKeyPrefix, id) }

// DirIDKey is the directory's key holding the name of image id.
func DirIDKey(id string) string { return idPrefix + id }

// maxChildren bounds a snapshot's children (a bound for the decoder).
const maxChildren = 1 << 16

// ParentSpec is a clone's parent: a snapshot of an image, and how many
// bytes of the clone read through to it. The zero ParentSpec (no image
// id) is no parent.
type ParentSpec struct {
	PoolID  int64
	ImageID string
	SnapID  uint64
	// Overlap is how many bytes from the start of the clone read the
	// parent's where the clone has no data object: the parent's size at
	// the snapshot when cloned, cut by shrinks, never grown back.
	Overlap uint64
}

// IsZero reports whether p is no parent.
func (p ParentSpec) IsZero() bool { return p == ParentSpec{} }

// validate checks a parent that is set.
func (p ParentSpec) validate() error {
	if _, err := ParseID(p.ImageID); err != nil {
		return err
	}
	if p.PoolID < 0 || p.SnapID == 0 {
		return fmt.Errorf("%w: parent pool %d snapshot %d", ErrInvalid, p.PoolID, p.SnapID)
	}
	return nil
}

func (p ParentSpec) encode(e *encoding.Encoder) {
	mk := e.Begin(1, 1)
	e.Varint(p.PoolID)
	e.String(p.ImageID)
	e.Uint64(p.SnapID)
	e.Uint64(p.Overlap)
	e.End(mk)
}

func (p *ParentSpec) decode(d *encoding.Decoder) {
	d.Begin(1)
	p.PoolID, p.ImageID, p.SnapID, p.Overlap = d.Varint(), d.String(MaxNameLen), d.Uint64(), d.Uint64()
	d.End()
}

// Encode encodes p, the value of the "parent" key: version 1: pool,
// image id, snapshot id, overlap.
func (p ParentSpec) Encode() []byte {
	var e encoding.Encoder
	p.encode(&e)
	return e.Data()
}

// DecodeParentSpec decodes what ParentSpec.Encode wrote.
func DecodeParentSpec(b []byte) (ParentSpec, error) {
	d := encoding.NewDecoder(b)
	var p ParentSpec
	p.decode(d)
	if err := d.Finish(); err != nil {
		return ParentSpec{}, fmt.Errorf("rbd parent: %w", err)
	}
	return p, nil
}

// ChildSpec names a clone: its pool and image id.
type ChildSpec struct {
	PoolID  int64
	ImageID string
}

func (c ChildSpec) String() string { return fmt.Sprintf("%d/%s", c.PoolID, c.ImageID) }

func (c ChildSpec) encode(e *encoding.Encoder) {
	mk := e.Begin(1, 1)
	e.Varint(c.PoolID)
	e.String(c.ImageID)
	e.End(mk)
}

func (c *ChildSpec) decode(d *encoding.Decoder) {
	d.Begin(1)
	c.PoolID, c.ImageID = d.Varint(), d.String(MaxNameLen)
	d.End()
}

// EncodeChildren encodes a snapshot's children (the value of its
// children key, and the output of rbd.children): version 1: a count and
// the ChildSpecs.
func EncodeChildren(cs []ChildSpec) []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(uint64(len(cs)))
	for _, c := range cs {
		c.encode(&e)
	}
	e.End(mk)
	return e.Data()
}

// DecodeChildren decodes what EncodeChildren wrote.
func DecodeChildren(b []byte) ([]ChildSpec, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	n := d.Count(7)
	if n > maxChildren {
		d.Fail(fmt.Errorf("%w: %d children", ErrInvalid, n))
	}
	var cs []ChildSpec
	for i := 0; i < n && d.Err() == nil; i++ {
		var c ChildSpec
		c.decode(d)
		cs = append(cs, c)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("rbd children: %w", err)
	}
	return cs, nil
}

// ChildRequest is the input of child_attach and child_detach (a snapshot
// of the header's image and the clone), and of children (SnapID only).
type ChildRequest struct {
	SnapID uint64
	Child  ChildSpec
}

// Encode encodes r: version 1: snapshot id, child.
func (r ChildRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(r.SnapID)
	r.Child.encode(&e)
	e.End(mk)
	return e.Data()
}

// DecodeChildRequest decodes what ChildRequest.Encode wrote.
func DecodeChildRequest(b []byte) (ChildRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := ChildRequest{SnapID: d.Uint64()}
	r.Child.decode(d)
	d.End()
	if err := d.Finish(); err != nil {
		return ChildRequest{}, fmt.Errorf("rbd child request: %w", err)
	}
	return r, nil
}

// loadChildren reads the children of snapshot id from the header's omap
// (none if the key is absent); EIO if they do not decode.
func loadChildren(c objclass.Context, id uint64) ([]ChildSpec, error) {
	got, err := objclass.OmapGet(c, ChildrenKey(id))
	if err != nil {
		return nil, err
	}
	v, ok := got[ChildrenKey(id)]
	if !ok {
		return nil, nil
	}
	cs, err := DecodeChildren(v)
	if err != nil {
		return nil, objclass.Errorf(wire.EIO, "snapshot %d: %v", id, err)
	}
	return cs, nil
}

// busyWithChildren is EBUSY naming snapshot s's children, if it has any.
func busyWithChildren(c objclass.Context, s Snapshot, what string) error {
	cs, err := loadChildren(c, s.ID)
	if err != nil || len(cs) == 0 {
		return err
	}
	names := make([]string, len(cs))
	for i, ch := range cs {
		names[i] = ch.String()
	}
	return objclass.Errorf(wire.EBUSY, "cannot %s snapshot %q: it has %d clones (pool/image id: %s); flatten or remove them first",
		what, s.Name, len(cs), strings.Join(names, ", "))
}

// childRequest decodes a children method's input, loads the header and
// finds the snapshot.
func childRequest(c objclass.Context, in []byte) (ChildRequest, Snapshot, error) {
	r, err := DecodeChildRequest(in)
	if err != nil {
		return r, Snapshot{}, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	h, err := load(c)
	if err != nil {
		return r, Snapshot{}, err
	}
	i, err := find(h, r.SnapID)
	if err != nil {
		return r, Snapshot{}, err
	}
	return r, h.Snapshots[i], nil
}

func childAttach(c objclass.Context, in []byte) ([]byte, error) {
	r, s, err := childRequest(c, in)
	if err != nil {
		return nil, err
	}
	if _, err := ParseID(r.Child.ImageID); err != nil || r.Child.PoolID < 0 {
		return nil, objclass.Errorf(wire.EINVAL, "child %s is not a pool and image id", r.Child)
	}
	if !s.Protected {
		return nil, objclass.Errorf(wire.EINVAL, "snapshot %q is not protected; protect it before cloning it", s.Name)
	}
	cs, err := loadChildren(c, s.ID)
	if err != nil {
		return nil, err
	}
	for _, ch := range cs {
		if ch == r.Child {
			return nil, objclass.Errorf(wire.EEXIST, "%s is a child of snapshot %q already", r.Child, s.Name)
		}
	}
	if len(cs) >= maxChildren {
		return nil, objclass.Errorf(wire.EMLINK, "snapshot %q has %d children, the most it may have", s.Name, len(cs))
	}
	cs = append(cs, r.Child)
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].PoolID != cs[j].PoolID {
			return cs[i].PoolID < cs[j].PoolID
		}
		return cs[i].ImageID < cs[j].ImageID
	})
	return nil, objclass.OmapSet(c, wire.KV{Key: ChildrenKey(s.ID), Value: EncodeChildren(cs)})
}

func childDetach(c objclass.Context, in []byte) ([]byte, error) {
	r, s, err := childRequest(c, in)
	if err != nil {
		return nil, err
	}
	cs, err := loadChildren(c, s.ID)
	if err != nil {
		return nil, err
	}
	for i, ch := range cs {
		if ch == r.Child {
			cs = append(cs[:i], cs[i+1:]...)
			if len(cs) == 0 {
				return nil, objclass.OmapRm(c, ChildrenKey(s.ID))
			}
			return nil, objclass.OmapSet(c, wire.KV{Key: ChildrenKey(s.ID), Value: EncodeChildren(cs)})
		}
	}
	return nil, objclass.Errorf(wire.ENOENT, "%s is not a child of snapshot %q", r.Child, s.Name)
}

func children(c objclass.Context, in []byte) ([]byte, error) {
	_, s, err := childRequest(c, in)
	if err != nil {
		return nil, err
	}
	cs, err := loadChildren(c, s.ID)
	if err != nil {
		return nil, err
	}
	return EncodeChildren(cs), nil
}

// removeParent detaches a clone from its parent (after a flatten).
func removeParent(c objclass.Context, _ []byte) ([]byte, error) {
	h, err := load(c)
	if err != nil {
		return nil, err
	}
	if h.Parent.IsZero() {
		return nil, objclass.Errorf(wire.ENOENT, "the image has no parent")
	}
	return nil, objclass.OmapRm(c, keyParent)
}

// setOverlap sets a clone's overlap (a shrink cuts it before the data
// goes; a rollback sets the snapshot's), at most the image's size.
func setOverlap(c objclass.Context, in []byte) ([]byte, error) {
	overlap, err := DecodeSize(in)
	if err != nil {
		return nil, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	h, err := load(c)
	if err != nil {
		return nil, err
	}
	if h.Parent.IsZero() {
		return nil, objclass.Errorf(wire.ENOENT, "the image has no parent")
	}
	p := h.Parent
	p.Overlap = min(overlap, h.Size)
	return nil, objclass.OmapSet(c, wire.KV{Key: keyParent, Value: p.Encode()})
}

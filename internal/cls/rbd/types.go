package rbd

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Class is the class name the methods are registered under.
const Class = "rbd"

// Object names (librbd's format 2).
const (
	// Directory is the pool's image directory object.
	Directory = "rbd_directory"
	// IDPrefix + name is the object holding an image's id.
	IDPrefix = "rbd_id."
	// HeaderPrefix + id is an image's header object.
	HeaderPrefix = "rbd_header."
	// DataPrefix + id is the object prefix of an image's data objects:
	// rbd_data.<id>.<object number as %016x>. (ObjectMapPrefix names the
	// object maps.)
	DataPrefix = "rbd_data."
)

// Feature bits, as librbd numbers them. Only those in Features are known;
// an image with others is refused.
const (
	FeatureLayering   uint64 = 1 << 0
	FeatureStripingV2 uint64 = 1 << 1
	// Features is every feature this version knows (FeatureObjectMap:
	// objectmap.go).
	Features = FeatureLayering | FeatureStripingV2 | FeatureObjectMap
)

// Bounds of a header.
const (
	// MinOrder and MaxOrder bound an image's order (object size 1<<order):
	// 64 KiB (the striper's smallest stripe unit; librbd allows 4 KiB) to
	// 32 MiB, as librbd.
	MinOrder = 16
	MaxOrder = 25
	// MaxSize bounds an image's size (1 EiB), so that no offset within
	// an image overflows.
	MaxSize = 1 << 60
	// MaxNameLen bounds image and snapshot names and ids.
	MaxNameLen = 256
	// MaxSnapshots bounds an image's snapshots (librbd's 510 fit one
	// snap context; rados bounds an object's clones at 4,096).
	MaxSnapshots = 510
	minStripe    = 64 << 10
)

// NoDataPool is Header.DataPool when the data objects live in the
// header's pool.
const NoDataPool = -1

// ErrInvalid is the class of header validation errors.
var ErrInvalid = errors.New("rbd: invalid image header")

// Header is an image's header, as rbd.get returns it.
type Header struct {
	Size         uint64
	Order        uint8
	ObjectPrefix string
	Features     uint64
	StripeUnit   uint64
	StripeCount  uint64
	// DataPool is the pool of the data objects, NoDataPool for the
	// header's own.
	DataPool int64
	SnapSeq  uint64
	// Created is the image's creation time in Unix nanoseconds.
	Created int64
	// Snapshots, by increasing id.
	Snapshots []Snapshot
	// Parent is a clone's parent (parent.go); zero for an image that is
	// not a clone.
	Parent ParentSpec
}

// Snapshot is one snapshot of an image.
type Snapshot struct {
	ID   uint64
	Name string
	// Size is the image's size when the snapshot was taken.
	Size      uint64
	Protected bool
	// Created is when it was taken, in Unix nanoseconds.
	Created int64
	// ParentOverlap is a clone's overlap when the snapshot was taken
	// (0 for an image that is not a clone).
	ParentOverlap uint64
}

// ObjectSize is 1 << Order.
func (h Header) ObjectSize() uint64 { return 1 << h.Order }

// Validate checks the header's settings (not its snapshots): the order,
// the striping (a stripe unit that is a multiple of 64 KiB dividing the
// object size, a stripe count of at least 1), the size, the object
// prefix and the features. The error wraps ErrInvalid and says what to
// change.
func (h Header) Validate() error {
	switch {
	case h.Order < MinOrder || h.Order > MaxOrder:
		return fmt.Errorf("%w: order %d is outside [%d, %d] (objects of 64 KiB to 32 MiB)", ErrInvalid, h.Order, MinOrder, MaxOrder)
	case h.StripeUnit == 0 || h.StripeUnit%minStripe != 0 || h.ObjectSize()%h.StripeUnit != 0:
		return fmt.Errorf("%w: stripe unit %d is not a multiple of 64 KiB dividing the object size %d", ErrInvalid, h.StripeUnit, h.ObjectSize())
	case h.StripeCount == 0 || h.StripeCount > 1<<16:
		return fmt.Errorf("%w: stripe count %d is outside [1, 65536]", ErrInvalid, h.StripeCount)
	case h.Size > MaxSize:
		return fmt.Errorf("%w: size %d is over the largest image (%d)", ErrInvalid, h.Size, uint64(MaxSize))
	case h.ObjectPrefix == "" || len(h.ObjectPrefix) > MaxNameLen:
		return fmt.Errorf("%w: object prefix of %d bytes (want 1 to %d)", ErrInvalid, len(h.ObjectPrefix), MaxNameLen)
	case h.Features&^Features != 0:
		return fmt.Errorf("%w: unknown features %#x", ErrInvalid, h.Features&^Features)
	case h.DataPool < NoDataPool:
		return fmt.Errorf("%w: data pool %d", ErrInvalid, h.DataPool)
	}
	if !h.Parent.IsZero() {
		if err := h.Parent.validate(); err != nil {
			return err
		}
		if h.Parent.Overlap > h.Size {
			return fmt.Errorf("%w: parent overlap %d is over the size %d", ErrInvalid, h.Parent.Overlap, h.Size)
		}
	}
	return nil
}

// Snap returns the snapshot named name.
func (h Header) Snap(name string) (Snapshot, bool) {
	for _, s := range h.Snapshots {
		if s.Name == name {
			return s, true
		}
	}
	return Snapshot{}, false
}

// SnapContext returns the snap context of writes to the image: the snap
// seq and the snapshots' ids, newest first.
func (h Header) SnapContext() (seq uint64, snaps []uint64) {
	for i := len(h.Snapshots) - 1; i >= 0; i-- {
		snaps = append(snaps, h.Snapshots[i].ID)
	}
	return h.SnapSeq, snaps
}

// Encode encodes h: version 2: size, order, object prefix, features,
// stripe unit, stripe count, data pool, snap seq, created, snapshots;
// then (version 2) the parent.
func (h Header) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.Uint64(h.Size)
	e.Uint8(h.Order)
	e.String(h.ObjectPrefix)
	e.Uint64(h.Features)
	e.Uint64(h.StripeUnit)
	e.Uint64(h.StripeCount)
	e.Varint(h.DataPool)
	e.Uint64(h.SnapSeq)
	e.Varint(h.Created)
	e.Uvarint(uint64(len(h.Snapshots)))
	for _, s := range h.Snapshots {
		s.encode(&e)
	}
	h.Parent.encode(&e)
	e.End(mk)
	return e.Data()
}

// DecodeHeader decodes what Encode wrote. It does not validate.
func DecodeHeader(b []byte) (Header, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	h := Header{Size: d.Uint64(), Order: d.Uint8(), ObjectPrefix: d.String(MaxNameLen), Features: d.Uint64(),
		StripeUnit: d.Uint64(), StripeCount: d.Uint64(), DataPool: d.Varint(), SnapSeq: d.Uint64(), Created: d.Varint()}
	n := d.Count(4)
	for i := 0; i < n && d.Err() == nil; i++ {
		var s Snapshot
		s.decode(d)
		h.Snapshots = append(h.Snapshots, s)
	}
	if v >= 2 {
		h.Parent.decode(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return Header{}, fmt.Errorf("rbd header: %w", err)
	}
	return h, nil
}

func (s Snapshot) encode(e *encoding.Encoder) {
	mk := e.Begin(2, 1)
	e.Uint64(s.ID)
	e.String(s.Name)
	e.Uint64(s.Size)
	e.Bool(s.Protected)
	e.Varint(s.Created)
	e.Uint64(s.ParentOverlap)
	e.End(mk)
}

func (s *Snapshot) decode(d *encoding.Decoder) {
	v := d.Begin(2)
	s.ID, s.Name, s.Size, s.Protected, s.Created = d.Uint64(), d.String(MaxNameLen), d.Uint64(), d.Bool(), d.Varint()
	if v >= 2 {
		s.ParentOverlap = d.Uint64()
	}
	d.End()
}

// Encode encodes s, as the value of its header key: version 2: id, name,
// size, protected, created, and (version 2) the parent overlap.
func (s Snapshot) Encode() []byte {
	var e encoding.Encoder
	s.encode(&e)
	return e.Data()
}

// DecodeSnapshot decodes what Snapshot.Encode wrote.
func DecodeSnapshot(b []byte) (Snapshot, error) {
	d := encoding.NewDecoder(b)
	var s Snapshot
	s.decode(d)
	if err := d.Finish(); err != nil {
		return Snapshot{}, fmt.Errorf("rbd snapshot: %w", err)
	}
	return s, nil
}

// SnapRequest is the input of the snapshot methods: snap_add reads ID
// and Name, snap_remove ID, snap_protect ID and Protected.
type SnapRequest struct {
	ID        uint64
	Name      string
	Protected bool
}

// Encode encodes r: version 1: id, name, protected.
func (r SnapRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(r.ID)
	e.String(r.Name)
	e.Bool(r.Protected)
	e.End(mk)
	return e.Data()
}

// DecodeSnapRequest decodes what SnapRequest.Encode wrote.
func DecodeSnapRequest(b []byte) (SnapRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := SnapRequest{ID: d.Uint64(), Name: d.String(MaxNameLen), Protected: d.Bool()}
	d.End()
	if err := d.Finish(); err != nil {
		return SnapRequest{}, fmt.Errorf("rbd snap request: %w", err)
	}
	return r, nil
}

// DirRequest is the input of the directory methods: dir_add and
// dir_remove read Name and ID, dir_rename all three.
type DirRequest struct {
	Name, NewName, ID string
}

// Encode encodes r: version 1: name, new name, id.
func (r DirRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(r.Name)
	e.String(r.NewName)
	e.String(r.ID)
	e.End(mk)
	return e.Data()
}

// DecodeDirRequest decodes what DirRequest.Encode wrote.
func DecodeDirRequest(b []byte) (DirRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := DirRequest{Name: d.String(MaxNameLen), NewName: d.String(MaxNameLen), ID: d.String(MaxNameLen)}
	d.End()
	if err := d.Finish(); err != nil {
		return DirRequest{}, fmt.Errorf("rbd directory request: %w", err)
	}
	return r, nil
}

// EncodeSize is the input of set_size: version 1: the size.
func EncodeSize(size uint64) []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(size)
	e.End(mk)
	return e.Data()
}

// DecodeSize decodes what EncodeSize wrote.
func DecodeSize(b []byte) (uint64, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	size := d.Uint64()
	d.End()
	if err := d.Finish(); err != nil {
		return 0, fmt.Errorf("rbd size: %w", err)
	}
	return size, nil
}

package layout

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// MinStripeUnit is the granularity of stripe units and object sizes (Ceph's
// CEPH_MIN_STRIPE_UNIT, 64 KiB): both must be non-zero multiples of it.
const MinStripeUnit = 64 << 10

// ErrInvalid is the class of every layout validation error (EINVAL).
var ErrInvalid = errors.New("layout: invalid layout")

// Layout says how a file's bytes are striped over objects. The sizes are
// 32-bit, as in Ceph's ceph_file_layout.
type Layout struct {
	// ObjectSize is the most bytes an object holds: a non-zero multiple
	// of MinStripeUnit and of StripeUnit.
	ObjectSize uint32
	// StripeUnit is the size of the blocks dealt round-robin over the
	// objects of a stripe: a non-zero multiple of MinStripeUnit.
	StripeUnit uint32
	// StripeCount is how many objects a stripe spans (at least 1).
	StripeCount uint32
	// Pool is the id of the data pool the objects live in (≥ 0).
	Pool int64
	// Namespace is the RADOS namespace of the objects (empty: the
	// default one).
	Namespace string
}

// Default is Ceph's default file layout (4 MiB objects, one stripe of
// 4 MiB units) in pool.
func Default(pool int64) Layout {
	return Layout{ObjectSize: 4 << 20, StripeUnit: 4 << 20, StripeCount: 1, Pool: pool}
}

// Validate checks Ceph's rules for a file layout (ceph_file_layout_is_valid
// and file_layout_t::is_valid): the stripe unit and the object size are
// non-zero multiples of 64 KiB, the object size is a multiple of the
// stripe unit, the stripe count is at least 1 and the pool is not
// negative. The error wraps ErrInvalid and says which rule failed.
func (l Layout) Validate() error {
	switch {
	case l.StripeUnit == 0 || l.StripeUnit%MinStripeUnit != 0:
		return fmt.Errorf("%w: stripe_unit %d is not a non-zero multiple of 64 KiB (65536); use e.g. 4194304", ErrInvalid, l.StripeUnit)
	case l.ObjectSize == 0 || l.ObjectSize%MinStripeUnit != 0:
		return fmt.Errorf("%w: object_size %d is not a non-zero multiple of 64 KiB (65536); use e.g. 4194304", ErrInvalid, l.ObjectSize)
	case l.ObjectSize%l.StripeUnit != 0:
		return fmt.Errorf("%w: object_size %d is not a multiple of stripe_unit %d; make stripe_unit divide object_size", ErrInvalid, l.ObjectSize, l.StripeUnit)
	case l.StripeCount == 0:
		return fmt.Errorf("%w: stripe_count is 0; it must be at least 1", ErrInvalid)
	case l.Pool < 0:
		return fmt.Errorf("%w: pool %d is negative", ErrInvalid, l.Pool)
	case len(l.Namespace) > maxNamespace:
		return fmt.Errorf("%w: namespace of %d bytes is longer than %d", ErrInvalid, len(l.Namespace), maxNamespace)
	}
	return nil
}

// maxNamespace bounds a namespace's length on decode.
const maxNamespace = 1024

// StripeWidth is the bytes of one stripe: StripeUnit × StripeCount.
func (l Layout) StripeWidth() uint64 { return uint64(l.StripeUnit) * uint64(l.StripeCount) }

// Period is the bytes of one object set: ObjectSize × StripeCount. Offset
// Period of a file is the first byte of object StripeCount.
func (l Layout) Period() uint64 { return uint64(l.ObjectSize) * uint64(l.StripeCount) }

// stripesPerObject is how many stripe units one object holds.
func (l Layout) stripesPerObject() uint64 { return uint64(l.ObjectSize / l.StripeUnit) }

// String formats the layout as CephFS's ceph.file.layout xattr does.
func (l Layout) String() string {
	s := fmt.Sprintf("stripe_unit=%d stripe_count=%d object_size=%d pool=%d", l.StripeUnit, l.StripeCount, l.ObjectSize, l.Pool)
	if l.Namespace != "" {
		s += " pool_namespace=" + l.Namespace
	}
	return s
}

// Encode appends the layout as an envelope (docs/FORMATS.md, "File
// layout").
func (l Layout) Encode(e *encoding.Encoder) {
	m := e.Begin(1, 1)
	e.Uint32(l.ObjectSize)
	e.Uint32(l.StripeUnit)
	e.Uint32(l.StripeCount)
	e.Varint(l.Pool)
	e.String(l.Namespace)
	e.End(m)
}

// Decode reads a layout written by Encode and validates it; an invalid
// layout fails the decoder with an error wrapping encoding.ErrCorrupt and
// ErrInvalid.
func (l *Layout) Decode(d *encoding.Decoder) {
	d.Begin(1)
	l.ObjectSize = d.Uint32()
	l.StripeUnit = d.Uint32()
	l.StripeCount = d.Uint32()
	l.Pool = d.Varint()
	l.Namespace = d.String(maxNamespace)
	d.End()
	if d.Err() != nil {
		return
	}
	if err := l.Validate(); err != nil {
		d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
	}
}

// ObjectName names object objectNo of inode ino as Ceph's file_object_t
// does: the inode in hexadecimal, a dot, the object number as eight (or
// more) hexadecimal digits. Object 2 of inode 0x10000000000 is
// "10000000000.00000002".
func ObjectName(ino, objectNo uint64) string {
	return fmt.Sprintf("%x.%08x", ino, objectNo)
}

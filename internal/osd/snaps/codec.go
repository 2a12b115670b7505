package snaps

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The snap set's encoding, stored as an attribute of the head (or the
// snapdir):
//
//	version 1: seq, clones (count, then each: id, snaps (count, ids
//	newest first), size, overlap (count, then offset and length each)),
//	all uvarints, in one envelope.
const snapSetVersion = 1

// MaxClones bounds an object's clones: a write that would make one more
// is refused (ErrTooManyClones), and a decoded snap set with more is
// corrupt. 4,096 clones are a snap set of some 50 KiB to 100 KiB, read
// and written by every write to the object; an object gets a clone per
// snapshot taken between two writes to it, so hourly snapshots kept for
// half a year fit.
const MaxClones = 4096

// Encode appends ss to e.
func (ss SnapSet) Encode(e *encoding.Encoder) {
	mark := e.Begin(snapSetVersion, 1)
	e.Uvarint(ss.Seq)
	e.Uvarint(uint64(len(ss.Clones)))
	for _, c := range ss.Clones {
		e.Uvarint(c.ID)
		e.Uvarint(uint64(len(c.Snaps)))
		for _, s := range c.Snaps {
			e.Uvarint(s)
		}
		e.Uvarint(c.Size)
		e.Uvarint(uint64(len(c.Overlap)))
		for _, x := range c.Overlap {
			e.Uvarint(x.Off)
			e.Uvarint(x.Len)
		}
	}
	e.End(mark)
}

// Marshal returns ss's encoding.
func (ss SnapSet) Marshal() []byte {
	var e encoding.Encoder
	ss.Encode(&e)
	return e.Data()
}

// Decode reads a snap set written by Encode and validates it; errors are
// recorded in d (encoding.ErrCorrupt for an invalid snap set).
func Decode(d *encoding.Decoder) SnapSet {
	var ss SnapSet
	d.Begin(snapSetVersion)
	defer d.End()
	ss.Seq = d.Uvarint()
	n := d.Count(4)
	if n > MaxClones {
		d.Fail(fmt.Errorf("snaps: %d clones exceed %d: %w", n, MaxClones, encoding.ErrCorrupt))
		return SnapSet{}
	}
	if n > 0 {
		ss.Clones = make([]Clone, n)
	}
	for i := range ss.Clones {
		c := &ss.Clones[i]
		c.ID = d.Uvarint()
		ns := d.Count(1)
		if ns > MaxContextSnaps {
			d.Fail(fmt.Errorf("snaps: clone with %d snaps exceeds %d: %w", ns, MaxContextSnaps, encoding.ErrCorrupt))
			return SnapSet{}
		}
		c.Snaps = make([]uint64, ns)
		for j := range c.Snaps {
			c.Snaps[j] = d.Uvarint()
		}
		c.Size = d.Uvarint()
		no := d.Count(2)
		if no > 0 {
			c.Overlap = make(Extents, no)
		}
		for j := range c.Overlap {
			c.Overlap[j] = Extent{Off: d.Uvarint(), Len: d.Uvarint()}
		}
		if d.Err() != nil {
			return SnapSet{}
		}
	}
	if d.Err() == nil {
		if err := ss.Validate(); err != nil {
			d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
			return SnapSet{}
		}
	}
	return ss
}

// Unmarshal decodes what Marshal wrote.
func Unmarshal(b []byte) (SnapSet, error) {
	d := encoding.NewDecoder(b)
	ss := Decode(d)
	if err := d.Finish(); err != nil {
		return SnapSet{}, fmt.Errorf("snaps: decode snap set: %w", err)
	}
	return ss, nil
}

// Validate checks what every snap set satisfies: clones oldest first
// with ids up to Seq; each serving at least one snapshot, newest first,
// none above its id and all above the previous clone's id; overlaps
// within the clone's size.
func (ss SnapSet) Validate() error {
	if ss.Seq >= osdmap.MaxSnapID {
		return fmt.Errorf("snaps: seq %#x is not a snap id", ss.Seq)
	}
	var prev uint64
	for i := range ss.Clones {
		c := &ss.Clones[i]
		switch {
		case c.ID == 0 || c.ID <= prev && i > 0:
			return fmt.Errorf("snaps: clone ids not increasing (%d after %d)", c.ID, prev)
		case c.ID > ss.Seq:
			return fmt.Errorf("snaps: clone %d above seq %d", c.ID, ss.Seq)
		case len(c.Snaps) == 0:
			return fmt.Errorf("snaps: clone %d serves no snapshot", c.ID)
		}
		for j, s := range c.Snaps {
			switch {
			case s > c.ID:
				return fmt.Errorf("snaps: clone %d serves a newer snap %d", c.ID, s)
			case j > 0 && s >= c.Snaps[j-1]:
				return fmt.Errorf("snaps: clone %d snaps not newest first", c.ID)
			case i > 0 && s <= prev:
				return fmt.Errorf("snaps: clone %d serves snap %d, not newer than clone %d", c.ID, s, prev)
			case s == 0:
				return fmt.Errorf("snaps: clone %d serves snap 0", c.ID)
			}
		}
		if err := c.Overlap.validate(c.Size); err != nil {
			return fmt.Errorf("snaps: clone %d overlap: %w", c.ID, err)
		}
		prev = c.ID
	}
	return nil
}

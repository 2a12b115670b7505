package mdtypes

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
)

// ErrNoInodes: a rank's inode table has no free numbers left (ENOSPC).
var ErrNoInodes = errors.New("mdtypes: inode table exhausted (ENOSPC)")

// Range is the inode numbers [Start, Start+Len).
type Range struct {
	Start Ino
	Len   uint64
}

// End is the first number past the range.
func (r Range) End() Ino { return r.Start + Ino(r.Len) }

// InoTable is one rank's free inode numbers (Ceph's InoTable): rank r
// owns [(r+1)<<40, (r+2)<<40) and hands out numbers in ranges, one at a
// time for its own creates or a batch preallocated for a client. Version
// is raised by every change; the store persists the table with it.
type InoTable struct {
	Rank    int
	Version uint64
	// Free are the free ranges, sorted, disjoint and not adjacent.
	Free []Range
}

// NewInoTable returns rank's table with all of its numbers free.
func NewInoTable(rank int) *InoTable {
	start := Ino(uint64(rank+1) * rankInoSpan)
	return &InoTable{Rank: rank, Version: 1, Free: []Range{{Start: start, Len: rankInoSpan}}}
}

// owns reports whether rank owns ino.
func (t *InoTable) owns(r Range) bool {
	lo := Ino(uint64(t.Rank+1) * rankInoSpan)
	return r.Start >= lo && r.Len <= rankInoSpan && r.End() <= lo+rankInoSpan && r.End() >= r.Start
}

// Alloc takes up to n numbers (at least 1) from the front of the first
// free range and returns them as one range (so a batch may be shorter
// than n where the free space is fragmented).
func (t *InoTable) Alloc(n uint64) (Range, error) {
	if n == 0 {
		n = 1
	}
	if len(t.Free) == 0 {
		return Range{}, fmt.Errorf("rank %d: %w", t.Rank, ErrNoInodes)
	}
	f := &t.Free[0]
	got := Range{Start: f.Start, Len: min(n, f.Len)}
	f.Start += Ino(got.Len)
	f.Len -= got.Len
	if f.Len == 0 {
		t.Free = t.Free[1:]
	}
	t.Version++
	return got, nil
}

// Release returns r to the free set (a client's unused preallocation, an
// inode purged). Releasing numbers that are free already or that the
// rank does not own is an error and changes nothing.
func (t *InoTable) Release(r Range) error {
	if r.Len == 0 {
		return nil
	}
	if !t.owns(r) {
		return fmt.Errorf("mdtypes: rank %d does not own %v+%d", t.Rank, r.Start, r.Len)
	}
	i, _ := slices.BinarySearchFunc(t.Free, r.Start, func(f Range, s Ino) int {
		switch {
		case f.Start < s:
			return -1
		case f.Start > s:
			return 1
		}
		return 0
	})
	if i > 0 && t.Free[i-1].End() > r.Start || i < len(t.Free) && t.Free[i].Start < r.End() {
		return fmt.Errorf("mdtypes: rank %d: %v+%d is already partly free", t.Rank, r.Start, r.Len)
	}
	t.Free = slices.Insert(t.Free, i, r)
	// Merge with the neighbours.
	if i+1 < len(t.Free) && t.Free[i].End() == t.Free[i+1].Start {
		t.Free[i].Len += t.Free[i+1].Len
		t.Free = slices.Delete(t.Free, i+1, i+2)
	}
	if i > 0 && t.Free[i-1].End() == t.Free[i].Start {
		t.Free[i-1].Len += t.Free[i].Len
		t.Free = slices.Delete(t.Free, i, i+1)
	}
	t.Version++
	return nil
}

// IsFree reports whether ino is free.
func (t *InoTable) IsFree(ino Ino) bool {
	for _, f := range t.Free {
		if ino >= f.Start && ino < f.End() {
			return true
		}
	}
	return false
}

// Validate checks that the free ranges are the rank's own, non-empty,
// sorted, disjoint and not adjacent.
func (t *InoTable) Validate() error {
	if t.Rank < 0 || t.Rank >= MaxRank {
		return fmt.Errorf("inode table of rank %d", t.Rank)
	}
	for i, f := range t.Free {
		if f.Len == 0 || !t.owns(f) {
			return fmt.Errorf("inode table of rank %d: free range %v+%d is empty or not the rank's", t.Rank, f.Start, f.Len)
		}
		if i > 0 && t.Free[i-1].End() >= f.Start {
			return fmt.Errorf("inode table of rank %d: free ranges %d and %d overlap, touch or are out of order", t.Rank, i-1, i)
		}
	}
	return nil
}

// Marshal encodes the table (docs/FORMATS.md, "Inode table").
func (t *InoTable) Marshal() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(uint64(t.Rank))
	e.Uvarint(t.Version)
	e.Uvarint(uint64(len(t.Free)))
	for _, f := range t.Free {
		e.Uint64(uint64(f.Start))
		e.Uvarint(f.Len)
	}
	e.End(m)
	return e.Data()
}

// UnmarshalInoTable decodes and validates what Marshal wrote.
func UnmarshalInoTable(raw []byte) (*InoTable, error) {
	d := encoding.NewDecoder(raw)
	t := new(InoTable)
	d.Begin(1)
	rank := d.Uvarint()
	if rank >= MaxRank {
		d.Fail(fmt.Errorf("%w: inode table of rank %d", encoding.ErrCorrupt, rank))
	}
	t.Rank = int(rank)
	t.Version = d.Uvarint()
	if n := d.Count(9); n > 0 {
		t.Free = make([]Range, n)
		for i := range t.Free {
			t.Free[i] = Range{Start: Ino(d.Uint64()), Len: d.Uvarint()}
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("inode table: %w", err)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", encoding.ErrCorrupt, err)
	}
	return t, nil
}

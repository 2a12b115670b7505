package snaps

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cuttlestore/cuttle/objid"
)

// ErrNotFound is a read or rollback at a snapshot the object did not
// exist at (ENOENT).
var ErrNotFound = errors.New("snaps: object did not exist at the snapshot")

// ErrTooManyClones refuses a write that would give an object more than
// MaxClones clones (EMLINK). Ceph has no such bound, but a snap set is
// read and rewritten by every write to its object and decoded whole, so
// an unbounded one is a hazard; removing snapshots (and letting the
// trimmer run) makes room again.
var ErrTooManyClones = errors.New("snaps: too many clones")

// Clone is one preserved version of an object (Ceph's clone entries of
// SnapSet: clones, clone_snaps, clone_size, clone_overlap).
type Clone struct {
	// ID is the clone's snap id, the Snap of its object id: the seq of
	// the snap context of the write that made it.
	ID uint64
	// Snaps are the snapshots the clone serves, newest first: those
	// taken between the previous clone and it, less the trimmed ones.
	Snaps []uint64
	// Size is the clone's data size.
	Size uint64
	// Overlap is the data the clone shares with the next newer version
	// (the next clone, or the head): what a write to the head has not
	// changed since.
	Overlap Extents
}

// Oldest returns the oldest snapshot the clone serves.
func (c *Clone) Oldest() uint64 { return c.Snaps[len(c.Snaps)-1] }

// clone returns a deep copy.
func (c Clone) clone() Clone {
	c.Snaps = slices.Clone(c.Snaps)
	c.Overlap = slices.Clone(c.Overlap)
	return c
}

// SnapSet is what an object's head (or, once the head is deleted, its
// snapdir) records of its clones (Ceph's SnapSet).
//
// A snap set is a value: its methods return new snap sets and never
// write into their receiver. The snap sets they return may share what
// they did not change with the receiver (its Clones array, its clones'
// Snaps and Overlap: a write's MakeWriteable and HeadModified copy only
// what they change, not every clone of an object with many), so a
// caller must not write into a snap set's slices either; Clone makes a
// copy that shares nothing.
type SnapSet struct {
	// Seq is the newest snap context seq a write to the object carried.
	Seq uint64
	// Clones are the object's clones, oldest first.
	Clones []Clone
}

// Clone returns a deep copy of ss.
func (ss SnapSet) Clone() SnapSet {
	out := SnapSet{Seq: ss.Seq}
	if ss.Clones != nil {
		out.Clones = make([]Clone, len(ss.Clones))
		for i := range ss.Clones {
			out.Clones[i] = ss.Clones[i].clone()
		}
	}
	return out
}

// Empty reports whether the snap set records nothing: no write under a
// snap context, no clone.
func (ss SnapSet) Empty() bool { return ss.Seq == 0 && len(ss.Clones) == 0 }

// Find returns the clone with id, or nil.
func (ss SnapSet) Find(id uint64) *Clone {
	for i := range ss.Clones {
		if ss.Clones[i].ID == id {
			return &ss.Clones[i]
		}
	}
	return nil
}

// MakeWriteable decides what a write under c must do before it changes
// the head (Ceph's make_writeable): if the head exists and c has a
// snapshot newer than the object's last write, the head must first be
// cloned into a clone with id c.Seq serving those snapshots; the returned
// snap set has it, and clone is non-nil. Either way the snap set's Seq
// advances to c.Seq. c must be valid (Context.Validate). A clone beyond
// MaxClones is refused with ErrTooManyClones, and the write with it.
func (ss SnapSet) MakeWriteable(c Context, headExists bool, headSize uint64) (next SnapSet, clone *Clone, err error) {
	next = SnapSet{Seq: ss.Seq, Clones: slices.Clip(ss.Clones)} // an append copies
	if headExists && len(c.Snaps) > 0 && c.Snaps[0] > ss.Seq {
		if len(ss.Clones) >= MaxClones {
			return ss, nil, fmt.Errorf("%w: the object has %d clones already", ErrTooManyClones, len(ss.Clones))
		}
		n := 0
		for n < len(c.Snaps) && c.Snaps[n] > ss.Seq {
			n++
		}
		cl := Clone{ID: c.Seq, Snaps: slices.Clone(c.Snaps[:n]), Size: headSize, Overlap: Whole(headSize)}
		next.Clones = append(next.Clones, cl)
		clone = &next.Clones[len(next.Clones)-1]
	}
	next.Seq = max(next.Seq, c.Seq)
	return next, clone, nil
}

// HeadModified records that a write changed the head's bytes [off,
// off+length) (a length reaching past the largest offset: from off to the
// end, as a truncate does): the newest clone no longer shares them.
func (ss SnapSet) HeadModified(off, length uint64) SnapSet {
	if len(ss.Clones) == 0 {
		return ss
	}
	// Only the newest clone changes (Subtract makes a new Overlap).
	next := SnapSet{Seq: ss.Seq, Clones: slices.Clone(ss.Clones)}
	last := &next.Clones[len(next.Clones)-1]
	last.Overlap = last.Overlap.Subtract(off, length)
	return next
}

// HeadReplaced records that the head's data was replaced whole (a
// delete, a full write): the newest clone shares nothing with it.
func (ss SnapSet) HeadReplaced() SnapSet { return ss.HeadModified(0, math.MaxUint64) }

// Resolve returns the version a read at snap reads (Ceph's
// find_object_context): objid.NoSnap for the head, or a clone's id; or
// ErrNotFound if the object did not exist at snap. snap objid.NoSnap
// reads the head.
func (ss SnapSet) Resolve(snap uint64, headExists bool) (uint64, error) {
	if snap == objid.NoSnap || snap > ss.Seq {
		if !headExists {
			return 0, ErrNotFound
		}
		return objid.NoSnap, nil
	}
	for i := range ss.Clones {
		c := &ss.Clones[i]
		if c.ID < snap {
			continue
		}
		if c.Oldest() <= snap {
			return c.ID, nil
		}
		return 0, ErrNotFound
	}
	return 0, ErrNotFound
}

// RollbackAction is what a rollback to a snapshot does to the head.
type RollbackAction int

// Rollback actions.
const (
	// RollbackNone: the head already is the object at the snapshot.
	RollbackNone RollbackAction = iota
	// RollbackFromClone: copy the clone (data, attributes, omap) over the
	// head.
	RollbackFromClone
	// RollbackDelete: the object did not exist at the snapshot; delete
	// the head.
	RollbackDelete
)

// Rollback decides a rollback of the head to snap (Ceph's _rollback_to):
// nothing, a copy from the clone that serves snap (its id), or a delete.
// A rollback is a write: the caller first runs MakeWriteable with the
// write's context, then Rollback on the snap set that returned, and
// records the result with RolledBack.
func (ss SnapSet) Rollback(snap uint64, headExists bool) (RollbackAction, uint64) {
	target, err := ss.Resolve(snap, headExists)
	switch {
	case errors.Is(err, ErrNotFound) && headExists:
		return RollbackDelete, 0
	case err != nil || target == objid.NoSnap:
		return RollbackNone, 0
	}
	return RollbackFromClone, target
}

// RolledBack records a rollback of the head from clone id: the head now
// holds that clone's data, so the newest clone shares all of it if it is
// that clone, and nothing is claimed shared otherwise.
func (ss SnapSet) RolledBack(id uint64) SnapSet {
	next := ss.HeadReplaced()
	if n := len(next.Clones); n > 0 && next.Clones[n-1].ID == id {
		next.Clones[n-1].Overlap = Whole(next.Clones[n-1].Size)
	}
	return next
}

// Trim removes the snapshots removed reports gone from every clone
// (Ceph's snap trimmer) and returns the snap set left and the ids of the
// clones that serve no snapshot any more, which the caller deletes. The
// clone older than a deleted one then shares with the next newer version
// only what both shared.
func (ss SnapSet) Trim(removed func(snap uint64) bool) (next SnapSet, deleted []uint64) {
	next = SnapSet{Seq: ss.Seq}
	var carried Extents // the overlap of clones deleted since the last kept one
	carry := false
	for i := len(ss.Clones) - 1; i >= 0; i-- {
		c := ss.Clones[i].clone()
		kept := c.Snaps[:0]
		for _, s := range c.Snaps {
			if !removed(s) {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			deleted = append(deleted, c.ID)
			if carry {
				carried = carried.Intersect(c.Overlap)
			} else {
				carried, carry = c.Overlap, true
			}
			continue
		}
		c.Snaps = kept
		if carry {
			c.Overlap = c.Overlap.Intersect(carried)
			carry = false
		}
		next.Clones = append(next.Clones, c)
	}
	slices.Reverse(next.Clones)
	slices.Sort(deleted)
	return next, deleted
}

// Trimmable reports whether a clone serves a snapshot that removed
// reports gone: whether Trim would change the snap set.
func (ss SnapSet) Trimmable(removed func(snap uint64) bool) bool {
	for i := range ss.Clones {
		for _, s := range ss.Clones[i].Snaps {
			if removed(s) {
				return true
			}
		}
	}
	return false
}

package osdmap

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
)

// A pool's snapshots (Ceph's pg_pool_t snap fields). A pool is in one of
// two modes, chosen by its first snapshot and kept for its life, as in
// Ceph: pool snapshots (PoolSnaps: the monitors name them, "osd pool
// mksnap", and every write carries the pool's snap context) or
// self-managed snapshots (PoolSelfManagedSnap: clients allocate ids from
// the monitors and send their own snap context). Both modes draw ids from
// SnapSeq, and both record removed ids in RemovedSnaps, which is what the
// OSDs trim.

// Limits on a pool's snapshot fields, so that a hostile encoding cannot
// claim unbounded memory.
const (
	// MaxPoolSnaps bounds the named snapshots of a pool.
	MaxPoolSnaps = 1 << 16
	// MaxSnapIntervals bounds the intervals of a removed-snaps set.
	MaxSnapIntervals = 1 << 20
)

// PoolSnap is one named pool snapshot (Ceph's pool_snap_info_t).
type PoolSnap struct {
	ID      uint64
	Name    string
	Created time.Time
}

// SnapInterval is a run of snapshot ids: Start, Start+1, ...,
// Start+Len-1.
type SnapInterval struct {
	Start, Len uint64
}

// End returns the id after the interval's last.
func (iv SnapInterval) End() uint64 { return iv.Start + iv.Len }

// SnapIntervals is a set of snapshot ids as sorted, disjoint, non-adjacent
// intervals (Ceph's interval_set<snapid_t>); the form is canonical, so
// equal sets are equal slices. The zero value is the empty set. Values are
// not changed in place: Insert returns a new set.
type SnapIntervals []SnapInterval

// Contains reports whether id is in the set.
func (s SnapIntervals) Contains(id uint64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].End() > id })
	return i < len(s) && s[i].Start <= id
}

// Count returns the number of ids in the set.
func (s SnapIntervals) Count() uint64 {
	var n uint64
	for _, iv := range s {
		n += iv.Len
	}
	return n
}

// Insert returns the set with id added; s is unchanged. Id 0 and
// the special ids (objid.NoSnap and above) are not snapshot ids; Insert
// of one returns s.
func (s SnapIntervals) Insert(id uint64) SnapIntervals {
	if id == 0 || id >= MaxSnapID || s.Contains(id) {
		return s
	}
	// i is the first interval starting after id.
	i := sort.Search(len(s), func(i int) bool { return s[i].Start > id })
	joinPrev := i > 0 && s[i-1].End() == id
	joinNext := i < len(s) && s[i].Start == id+1
	out := slices.Clone(s)
	switch {
	case joinPrev && joinNext:
		out[i-1].Len += 1 + out[i].Len
		return slices.Delete(out, i, i+1)
	case joinPrev:
		out[i-1].Len++
	case joinNext:
		out[i].Start--
		out[i].Len++
	default:
		out = slices.Insert(out, i, SnapInterval{Start: id, Len: 1})
	}
	return out
}

// Max returns the greatest id in the set, or 0 if it is empty.
func (s SnapIntervals) Max() uint64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1].End() - 1
}

// String formats the set as Ceph does: "[1~3,7~1]" (start~length).
func (s SnapIntervals) String() string {
	parts := make([]string, len(s))
	for i, iv := range s {
		parts[i] = fmt.Sprintf("%d~%d", iv.Start, iv.Len)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// MaxSnapID bounds snapshot ids: the ids from objid.NoSnap
// (0xfffffffffffffffe) up name the head and the snapdir, never a snapshot.
const MaxSnapID = 0xfffffffffffffffe

func (s SnapIntervals) validate() error {
	if len(s) > MaxSnapIntervals {
		return fmt.Errorf("%d removed-snap intervals exceed %d", len(s), MaxSnapIntervals)
	}
	var prevEnd uint64
	for i, iv := range s {
		switch {
		case iv.Start == 0 || iv.Len == 0:
			return fmt.Errorf("removed snaps %s: empty interval or snap id 0", s)
		case iv.Len >= MaxSnapID || iv.Start > MaxSnapID-iv.Len:
			return fmt.Errorf("removed snaps: interval %d~%d beyond the snap ids", iv.Start, iv.Len)
		case i > 0 && iv.Start <= prevEnd:
			return fmt.Errorf("removed snaps %s: intervals out of order, overlapping or adjacent", s)
		}
		prevEnd = iv.End()
	}
	return nil
}

// PoolSnapsMode reports whether the pool has (or had) pool snapshots, so
// that self-managed snapshots are refused (Ceph's is_pool_snaps_mode).
func (p *Pool) PoolSnapsMode() bool { return p.Flags&PoolSnaps != 0 }

// SelfManagedSnapsMode reports whether clients have allocated snapshot
// ids of the pool, so that pool snapshots are refused (Ceph's
// is_unmanaged_snaps_mode).
func (p *Pool) SelfManagedSnapsMode() bool { return p.Flags&PoolSelfManagedSnap != 0 }

// SnapByName returns the pool snapshot named name, or nil.
func (p *Pool) SnapByName(name string) *PoolSnap {
	for i := range p.Snaps {
		if p.Snaps[i].Name == name {
			return &p.Snaps[i]
		}
	}
	return nil
}

// Snap returns the pool snapshot with id, or nil.
func (p *Pool) Snap(id uint64) *PoolSnap {
	i, ok := slices.BinarySearchFunc(p.Snaps, id, func(s PoolSnap, id uint64) int {
		switch {
		case s.ID < id:
			return -1
		case s.ID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &p.Snaps[i]
}

// SnapContext returns the snap context writes to a pool in pool-snaps
// mode carry (Ceph's get_snap_context): the pool's snap seq and its
// snapshots' ids, newest first.
func (p *Pool) SnapContext() (seq uint64, snaps []uint64) {
	snaps = make([]uint64, len(p.Snaps))
	for i := range p.Snaps {
		snaps[len(p.Snaps)-1-i] = p.Snaps[i].ID
	}
	return p.SnapSeq, snaps
}

// Equal reports whether p and o are the same pool with the same
// settings.
func (p *Pool) Equal(o *Pool) bool {
	a, b := *p, *o
	if !slices.Equal(a.RemovedSnaps, b.RemovedSnaps) || !slices.EqualFunc(a.Snaps, b.Snaps, func(x, y PoolSnap) bool {
		return x.ID == y.ID && x.Name == y.Name && x.Created.Equal(y.Created)
	}) {
		return false
	}
	// The rest are scalars (DeepEqual keeps Equal right when fields are
	// added).
	a.Snaps, b.Snaps, a.RemovedSnaps, b.RemovedSnaps = nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}

// Clone returns a deep copy of p: changing its snapshot lists leaves p
// as it was.
func (p *Pool) Clone() Pool {
	c := *p
	c.Snaps = slices.Clone(p.Snaps)
	c.RemovedSnaps = slices.Clone(p.RemovedSnaps)
	return c
}

// validateSnaps checks the pool's snapshot fields.
func (p *Pool) validateSnaps() error {
	if p.PoolSnapsMode() && p.SelfManagedSnapsMode() {
		return fmt.Errorf("pool %d: both pool snaps and self-managed snaps", p.ID)
	}
	if len(p.Snaps) > 0 && !p.PoolSnapsMode() {
		return fmt.Errorf("pool %d: pool snaps without the pool_snaps flag", p.ID)
	}
	if len(p.Snaps) > MaxPoolSnaps {
		return fmt.Errorf("pool %d: %d snaps exceed %d", p.ID, len(p.Snaps), MaxPoolSnaps)
	}
	if p.SnapSeq >= MaxSnapID {
		return fmt.Errorf("pool %d: snap_seq %#x beyond the snap ids", p.ID, p.SnapSeq)
	}
	names := make(map[string]bool, len(p.Snaps))
	var prev uint64
	for _, s := range p.Snaps {
		switch {
		case s.ID == 0 || s.ID <= prev:
			return fmt.Errorf("pool %d: snap ids not increasing from 1 (%d after %d)", p.ID, s.ID, prev)
		case s.ID > p.SnapSeq:
			return fmt.Errorf("pool %d: snap %d beyond snap_seq %d", p.ID, s.ID, p.SnapSeq)
		case s.Name == "" || len(s.Name) > MaxNameLen:
			return fmt.Errorf("pool %d: snap %d: name must have 1 to %d bytes", p.ID, s.ID, MaxNameLen)
		case names[s.Name]:
			return fmt.Errorf("pool %d: snap name %q used twice", p.ID, s.Name)
		case p.RemovedSnaps.Contains(s.ID):
			return fmt.Errorf("pool %d: snap %d both live and removed", p.ID, s.ID)
		}
		if err := checkTime("snap created", s.Created); err != nil {
			return fmt.Errorf("pool %d: snap %d: %w", p.ID, s.ID, err)
		}
		names[s.Name] = true
		prev = s.ID
	}
	if err := p.RemovedSnaps.validate(); err != nil {
		return fmt.Errorf("pool %d: %w", p.ID, err)
	}
	if m := p.RemovedSnaps.Max(); m > p.SnapSeq {
		return fmt.Errorf("pool %d: removed snap %d beyond snap_seq %d", p.ID, m, p.SnapSeq)
	}
	return nil
}

// Subtract returns the ids of s that are not in t; s and t are unchanged.
func (s SnapIntervals) Subtract(t SnapIntervals) SnapIntervals {
	var out SnapIntervals
	for _, iv := range s {
		start, end := iv.Start, iv.End()
		for _, cut := range t {
			if cut.End() <= start || cut.Start >= end {
				continue
			}
			if cut.Start > start {
				out = append(out, SnapInterval{Start: start, Len: cut.Start - start})
			}
			start = max(start, cut.End())
			if start >= end {
				break
			}
		}
		if start < end {
			out = append(out, SnapInterval{Start: start, Len: end - start})
		}
	}
	return out
}

// Intersect returns the ids in both s and t; s and t are unchanged.
func (s SnapIntervals) Intersect(t SnapIntervals) SnapIntervals {
	var out SnapIntervals
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		start, end := max(s[i].Start, t[j].Start), min(s[i].End(), t[j].End())
		if start < end {
			out = append(out, SnapInterval{Start: start, Len: end - start})
		}
		if s[i].End() < t[j].End() {
			i++
		} else {
			j++
		}
	}
	return out
}

// Union returns the ids in s or t; s and t are unchanged.
func (s SnapIntervals) Union(t SnapIntervals) SnapIntervals {
	all := append(slices.Clone(s), t...)
	slices.SortFunc(all, func(a, b SnapInterval) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	var out SnapIntervals
	for _, iv := range all {
		if n := len(out); n > 0 && iv.Start <= out[n-1].End() {
			if iv.End() > out[n-1].End() {
				out[n-1].Len = iv.End() - out[n-1].Start
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

// Validate reports what makes s not a canonical set of snapshot ids
// (for decoders of sets stored outside the map).
func (s SnapIntervals) Validate() error { return s.validate() }

package snaps

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
)

// The snap index (Ceph's SnapMapper): per PG, one key for each pair of a
// snapshot and a clone that serves it, so that the trimmer of a removed
// snapshot reads the keys of that snapshot and finds exactly the clones
// that carry it, instead of reading every object's snap set. The OSD
// keeps the keys in the omap of the PG's meta object and changes them in
// the same store transaction as the snap sets they are derived from, so
// that the index is always IndexOf of the snap sets the PG holds: for
// each head (or, with the head gone, its snapdir), the pairs of its snap
// set's clones.
//
// A key is IndexPrefix, the snapshot id as 16 lower-case hex digits, a
// '.', and the hex of the clone's object id encoding (objid.ID.Encode:
// the head's id with Snap the clone's id). Keys sort by snapshot first,
// so the keys of one snapshot, or of a run of them, are one range.

// IndexPrefix starts every key of the snap index; IndexPrefixEnd is the
// first key after all of them.
const (
	IndexPrefix    = "snap."
	IndexPrefixEnd = "snap/"
)

// IndexEntry is one key of the snap index: clone Clone serves snapshot
// Snap.
type IndexEntry struct {
	Snap  uint64
	Clone objid.ID // a clone's id: Snap is the clone's id, never the head's or the snapdir's
}

// Head returns the id of the entry's head object.
func (e IndexEntry) Head() objid.ID { return e.Clone.WithSnap(objid.NoSnap) }

// SnapKeyPrefix returns the prefix shared by every key of snap.
func SnapKeyPrefix(snap uint64) string {
	b := make([]byte, 0, len(IndexPrefix)+17)
	b = append(b, IndexPrefix...)
	b = appendHex16(b, snap)
	return string(append(b, '.'))
}

// Key returns e's key.
func (e IndexEntry) Key() string {
	var enc encoding.Encoder
	e.Clone.Encode(&enc)
	return SnapKeyPrefix(e.Snap) + hex.EncodeToString(enc.Data())
}

// ParseIndexKey decodes what Key wrote. A key that is not one (damaged,
// or written by something else) is an error wrapping encoding.ErrCorrupt;
// it never panics.
func ParseIndexKey(k string) (IndexEntry, error) {
	rest, ok := strings.CutPrefix(k, IndexPrefix)
	if !ok || len(rest) < 17 || rest[16] != '.' {
		return IndexEntry{}, fmt.Errorf("snaps: index key %q: %w: not an index key", k, encoding.ErrCorrupt)
	}
	snap, err := strconv.ParseUint(rest[:16], 16, 64)
	if err != nil || strings.ToLower(rest[:16]) != rest[:16] {
		return IndexEntry{}, fmt.Errorf("snaps: index key %q: %w: snap id", k, encoding.ErrCorrupt)
	}
	raw, err := hex.DecodeString(rest[17:])
	if err != nil || hex.EncodeToString(raw) != rest[17:] {
		return IndexEntry{}, fmt.Errorf("snaps: index key %q: %w: object", k, encoding.ErrCorrupt)
	}
	d := encoding.NewDecoder(raw)
	clone := objid.Decode(d)
	if err := d.Finish(); err != nil {
		return IndexEntry{}, fmt.Errorf("snaps: index key %q: %w: %w", k, encoding.ErrCorrupt, err)
	}
	e := IndexEntry{Snap: snap, Clone: clone}
	if e.Key() != k {
		// Another encoding of the same id (an older version, or
		// padding): the index never writes one, and the key the OSD
		// would compute to remove it differs.
		return IndexEntry{}, fmt.Errorf("snaps: index key %q: %w: not in canonical form", k, encoding.ErrCorrupt)
	}
	if err := e.check(); err != nil {
		return IndexEntry{}, fmt.Errorf("snaps: index key %q: %w: %w", k, encoding.ErrCorrupt, err)
	}
	return e, nil
}

// check reports what makes e impossible: a clone serves only snapshots
// up to its own id, and ids are neither 0 nor the head's nor the
// snapdir's.
func (e IndexEntry) check() error {
	switch {
	case e.Clone.Snap == 0 || e.Clone.Snap >= objid.NoSnap:
		return fmt.Errorf("object %v is no clone", e.Clone)
	case e.Snap == 0 || e.Snap > e.Clone.Snap:
		return fmt.Errorf("clone %d cannot serve snap %d", e.Clone.Snap, e.Snap)
	}
	return nil
}

// IndexOf returns the index entries of head's snap set ss: one for
// each snapshot each clone serves, sorted by key.
func IndexOf(head objid.ID, ss SnapSet) []IndexEntry {
	var out []IndexEntry
	for _, c := range ss.Clones {
		cl := head.WithSnap(c.ID)
		for _, s := range c.Snaps {
			out = append(out, IndexEntry{Snap: s, Clone: cl})
		}
	}
	SortEntries(out)
	return out
}

// SortEntries sorts entries by snapshot, then by key (the order of the
// index's keys).
func SortEntries(entries []IndexEntry) {
	if len(entries) < 2 {
		return
	}
	// Each key once, not two per comparison.
	type keyed struct {
		e IndexEntry
		k string
	}
	ks := make([]keyed, len(entries))
	for i, e := range entries {
		ks[i] = keyed{e, e.Key()}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.e.Snap != b.e.Snap {
			if a.e.Snap < b.e.Snap {
				return -1
			}
			return 1
		}
		return strings.Compare(a.k, b.k)
	})
	for i := range ks {
		entries[i] = ks[i].e
	}
}

// IndexChanges returns how the index changes when head's snap set goes
// from before to after (either may be empty: no snap set): the entries
// to add and those to remove, each sorted by key. A write that clones
// adds the new clone's snapshots; a trim removes the trimmed snapshots
// of every clone, all of a deleted clone's; a delete of the head that
// moves the snap set to the snapdir changes nothing, as the entries name
// clones, not the object that holds the snap set.
//
// Its cost follows what changes, not the snap sets' sizes: a write to an
// object with many clones (one per snapshot taken while it was being
// rewritten) compares the clones' ids and snapshot lists, and builds and
// sorts only the entries that differ.
func IndexChanges(head objid.ID, before, after SnapSet) (add, remove []IndexEntry) {
	if !ordered(before) || !ordered(after) {
		return Diff(IndexOf(head, before), IndexOf(head, after))
	}
	b, a := before.Clones, after.Clones
	i, j := 0, 0
	for i < len(b) || j < len(a) {
		switch {
		case j == len(a) || i < len(b) && b[i].ID < a[j].ID:
			remove = appendEntries(remove, head, b[i].ID, b[i].Snaps)
			i++
		case i == len(b) || b[i].ID > a[j].ID:
			add = appendEntries(add, head, a[j].ID, a[j].Snaps)
			j++
		default:
			if !slices.Equal(b[i].Snaps, a[j].Snaps) {
				gone, come := snapsDiff(b[i].Snaps, a[j].Snaps)
				remove = appendEntries(remove, head, b[i].ID, gone)
				add = appendEntries(add, head, a[j].ID, come)
			}
			i++
			j++
		}
	}
	SortEntries(add)
	SortEntries(remove)
	return add, remove
}

// ordered reports whether ss's clones have ascending ids and each lists
// its snapshots strictly newest first, as snap sets do (Validate); for
// any other IndexChanges falls back to comparing whole indexes.
func ordered(ss SnapSet) bool {
	for i := range ss.Clones {
		if i > 0 && ss.Clones[i-1].ID >= ss.Clones[i].ID {
			return false
		}
		s := ss.Clones[i].Snaps
		for k := 1; k < len(s); k++ {
			if s[k-1] <= s[k] {
				return false
			}
		}
	}
	return true
}

// appendEntries appends the entries of clone id of head for snaps.
func appendEntries(out []IndexEntry, head objid.ID, id uint64, snaps []uint64) []IndexEntry {
	cl := head.WithSnap(id)
	for _, s := range snaps {
		out = append(out, IndexEntry{Snap: s, Clone: cl})
	}
	return out
}

// snapsDiff returns the snapshots of before missing from after (gone)
// and those of after missing from before (come); both lists are newest
// first, without repeats.
func snapsDiff(before, after []uint64) (gone, come []uint64) {
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case j == len(after) || i < len(before) && before[i] > after[j]:
			gone = append(gone, before[i])
			i++
		case i == len(before) || before[i] < after[j]:
			come = append(come, after[j])
			j++
		default:
			i++
			j++
		}
	}
	return gone, come
}

// Diff returns the entries of want missing from have (to add) and those
// of have not in want (to remove); both inputs and outputs are in key
// order (SortEntries). Scrub uses it to compare the index with the snap
// sets.
func Diff(have, want []IndexEntry) (add, remove []IndexEntry) {
	cmp := func(a, b IndexEntry) int {
		if a.Snap != b.Snap {
			if a.Snap < b.Snap {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key(), b.Key())
	}
	i, j := 0, 0
	for i < len(have) || j < len(want) {
		switch {
		case j == len(want) || i < len(have) && cmp(have[i], want[j]) < 0:
			remove = append(remove, have[i])
			i++
		case i == len(have) || cmp(have[i], want[j]) > 0:
			add = append(add, want[j])
			j++
		default:
			i++
			j++
		}
	}
	return add, remove
}

// appendHex16 appends v as 16 lower-case hex digits.
func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}

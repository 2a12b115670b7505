package scrub

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Inconsistency is what a scrub found wrong with one object.
type Inconsistency struct {
	// Auth are the members holding the authoritative copy, in OSD order
	// (none: no good copy); Bad those whose copy is unreadable, missing
	// or different, in OSD order.
	Auth, Bad []int32
	// Why says what differs, for operators.
	Why string
	// Misplaced: the object's name maps to another PG (Why says which).
	// Repair leaves such objects alone: copying them among this PG's
	// members cannot put them where clients look for them.
	Misplaced bool
}

// Chunk is what the primary gathered to compare one chunk of a PG's
// objects.
type Chunk struct {
	PG   osdmap.PG
	Pool osdmap.Pool // the PG's pool in the current map
	// Primary is the member that compares; a tie between copies goes to
	// its copy.
	Primary int32
	// Maps are the members' scrub maps of the chunk, by OSD id; the
	// primary's included.
	Maps map[int32][]wire.ScrubObject
	// InFlux are the objects written, or replicating, while the maps
	// were taken (from the PG log and the writes in flight): their copies
	// may differ between maps taken at different moments, so their
	// differences are left for the next scrub. Their names are still
	// checked.
	InFlux map[objid.ID]bool
}

// Check returns the chunk's inconsistent objects: those whose copies
// differ (Compare), but for those in flux, and those stored in the wrong
// PG (Misplaced), whose reason comes first when their copies differ too.
func (c Chunk) Check() map[objid.ID]Inconsistency {
	found := map[objid.ID]Inconsistency{}
	for id, inc := range Compare(c.Maps, c.Primary) {
		if !c.InFlux[id] {
			found[id] = inc
		}
	}
	for id, inc := range Misplaced(c.Maps, c.Pool, c.PG) {
		if prev, ok := found[id]; ok {
			inc.Why += "; " + prev.Why
		}
		found[id] = inc
	}
	return found
}

// copyState is what scrub compares between copies.
type copyState struct {
	exists                bool
	size                  uint64
	version               wire.Version
	attrs, omap, dataHash uint32
}

func (c copyState) String() string {
	if !c.exists {
		return "missing"
	}
	return fmt.Sprintf("version %v size %d digests %08x/%08x/%08x", c.version, c.size, c.attrs, c.omap, c.dataHash)
}

// Compare returns the objects whose copies differ among the members'
// scrub maps: present on some members and not others, unreadable on
// some, or different in size, version or a digest. The authoritative
// copy is the one most members agree on (a copy that could not be read
// has no vote); a tie goes to the newer version, then to primary's copy.
// Every member without the authoritative copy is bad.
func Compare(scrubMaps map[int32][]wire.ScrubObject, primary int32) map[objid.ID]Inconsistency {
	members := slices.Sorted(maps.Keys(scrubMaps))
	copies := map[objid.ID]map[int32]wire.ScrubObject{}
	for osd, objs := range scrubMaps {
		for _, o := range objs {
			if copies[o.ID] == nil {
				copies[o.ID] = map[int32]wire.ScrubObject{}
			}
			copies[o.ID][osd] = o
		}
	}
	out := map[objid.ID]Inconsistency{}
	for id, byOSD := range copies {
		votes := map[copyState][]int32{}
		var why []string
		for _, x := range members {
			o, ok := byOSD[x]
			if ok && o.ReadError != "" {
				why = append(why, fmt.Sprintf("osd.%d cannot read it (%s)", x, o.ReadError))
				continue
			}
			cs := copyState{exists: ok}
			if ok {
				cs = copyState{true, o.Size, o.Version, o.AttrsDigest, o.OmapDigest, o.DataDigest}
			}
			votes[cs] = append(votes[cs], x)
		}
		if len(votes) == 1 && len(why) == 0 {
			continue
		}
		inc := Inconsistency{}
		if auth, ok := authoritative(votes, primary); ok {
			inc.Auth = votes[auth]
			for cs, holders := range votes {
				if cs != auth {
					why = append(why, fmt.Sprintf("osd %v: %v, authoritative %v", holders, cs, auth))
				}
			}
		} else {
			why = append(why, "no readable copy")
		}
		for _, x := range members {
			if !slices.Contains(inc.Auth, x) {
				inc.Bad = append(inc.Bad, x)
			}
		}
		slices.Sort(why)
		inc.Why = strings.Join(why, "; ")
		out[id] = inc
	}
	return out
}

// authoritative picks the copy state to keep: the one with the most
// votes, then the newest version, then the primary's; false if no copy
// was readable.
func authoritative(votes map[copyState][]int32, primary int32) (copyState, bool) {
	states := slices.Collect(maps.Keys(votes))
	if len(states) == 0 {
		return copyState{}, false
	}
	slices.SortFunc(states, func(a, b copyState) int {
		if c := cmp.Compare(len(votes[b]), len(votes[a])); c != 0 {
			return c
		}
		if a.version != b.version {
			if b.version.Less(a.version) {
				return -1
			}
			return 1
		}
		if pa, pb := slices.Contains(votes[a], primary), slices.Contains(votes[b], primary); pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return strings.Compare(a.String(), b.String())
	})
	return states[0], true
}

// Misplaced returns the objects of the scrub maps that do not belong in
// pg: their names (namespace and locator) hash to another PG of pool at
// its current pg_num, they belong to another pool, or they are stored
// under a hash their name does not have. Clients look for such an object
// in the PG its name maps to, so it is unreadable where it is, and a
// write of the name makes a second object. Every member holding one is
// bad, and none is authoritative. It is a check of names, so a light
// scrub makes it too.
func Misplaced(scrubMaps map[int32][]wire.ScrubObject, pool osdmap.Pool, pg osdmap.PG) map[objid.ID]Inconsistency {
	out := map[objid.ID]Inconsistency{}
	for _, osd := range slices.Sorted(maps.Keys(scrubMaps)) {
		for _, o := range scrubMaps[osd] {
			id := o.ID
			if inc, ok := out[id]; ok {
				inc.Bad = append(inc.Bad, osd)
				out[id] = inc
				continue
			}
			var why string
			if h := objid.HashLocator(id.Namespace, id.Locator()); id.Pool != pg.Pool {
				why = fmt.Sprintf("stored in pg %v, but it belongs to pool %d", pg, id.Pool)
			} else if want := pool.HashToPG(h); pool.PGNum > 0 && want != pg {
				why = fmt.Sprintf("stored in pg %v, but its hash maps to pg %v", pg, want)
			} else if h != id.Hash {
				why = fmt.Sprintf("stored with hash %08x, but its name hashes to %08x", id.Hash, h)
			}
			if why != "" {
				out[id] = Inconsistency{Bad: []int32{osd}, Why: why, Misplaced: true}
			}
		}
	}
	return out
}

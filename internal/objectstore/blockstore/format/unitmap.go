package format

import (
	"iter"
	"slices"
	"sort"
)

// UnitMap is an object's extent map: its units in LU order, kept in
// chunks of one shard each (the ShardUnits logical units one shard key
// holds). A record's copy (Clone) shares its chunks and copies one only
// when it changes a unit in it, so a 4 KiB overwrite of a 4 MiB object
// copies 64 units, not all 1,024, and the shards a transaction must
// rewrite are the chunks it copied (DiffShards compares chunk pointers,
// not every unit). Copying the whole map on each small overwrite was
// about a tenth of an OSD's CPU and two thirds of the bytes it allocated
// under 4 KiB random writes to an rbd image (docs/OSD.md, "Small
// overwrites of large objects").
//
// The zero UnitMap is empty, and so is a nil *UnitMap to Len, All,
// From and Shards. A UnitMap value shares its chunks with the
// value it was copied from: change one copy only, and Clone to get
// another that may change.
type UnitMap struct {
	chunks []unitChunk // by shard, none empty
	n      int         // units in all
}

// unitChunk is one shard's units. own is set when this map made the
// shard itself (it may change it in place); a shard from a Clone or
// from MakeUnitMap's argument is copied before it changes.
type unitChunk struct {
	s   *unitShard
	own bool
}

type unitShard struct {
	sh    uint64
	units []Unit // sorted by LU, all in shard sh
}

// MakeUnitMap returns the map of units, which must be sorted by LU
// without duplicates; it shares units' memory and never changes it.
func MakeUnitMap(units []Unit) UnitMap {
	var m UnitMap
	for sh, run := range shardRuns(units) {
		m.chunks = append(m.chunks, unitChunk{s: &unitShard{sh: sh, units: run[:len(run):len(run)]}})
		m.n += len(run)
	}
	return m
}

// shardRuns yields each shard units fall in and the units in it; units
// are in LU order.
func shardRuns(units []Unit) iter.Seq2[uint64, []Unit] {
	return func(yield func(uint64, []Unit) bool) {
		for len(units) > 0 {
			sh := units[0].LU / ShardUnits
			n := 1
			for n < len(units) && units[n].LU/ShardUnits == sh {
				n++
			}
			if !yield(sh, units[:n]) {
				return
			}
			units = units[n:]
		}
	}
}

// AppendShard adds units, all of shard sh and in LU order, after every
// unit m holds (sh is above every shard of m); m keeps units.
func (m *UnitMap) AppendShard(sh uint64, units []Unit) {
	if len(units) == 0 {
		return
	}
	m.chunks = append(m.chunks, unitChunk{s: &unitShard{sh: sh, units: units}, own: true})
	m.n += len(units)
}

// Clone returns a copy of m that shares its chunks until it changes
// them.
func (m *UnitMap) Clone() UnitMap {
	c := UnitMap{n: m.n}
	if len(m.chunks) > 0 {
		c.chunks = make([]unitChunk, len(m.chunks))
		for i, ch := range m.chunks {
			c.chunks[i] = unitChunk{s: ch.s}
		}
	}
	return c
}

// Len returns the number of units.
func (m *UnitMap) Len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// find returns the index of shard sh's chunk and whether m has it; if
// not, the index is where it would go. A dense object's chunk sh is at
// index sh.
func (m *UnitMap) find(sh uint64) (int, bool) {
	if sh < uint64(len(m.chunks)) && m.chunks[sh].s.sh == sh {
		return int(sh), true
	}
	i := sort.Search(len(m.chunks), func(i int) bool { return m.chunks[i].s.sh >= sh })
	return i, i < len(m.chunks) && m.chunks[i].s.sh == sh
}

// findUnit returns the index of logical unit lu in units, sorted by LU,
// and whether it is there; if not, the index is where it would go.
func findUnit(units []Unit, lu uint64) (int, bool) {
	i := sort.Search(len(units), func(i int) bool { return units[i].LU >= lu })
	return i, i < len(units) && units[i].LU == lu
}

// Get returns logical unit lu's unit and whether it is mapped.
func (m *UnitMap) Get(lu uint64) (Unit, bool) {
	ci, ok := m.find(lu / ShardUnits)
	if !ok {
		return Unit{}, false
	}
	units := m.chunks[ci].s.units
	if j, ok := findUnit(units, lu); ok {
		return units[j], true
	}
	return Unit{}, false
}

// At returns the i-th unit in LU order, 0 <= i < Len.
func (m *UnitMap) At(i int) Unit {
	for _, c := range m.chunks {
		if i < len(c.s.units) {
			return c.s.units[i]
		}
		i -= len(c.s.units)
	}
	panic("format: UnitMap.At out of range")
}

// Last returns the unit with the highest LU, if m has any.
func (m *UnitMap) Last() (Unit, bool) {
	if len(m.chunks) == 0 {
		return Unit{}, false
	}
	units := m.chunks[len(m.chunks)-1].s.units
	return units[len(units)-1], true
}

// All yields the units in LU order.
func (m *UnitMap) All() iter.Seq[Unit] { return m.From(0) }

// From yields the units from logical unit lu on, in LU order.
func (m *UnitMap) From(lu uint64) iter.Seq[Unit] {
	return func(yield func(Unit) bool) {
		if m == nil {
			return
		}
		ci, _ := m.find(lu / ShardUnits)
		for ; ci < len(m.chunks); ci++ {
			units := m.chunks[ci].s.units
			j := 0
			if units[0].LU < lu {
				j, _ = findUnit(units, lu)
			}
			for _, u := range units[j:] {
				if !yield(u) {
					return
				}
			}
		}
	}
}

// Shards yields each shard m has units in and those units, in shard
// order; the caller must not change them.
func (m *UnitMap) Shards() iter.Seq2[uint64, []Unit] {
	return func(yield func(uint64, []Unit) bool) {
		if m == nil {
			return
		}
		for _, c := range m.chunks {
			if !yield(c.s.sh, c.s.units) {
				return
			}
		}
	}
}

// Slice returns the units in LU order, in a new slice.
func (m *UnitMap) Slice() []Unit {
	out := make([]Unit, 0, m.n)
	for _, c := range m.chunks {
		out = append(out, c.s.units...)
	}
	return out
}

// own returns chunk ci's shard for changing, copying it first if m does
// not own it.
func (m *UnitMap) own(ci int) *unitShard {
	c := &m.chunks[ci]
	if !c.own {
		c.s = &unitShard{sh: c.s.sh, units: slices.Clone(c.s.units)}
		c.own = true
	}
	return c.s
}

// Set maps u.LU to u and returns the unit it replaced, if any.
func (m *UnitMap) Set(u Unit) (old Unit, replaced bool) {
	sh := u.LU / ShardUnits
	ci, ok := m.find(sh)
	if !ok {
		m.chunks = slices.Insert(m.chunks, ci, unitChunk{s: &unitShard{sh: sh, units: []Unit{u}}, own: true})
		m.n++
		return Unit{}, false
	}
	s := m.own(ci)
	j, found := findUnit(s.units, u.LU)
	if found {
		old = s.units[j]
		s.units[j] = u
		return old, true
	}
	s.units = slices.Insert(s.units, j, u)
	m.n++
	return Unit{}, false
}

// Delete unmaps logical unit lu and returns the unit it mapped to, if
// any.
func (m *UnitMap) Delete(lu uint64) (Unit, bool) {
	ci, ok := m.find(lu / ShardUnits)
	if !ok {
		return Unit{}, false
	}
	if _, found := findUnit(m.chunks[ci].s.units, lu); !found {
		return Unit{}, false
	}
	s := m.own(ci)
	j, _ := findUnit(s.units, lu)
	old := s.units[j]
	s.units = slices.Delete(s.units, j, j+1)
	m.n--
	if len(s.units) == 0 {
		m.chunks = slices.Delete(m.chunks, ci, ci+1)
	}
	return old, true
}

// DeleteFrom unmaps every logical unit from lu on.
func (m *UnitMap) DeleteFrom(lu uint64) {
	ci, ok := m.find(lu / ShardUnits)
	if ok {
		if j, _ := findUnit(m.chunks[ci].s.units, lu); j < len(m.chunks[ci].s.units) {
			if j == 0 {
				ok = false // the whole chunk goes
			} else {
				s := m.own(ci)
				m.n -= len(s.units) - j
				clear(s.units[j:])
				s.units = s.units[:j]
			}
		}
		if ok {
			ci++
		}
	}
	for _, c := range m.chunks[ci:] {
		m.n -= len(c.s.units)
	}
	clear(m.chunks[ci:])
	m.chunks = m.chunks[:ci]
}

// approxSize estimates the Go heap m holds (Onode.ApproxSize). Every
// unit of a store has the same number of checksums.
func (m *UnitMap) approxSize() int {
	s := 16 * cap(m.chunks)
	for _, c := range m.chunks {
		per := 48
		if sums := c.s.units[0].sums; sums != nil {
			per += roundUp8(4 * len(sums))
		}
		s += 32 + per*cap(c.s.units)
	}
	return s
}

// equal reports whether m and o hold the same units with the same
// checksums.
func (m *UnitMap) equal(o *UnitMap) bool {
	if m.n != o.n || len(m.chunks) != len(o.chunks) {
		return false
	}
	for i := range m.chunks {
		a, b := m.chunks[i].s, o.chunks[i].s
		if a != b && (a.sh != b.sh || !slices.EqualFunc(a.units, b.units, sameUnit)) {
			return false
		}
	}
	return true
}

// DiffShards calls changed, in shard order, for every shard whose units
// differ between was and now, with now's units of it (none if now has
// none there). Either may be nil, for no units. Chunks now shares with
// was are not compared.
func DiffShards(was, now *UnitMap, changed func(sh uint64, units []Unit)) {
	var a, b []unitChunk
	if was != nil {
		a = was.chunks
	}
	if now != nil {
		b = now.chunks
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].s.sh < b[j].s.sh):
			changed(a[i].s.sh, nil)
			i++
		case i == len(a) || b[j].s.sh < a[i].s.sh:
			changed(b[j].s.sh, b[j].s.units)
			j++
		default:
			if x, y := a[i].s, b[j].s; x != y && !slices.EqualFunc(x.units, y.units, sameUnit) {
				changed(y.sh, y.units)
			}
			i++
			j++
		}
	}
}

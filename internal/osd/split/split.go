package split

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/osdmap"
)

// Where returns the PG seed an object hash falls into with pgNum PGs.
func Where(hash, pgNum uint32) uint32 {
	return osdmap.StableMod(hash, pgNum, osdmap.PGMask(pgNum))
}

// Parent returns the PG that held seed's objects when the pool had pgNum
// PGs (seed itself if seed < pgNum).
func Parent(seed, pgNum uint32) uint32 { return Where(seed, pgNum) }

// Children returns the PGs that PG parent splits into when pg_num grows
// from oldNum to newNum, in order: every new seed whose objects parent
// held (Ceph's pg_t::is_split). None if pg_num does not grow.
func Children(parent, oldNum, newNum uint32) []uint32 {
	var out []uint32
	for s := oldNum; s < newNum; s++ {
		if Parent(s, oldNum) == parent {
			out = append(out, s)
		}
	}
	return out
}

// Move is one step of a split: the parent's objects whose hash's low Bits
// bits equal Child go to PG Child.
type Move struct {
	Child uint32
	Bits  uint8
}

// Plan returns the moves that split PG parent when pg_num grows from
// oldNum to newNum, one per child in Children's order. Applied in order
// to the parent's collection they leave it exactly the objects that map
// to parent with newNum PGs. It fails if parent did not exist with oldNum
// PGs or pg_num does not grow.
func Plan(parent, oldNum, newNum uint32) ([]Move, error) {
	switch {
	case oldNum == 0 || parent >= oldNum:
		return nil, fmt.Errorf("split: pg seed %#x does not exist with pg_num %d", parent, oldNum)
	case newNum <= oldNum:
		return nil, fmt.Errorf("split: pg_num %d -> %d does not grow", oldNum, newNum)
	case newNum > osdmap.MaxPGNum:
		return nil, fmt.Errorf("split: pg_num %d beyond %d", newNum, uint32(osdmap.MaxPGNum))
	}
	children := Children(parent, oldNum, newNum)
	out := make([]Move, len(children))
	for i, c := range children {
		out[i] = Move{Child: c, Bits: osdmap.SplitBits(c, newNum)}
	}
	return out, nil
}

// Pools returns the pools of old whose pg_num grew in m, with their old
// pg_num: the pools whose PGs split when m replaces old. Pools new in m
// split nothing.
func Pools(old, m *osdmap.Map) map[int64]uint32 {
	if old == nil {
		return nil
	}
	out := map[int64]uint32{}
	for _, p := range m.Pools() {
		if was := old.Pool(p.ID); was != nil && p.PGNum > was.PGNum {
			out[p.ID] = was.PGNum
		}
	}
	return out
}

// Sorted returns the keys of a per-seed map in order.
func Sorted[V any](m map[uint32]V) []uint32 {
	out := make([]uint32, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

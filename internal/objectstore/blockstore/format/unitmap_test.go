package format

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestUnitMapModel runs random changes on a UnitMap and on a sorted
// slice and requires the same units after each; every map it cloned from
// must keep its units (a clone copies a shared chunk before changing
// it), and DiffShards must name exactly the shards whose units differ.
func TestUnitMapModel(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var m UnitMap
		var model []Unit
		type snap struct {
			m     UnitMap
			units []Unit
		}
		var snaps []snap
		maxLU := uint64(1 + rng.IntN(5*ShardUnits))
		for step := range 300 {
			lu := rng.Uint64N(maxLU)
			switch op := rng.IntN(10); {
			case op < 6:
				u := MakeUnit(lu, rng.Uint64N(1<<20)*testAU, []uint32{rng.Uint32()})
				old, replaced := m.Set(u)
				i, found := slices.BinarySearchFunc(model, lu, func(u Unit, lu uint64) int { return cmpLU(u.LU, lu) })
				if replaced != found || (found && !sameUnit(old, model[i])) {
					t.Fatalf("seed %d step %d: Set(%d) replaced %v %+v, model %v", seed, step, lu, replaced, old, found)
				}
				if found {
					model[i] = u
				} else {
					model = slices.Insert(model, i, u)
				}
			case op < 8:
				old, ok := m.Delete(lu)
				i, found := slices.BinarySearchFunc(model, lu, func(u Unit, lu uint64) int { return cmpLU(u.LU, lu) })
				if ok != found || (found && !sameUnit(old, model[i])) {
					t.Fatalf("seed %d step %d: Delete(%d) = %v, model %v", seed, step, lu, ok, found)
				}
				if found {
					model = slices.Delete(model, i, i+1)
				}
			case op < 9:
				m.DeleteFrom(lu)
				i, _ := slices.BinarySearchFunc(model, lu, func(u Unit, lu uint64) int { return cmpLU(u.LU, lu) })
				model = model[:i:i]
			default:
				was := m
				m = m.Clone()
				snaps = append(snaps, snap{was, slices.Clone(model)})
			}
			checkUnitMap(t, &m, model)
			if u, ok := m.Get(lu); func() bool {
				i, found := slices.BinarySearchFunc(model, lu, func(u Unit, lu uint64) int { return cmpLU(u.LU, lu) })
				return ok != found || (found && !sameUnit(u, model[i]))
			}() {
				t.Fatalf("seed %d step %d: Get(%d) = %+v, %v", seed, step, lu, u, ok)
			}
			var from []Unit
			for u := range m.From(lu) {
				from = append(from, u)
			}
			i, _ := slices.BinarySearchFunc(model, lu, func(u Unit, lu uint64) int { return cmpLU(u.LU, lu) })
			if !unitsEqual(from, model[i:]) {
				t.Fatalf("seed %d step %d: From(%d) = %v, want %v", seed, step, lu, from, model[i:])
			}
		}
		for k, s := range snaps {
			checkUnitMap(t, &s.m, s.units)
			want := map[uint64][]Unit{}
			shards := map[uint64]bool{}
			for _, u := range s.units {
				shards[u.LU/ShardUnits] = true
			}
			for _, u := range model {
				shards[u.LU/ShardUnits] = true
			}
			for sh := range shards {
				a, b := unitsOfShard(s.units, sh), unitsOfShard(model, sh)
				if !unitsEqual(a, b) {
					want[sh] = b
				}
			}
			got := map[uint64][]Unit{}
			var order []uint64
			DiffShards(&s.m, &m, func(sh uint64, units []Unit) {
				got[sh] = units
				order = append(order, sh)
			})
			if !slices.IsSorted(order) || len(got) != len(want) {
				t.Fatalf("seed %d snapshot %d: DiffShards named %v, want %d shards", seed, k, order, len(want))
			}
			for sh, units := range want {
				if g, ok := got[sh]; !ok || !unitsEqual(g, units) {
					t.Fatalf("seed %d snapshot %d: shard %d: %v, want %v", seed, k, sh, g, units)
				}
			}
		}
	}
}

func cmpLU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func unitsOfShard(units []Unit, sh uint64) []Unit {
	var out []Unit
	for _, u := range units {
		if u.LU/ShardUnits == sh {
			out = append(out, u)
		}
	}
	return out
}

func unitsEqual(a, b []Unit) bool { return slices.EqualFunc(a, b, sameUnit) }

// checkUnitMap requires m to hold exactly units, through every reader.
func checkUnitMap(t *testing.T, m *UnitMap, units []Unit) {
	t.Helper()
	if m.Len() != len(units) || !unitsEqual(m.Slice(), units) {
		t.Fatalf("map holds %d units %v, want %d %v", m.Len(), m.Slice(), len(units), units)
	}
	var all []Unit
	for sh, run := range m.Shards() {
		if len(run) == 0 {
			t.Fatalf("shard %d empty", sh)
		}
		for _, u := range run {
			if u.LU/ShardUnits != sh {
				t.Fatalf("unit %d in shard %d", u.LU, sh)
			}
		}
		all = append(all, run...)
	}
	if !unitsEqual(all, units) {
		t.Fatalf("shards hold %v, want %v", all, units)
	}
	for i, u := range units {
		if !sameUnit(m.At(i), u) {
			t.Fatalf("At(%d) = %+v, want %+v", i, m.At(i), u)
		}
	}
	last, ok := m.Last()
	if ok != (len(units) > 0) || (ok && !sameUnit(last, units[len(units)-1])) {
		t.Fatalf("Last = %+v, %v", last, ok)
	}
	if !m.equal(ptr(MakeUnitMap(units))) {
		t.Fatalf("equal refuses a map of the same units")
	}
}

func ptr[T any](v T) *T { return &v }

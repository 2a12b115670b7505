package balancer

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/osdmap"
)

// layoutMap builds epoch 1 of a map from a CRUSH layout with every OSD up
// and in, and the given pools.
func layoutMap(t testing.TB, l crush.Layout, pools ...osdmap.Pool) *osdmap.Map {
	t.Helper()
	spec, err := crush.BuildLayout(l)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	n := max(l.Racks, 1) * l.Hosts * l.OSDsPerHost
	m, err := osdmap.NewSimple(cm, n, pools...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func pool(id int64, pgNum uint32, size int) osdmap.Pool {
	return osdmap.Pool{ID: id, Name: "p" + string(rune('0'+id)), Type: osdmap.PoolReplicated, Size: size,
		MinSize: max(size-1, 1), CrushRule: 0, PGNum: pgNum, PGPNum: pgNum, Flags: osdmap.PoolHashPSPool}
}

func ecPool(id int64, pgNum uint32, size int) osdmap.Pool {
	p := pool(id, pgNum, size)
	p.Type, p.CrushRule = osdmap.PoolErasure, 1
	return p
}

// apply applies plan to m, failing the test if the map rejects it.
func apply(t testing.TB, m *osdmap.Map, plan *Plan) *osdmap.Map {
	t.Helper()
	inc, err := plan.Incremental(m)
	if err != nil {
		t.Fatal(err)
	}
	next, err := m.Apply(inc)
	if err != nil {
		t.Fatalf("apply plan: %v", err)
	}
	return next
}

// checkPlaced verifies every PG of m against its rule and that no copy
// sits on an OSD that is out.
func checkPlaced(t testing.TB, m *osdmap.Map) {
	t.Helper()
	var s osdmap.Scratch
	for _, p := range m.Pools() {
		l, err := m.PoolRuleLimits(&p)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range p.PGNum {
			pg := osdmap.PG{Pool: p.ID, Seed: seed}
			set, err := m.Upmapped(pg, &s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Check(set); err != nil {
				t.Fatalf("epoch %d pg %s set %v: %v", m.Epoch(), pg, set, err)
			}
			for _, o := range set {
				if o != crush.ItemNone && !m.IsIn(o) {
					t.Fatalf("pg %s on osd.%d, which is out", pg, o)
				}
			}
		}
	}
}

// balance runs rounds until a plan is empty, checking each round, and
// returns the balanced map and the rounds run.
func balance(t testing.TB, m *osdmap.Map, opts Options) (*osdmap.Map, int) {
	t.Helper()
	maxMoves := opts.withDefaults().MaxMoves
	prev := sumSquares(m, opts.Pools)
	for round := 0; ; round++ {
		if round > 10000 {
			t.Fatal("no convergence after 10000 rounds")
		}
		plan := Optimize(m, opts)
		if again := Optimize(m, opts); !reflect.DeepEqual(plan, again) {
			t.Fatalf("round %d: two plans of one map differ:\n%+v\n%+v", round, plan, again)
		}
		if plan.Empty() {
			return m, round
		}
		if len(plan.Moves) > maxMoves {
			t.Fatalf("round %d: %d moves, limit %d", round, len(plan.Moves), maxMoves)
		}
		for _, mv := range plan.Moves {
			if !m.IsUp(mv.To) || !m.IsIn(mv.To) {
				t.Fatalf("move %+v to an OSD that is down or out", mv)
			}
		}
		m = apply(t, m, plan)
		checkPlaced(t, m)
		if c := m.StaleUpmaps(); !c.Empty() {
			t.Fatalf("round %d: the monitor would clean the plan's upmaps: %+v", round, c)
		}
		// Every move narrows the spread: the sum of squared deviations
		// falls.
		cur := sumSquares(m, opts.Pools)
		if cur >= prev {
			t.Fatalf("round %d: sum of squared deviations %v, was %v", round, cur, prev)
		}
		prev = cur
	}
}

func sumSquares(m *osdmap.Map, pools []int64) float64 {
	sum := 0.0
	for _, p := range m.Pools() {
		if len(pools) > 0 && !slices.Contains(pools, p.ID) {
			continue
		}
		st, err := newPoolState(m, &p)
		if err != nil {
			continue
		}
		for _, o := range st.osds {
			sum += st.dev(o) * st.dev(o)
		}
	}
	return sum
}

func TestOptimizeReachesDeviation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout crush.Layout
		pools  []osdmap.Pool
		maxDev int
	}{
		{"12 hosts size 3", crush.Layout{Hosts: 12, OSDsPerHost: 2}, []osdmap.Pool{pool(1, 256, 3)}, 1},
		{"racks size 2", crush.Layout{Racks: 3, Hosts: 4, OSDsPerHost: 3}, []osdmap.Pool{pool(1, 128, 2)}, 1},
		{"two pools", crush.Layout{Hosts: 8, OSDsPerHost: 3}, []osdmap.Pool{pool(1, 64, 3), pool(2, 128, 2)}, 1},
		{"erasure", crush.Layout{Hosts: 10, OSDsPerHost: 2}, []osdmap.Pool{ecPool(1, 128, 6)}, 1},
		{"deviation 5", crush.Layout{Hosts: 12, OSDsPerHost: 2}, []osdmap.Pool{pool(1, 512, 3)}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := layoutMap(t, tc.layout, tc.pools...)
			before := Eval(m, nil)
			got, rounds := balance(t, m, Options{MaxDeviation: tc.maxDev})
			after := Eval(got, nil)
			for _, pe := range after.Pools {
				if pe.MaxDeviation > float64(tc.maxDev) {
					t.Errorf("pool %d: max deviation %.2f after %d rounds, want <= %d (before %+v)",
						pe.Pool, pe.MaxDeviation, rounds, tc.maxDev, before.Pools)
				}
			}
			if after.Score >= before.Score {
				t.Errorf("score %v, before %v", after.Score, before.Score)
			}
		})
	}
}

// TestOptimizeRandomMaps is the property test: on random hierarchies with
// uneven weights, OSDs down and out, and existing upmaps, every round
// keeps each PG within its rule's failure domains, moves at most MaxMoves
// copies, only to OSDs up and in, narrows the spread, is deterministic,
// and leaves nothing the monitor would clean.
func TestOptimizeRandomMaps(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 8
	}
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 37))
		l := crush.Layout{Racks: r.IntN(3), Hosts: 3 + r.IntN(6), OSDsPerHost: 1 + r.IntN(4)}
		spec, err := crush.BuildLayout(l)
		if err != nil {
			t.Fatal(err)
		}
		// Uneven CRUSH weights.
		for i := range spec.Buckets {
			b := &spec.Buckets[i]
			for j, it := range b.Items {
				if it >= 0 {
					b.Weights[j] = crush.WeightOne/2 + uint32(r.IntN(3*crush.WeightOne/2))
				}
			}
		}
		cm, err := crush.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		n := max(l.Racks, 1) * l.Hosts * l.OSDsPerHost
		pools := []osdmap.Pool{pool(1, uint32(16<<r.IntN(4)), 2+r.IntN(2))}
		if r.IntN(2) == 0 {
			pools = append(pools, ecPool(2, 32, min(4, max(l.Racks, 1)*l.Hosts)))
		}
		m, err := osdmap.NewSimple(cm, n, pools...)
		if err != nil {
			t.Fatal(err)
		}
		s := m.Spec()
		s.Epoch++
		for i := range s.OSDs {
			switch r.IntN(10) {
			case 0:
				s.OSDs[i].State &^= osdmap.OSDUp
			case 1:
				s.OSDs[i].Weight = 0
			case 2:
				s.OSDs[i].Weight = osdmap.WeightIn / 2
			}
		}
		if m, err = osdmap.New(s); err != nil {
			t.Fatal(err)
		}
		opts := Options{MaxDeviation: 1 + r.IntN(2), MaxMoves: 1 + r.IntN(8)}
		t.Logf("seed %d: layout %+v, pools %d, opts %+v", seed, l, len(pools), opts)
		balance(t, m, opts)
	}
}

func TestOptimizeBounded(t *testing.T) {
	m := layoutMap(t, crush.Layout{Hosts: 12, OSDsPerHost: 2}, pool(1, 256, 3), pool(2, 64, 3))
	plan := Optimize(m, Options{MaxMoves: 3})
	if len(plan.Moves) != 3 {
		t.Fatalf("%d moves, want 3", len(plan.Moves))
	}
	only2 := Optimize(m, Options{MaxMoves: 5, Pools: []int64{2}})
	for _, mv := range only2.Moves {
		if mv.PG.Pool != 2 {
			t.Fatalf("move %+v outside pool 2", mv)
		}
	}
	stale := Optimize(m, Options{})
	next := apply(t, m, plan)
	if _, err := stale.Incremental(next); err == nil {
		t.Fatal("a plan of epoch 1 applied to epoch 2")
	}
}

// A balanced map whose OSD goes out needs moves again, and the balancer
// leaves PGs with a pg_upmap entry alone.
func TestOptimizeAfterChange(t *testing.T) {
	m := layoutMap(t, crush.Layout{Hosts: 8, OSDsPerHost: 2}, pool(1, 128, 3))
	m, _ = balance(t, m, Options{})
	s := m.Spec()
	s.Epoch++
	s.OSDs[3].Weight = 0
	pinned := osdmap.PG{Pool: 1, Seed: 7}
	s.PGUpmap[pinned] = []int32{0, 4, 8}
	m2, err := osdmap.New(s)
	if err != nil {
		t.Fatal(err)
	}
	clean := m2.NewIncremental()
	m2.StaleUpmaps().AddTo(clean)
	if m2, err = m2.Apply(clean); err != nil {
		t.Fatal(err)
	}
	got, _ := balance(t, m2, Options{})
	for _, pe := range Eval(got, nil).Pools {
		if pe.MaxDeviation > 1 {
			t.Fatalf("%+v", pe)
		}
	}
	if got.PGUpmapItems(pinned) != nil || !slices.Equal(got.PGUpmap(pinned), []int32{0, 4, 8}) {
		t.Fatalf("pinned pg changed: %v %v", got.PGUpmap(pinned), got.PGUpmapItems(pinned))
	}
}

func TestItemsFor(t *testing.T) {
	for _, tc := range []struct {
		raw, want []int32
		ok        bool
	}{
		{[]int32{1, 2, 3}, []int32{1, 2, 3}, true},
		{[]int32{1, 2, 3}, []int32{4, 2, 3}, true},
		{[]int32{1, 2, 3}, []int32{2, 5, 3}, true}, // 2->5 must precede 1->2
		{[]int32{1, 2, 3}, []int32{5, 1, 3}, true},
		{[]int32{1, 2, 3}, []int32{2, 1, 3}, false}, // a swap: not expressible
	} {
		items := itemsFor(tc.raw, tc.want)
		got := applyItems(tc.raw, items)
		if slices.Equal(got, tc.want) != tc.ok {
			t.Errorf("raw %v want %v: items %v give %v", tc.raw, tc.want, items, got)
		}
	}
}

func TestEval(t *testing.T) {
	m := layoutMap(t, crush.Layout{Hosts: 4, OSDsPerHost: 1}, pool(1, 64, 2))
	ev := Eval(m, nil)
	if len(ev.Pools) != 1 || ev.Pools[0].Copies != 128 || ev.Pools[0].OSDs != 4 {
		t.Fatalf("%+v", ev)
	}
	pe := ev.Pools[0]
	if pe.Mean != 32 || pe.Min > 32 || pe.Max < 32 || (pe.Stddev == 0) != (pe.Min == pe.Max) {
		t.Fatalf("%+v", pe)
	}
	if (pe.Score == 0) != (pe.MaxDeviation == 0) {
		t.Fatalf("score %v with max deviation %v", pe.Score, pe.MaxDeviation)
	}
	if other := Eval(m, []int64{9}); len(other.Pools) != 0 || other.Score != 0 {
		t.Fatalf("%+v", other)
	}
}

// A pool whose pg_num is merging down is left alone: its PGs must gather
// on their merge targets' OSDs (as Ceph's balancer skips such pools).
func TestOptimizeSkipsMergingPool(t *testing.T) {
	merging := pool(1, 256, 3)
	merging.SetTargets(128, 128)
	m := layoutMap(t, crush.Layout{Hosts: 12, OSDsPerHost: 2}, merging, pool(2, 256, 3))
	plan := Optimize(m, Options{MaxMoves: 50})
	if len(plan.Moves) == 0 {
		t.Fatal("no moves: the test's other pool needs some")
	}
	for _, mv := range plan.Moves {
		if mv.PG.Pool == 1 {
			t.Fatalf("move %+v in the merging pool", mv)
		}
	}
	if why := plan.Skipped[1]; why != "pg_num 256 is merging down to 128" {
		t.Fatalf("pool 1 skipped for %q", why)
	}
}

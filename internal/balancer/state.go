package balancer

import (
	"slices"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/osdmap"
)

// poolState is one pool's placement as the balancer sees it: every PG's
// CRUSH result and current set (after upmaps), and the PG copies, target
// and deviation of every OSD the pool can use.
type poolState struct {
	pool   *osdmap.Pool
	limits *osdmap.RuleLimits
	pgs    []pgState
	// osds are the OSDs that count: under the rule's root, existing,
	// in and of positive weight; in id order.
	osds   []int32
	weight map[int32]float64 // CRUSH weight times reweight
	count  map[int32]int     // PG copies now
	target map[int32]float64 // fair share of the copies
	up     map[int32]bool    // may receive copies
	byOSD  map[int32][]int   // indexes into pgs, ascending
}

type pgState struct {
	pg    osdmap.PG
	raw   []int32 // CRUSH's result
	set   []int32 // after upmaps
	fixed bool    // has a pg_upmap entry: the balancer leaves it alone
}

// newPoolState reads pool p's placement from m. It fails when the pool's
// rule is one RuleLimits cannot judge.
func newPoolState(m *osdmap.Map, p *osdmap.Pool) (*poolState, error) {
	limits, err := m.PoolRuleLimits(p)
	if err != nil {
		return nil, err
	}
	st := &poolState{pool: p, limits: limits, weight: map[int32]float64{}, count: map[int32]int{},
		target: map[int32]float64{}, up: map[int32]bool{}, byOSD: map[int32][]int{}}
	total := 0.0
	for _, o := range limits.OSDs() {
		w := float64(limits.CrushWeight(o)) / crush.WeightOne * float64(m.OSD(o).Weight) / float64(osdmap.WeightIn)
		if !m.IsIn(o) || w <= 0 {
			continue
		}
		st.osds = append(st.osds, o)
		st.weight[o] = w
		st.up[o] = m.IsUp(o)
		total += w
	}
	var s osdmap.Scratch
	copies := 0
	for seed := range p.PGNum {
		pg := osdmap.PG{Pool: p.ID, Seed: seed}
		raw, _, _, err := m.PGToRawOSDs(pg, &s)
		if err != nil {
			return nil, err
		}
		ps := pgState{pg: pg, raw: slices.Clone(raw), fixed: m.PGUpmap(pg) != nil}
		set, err := m.Upmapped(pg, &s, nil)
		if err != nil {
			return nil, err
		}
		ps.set = set
		st.pgs = append(st.pgs, ps)
		for _, o := range set {
			if _, ok := st.weight[o]; ok {
				st.count[o]++
				st.byOSD[o] = append(st.byOSD[o], len(st.pgs)-1)
				copies++
			}
		}
	}
	for _, o := range st.osds {
		st.target[o] = float64(copies) * st.weight[o] / total
	}
	return st, nil
}

// dev is OSD o's deviation from its target: positive when overfull.
func (st *poolState) dev(o int32) float64 { return float64(st.count[o]) - st.target[o] }

// move records that PG index i's copy on from now lives on to.
func (st *poolState) move(i int, from, to int32) {
	pos := slices.Index(st.pgs[i].set, from)
	st.pgs[i].set[pos] = to
	st.count[from]--
	st.count[to]++
	list := st.byOSD[from]
	if k, ok := slices.BinarySearch(list, i); ok {
		st.byOSD[from] = slices.Delete(list, k, k+1)
	}
	k, _ := slices.BinarySearch(st.byOSD[to], i)
	st.byOSD[to] = slices.Insert(st.byOSD[to], k, i)
}

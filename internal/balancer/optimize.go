package balancer

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Defaults of Options.
const (
	// DefaultMaxDeviation is the PG copies an OSD may be above or below
	// its target. Ceph's upmap_max_deviation defaults to 5; Cuttle aims
	// for an even spread and defaults to 1.
	DefaultMaxDeviation = 1
	// DefaultMaxMoves bounds the PG copies one plan moves, as Ceph's
	// upmap_max_optimizations (10).
	DefaultMaxMoves = 10
)

// Options tune Optimize.
type Options struct {
	// MaxDeviation: an OSD whose PG copies are within this many of its
	// target is balanced. 0 means DefaultMaxDeviation.
	MaxDeviation int
	// MaxMoves: at most this many PG copies move in one plan. 0 means
	// DefaultMaxMoves.
	MaxMoves int
	// Pools restricts the plan to these pools; empty means every pool.
	Pools []int64
}

func (o Options) withDefaults() Options {
	if o.MaxDeviation <= 0 {
		o.MaxDeviation = DefaultMaxDeviation
	}
	if o.MaxMoves <= 0 {
		o.MaxMoves = DefaultMaxMoves
	}
	return o
}

// Move is one PG copy a plan moves.
type Move struct {
	PG       osdmap.PG `json:"pgid"`
	From, To int32
}

// Plan is what Optimize proposes: the pg_upmap_items entries to set and
// to remove, made against the map of Epoch.
type Plan struct {
	Epoch   osdmap.Epoch
	Changes osdmap.UpmapChanges
	Moves   []Move
	// Skipped names pools the balancer cannot judge, with why.
	Skipped map[int64]string
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return p.Changes.Empty() }

// Incremental returns the incremental that applies the plan to m, or an
// error if m is not the map the plan was made for.
func (p *Plan) Incremental(m *osdmap.Map) (*osdmap.Incremental, error) {
	if m.Epoch() != p.Epoch {
		return nil, fmt.Errorf("balancer: plan made at epoch %d, map at %d", p.Epoch, m.Epoch())
	}
	inc := m.NewIncremental()
	p.Changes.AddTo(inc)
	return inc, nil
}

// Optimize computes a plan that brings each pool's OSDs closer to their
// targets, moving at most opts.MaxMoves PG copies; pools are taken in id
// order and share the budget. An empty plan means every pool is within
// opts.MaxDeviation or no allowed move improves it.
func Optimize(m *osdmap.Map, opts Options) *Plan {
	opts = opts.withDefaults()
	plan := &Plan{Epoch: m.Epoch(), Skipped: map[int64]string{}}
	touched := map[osdmap.PG][]int32{} // PG -> CRUSH result, of PGs moved
	sets := map[osdmap.PG][]int32{}
	for _, p := range m.Pools() {
		if len(opts.Pools) > 0 && !slices.Contains(opts.Pools, p.ID) {
			continue
		}
		if len(plan.Moves) >= opts.MaxMoves {
			break
		}
		if target, _ := p.Targets(); p.Merging() {
			// Its PGs must gather on their merge targets' OSDs, which
			// the monitors see to (as Ceph's balancer skips such pools).
			plan.Skipped[p.ID] = fmt.Sprintf("pg_num %d is merging down to %d", p.PGNum, target)
			continue
		}
		st, err := newPoolState(m, &p)
		if err != nil {
			plan.Skipped[p.ID] = err.Error()
			continue
		}
		for len(plan.Moves) < opts.MaxMoves {
			mv, ok := st.bestMove(opts.MaxDeviation)
			if !ok {
				break
			}
			plan.Moves = append(plan.Moves, mv)
			touched[mv.PG] = st.pgs[mv.PG.Seed].raw
			sets[mv.PG] = st.pgs[mv.PG.Seed].set
		}
	}
	for _, pg := range slices.SortedFunc(maps.Keys(touched), osdmap.ComparePG) {
		items := itemsFor(touched[pg], sets[pg])
		if len(items) == 0 {
			plan.Changes.RmItems = append(plan.Changes.RmItems, pg)
			continue
		}
		if plan.Changes.Items == nil {
			plan.Changes.Items = map[osdmap.PG][]osdmap.UpmapItem{}
		}
		plan.Changes.Items[pg] = items
	}
	return plan
}

// bestMove finds and makes one move: from the most overfull OSD that
// has one to the most underfull OSD that may take the copy. A move is
// only made if it narrows the spread (the two OSDs' deviations differ by
// more than one) and one of them is beyond maxDev.
func (st *poolState) bestMove(maxDev int) (Move, bool) {
	froms := slices.Clone(st.osds)
	slices.SortStableFunc(froms, func(a, b int32) int { return cmp.Compare(st.dev(b), st.dev(a)) })
	var tos []int32
	for _, o := range st.osds {
		if st.up[o] {
			tos = append(tos, o)
		}
	}
	slices.SortStableFunc(tos, func(a, b int32) int { return cmp.Compare(st.dev(a), st.dev(b)) })
	limit := float64(maxDev)
	if len(tos) == 0 || (st.dev(froms[0]) <= limit && st.dev(tos[0]) >= -limit) {
		return Move{}, false
	}
	want := make([]int32, 0, osdmap.MaxPoolSize)
	for _, from := range froms {
		df := st.dev(from)
		if df-st.dev(tos[0]) <= 1 {
			break // nothing below can narrow the spread
		}
		for _, i := range st.byOSD[from] {
			ps := &st.pgs[i]
			if ps.fixed {
				continue
			}
			for _, to := range tos {
				dt := st.dev(to)
				if df-dt <= 1 || (df <= limit && dt >= -limit) {
					break
				}
				if slices.Contains(ps.set, to) {
					continue
				}
				want = append(want[:0], ps.set...)
				want[slices.Index(want, from)] = to
				if st.limits.Check(want) != nil {
					continue
				}
				if !slices.Equal(applyItems(ps.raw, itemsFor(ps.raw, want)), want) {
					continue // not expressible as pg_upmap_items (a cycle)
				}
				st.move(i, from, to)
				return Move{PG: ps.pg, From: from, To: to}, true
			}
		}
	}
	return Move{}, false
}

// itemsFor returns the pg_upmap_items that turn raw into want, position
// by position, ordered so that a pair whose target is another pair's
// source comes after it (an item is skipped when its target is already
// in the set).
func itemsFor(raw, want []int32) []osdmap.UpmapItem {
	var items []osdmap.UpmapItem
	for i := range min(len(raw), len(want)) {
		if raw[i] != want[i] && raw[i] != crush.ItemNone {
			items = append(items, osdmap.UpmapItem{From: raw[i], To: want[i]})
		}
	}
	// Emit items whose target is no pending item's source first.
	out := make([]osdmap.UpmapItem, 0, len(items))
	for len(items) > 0 {
		k := slices.IndexFunc(items, func(it osdmap.UpmapItem) bool {
			return !slices.ContainsFunc(items, func(o osdmap.UpmapItem) bool { return o.From == it.To })
		})
		if k < 0 {
			k = 0 // a cycle: applyItems will tell
		}
		out = append(out, items[k])
		items = slices.Delete(items, k, k+1)
	}
	return out
}

// applyItems applies items to raw as osdmap does (Ceph's _apply_upmap),
// for targets that are in.
func applyItems(raw []int32, items []osdmap.UpmapItem) []int32 {
	out := slices.Clone(raw)
	for _, it := range items {
		if slices.Contains(out, it.To) {
			continue
		}
		if pos := slices.Index(out, it.From); pos >= 0 {
			out[pos] = it.To
		}
	}
	return out
}

package pgmon

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// stateUnknown is the state of a PG no OSD has reported yet.
const stateUnknown = "unknown"

// pgView is one PG of the current map as the service shows it: its last
// report and the state derived from it and the map.
type pgView struct {
	// stat is the last report; for an unknown PG, the map's placement.
	stat wire.PGStat
	// state is "unknown", "stale+" and the reported state, or the
	// reported state.
	state    string
	reporter int32 // -1: no report
	updated  time.Time
	size     int // the pool's size: copies of each object
	// minSize is the pool's min_size, rule the name of its CRUSH rule
	// (its id if the map has no such rule): for health's reasons.
	minSize int
	rule    string
	pool    string // the pool's name
	// stale says why the PG is stale; empty if it is not.
	stale string
}

// has reports whether the view's state holds the word want ("active" is
// in "active+clean", not in "inactive").
func (v *pgView) has(want string) bool { return hasState(v.state, want) }

func hasState(state, want string) bool {
	return slices.Contains(strings.Split(state, "+"), want)
}

// viewCache holds the views of one map and one version of the state.
type viewCache struct {
	m       *osdmap.Map
	version uint64
	pgs     []pgView
}

// views returns every PG of the current map, by pool and seed, with its
// derived state. The result is shared: callers must not modify it.
func (s *Service) views() []pgView {
	m := s.cfg.Map()
	if m == nil {
		return nil
	}
	if s.cache.m == m && s.cache.version == s.st.version {
		return s.cache.pgs
	}
	var sc osdmap.Scratch
	var out []pgView
	for _, p := range m.Pools() {
		for seed := range p.PGNum {
			pg := osdmap.PG{Pool: p.ID, Seed: seed}
			e, ok := s.st.pgs[pg]
			v := derive(m, pg, p.Size, e, ok, &sc)
			v.minSize, v.rule, v.pool = p.MinSize, ruleName(m, p.CrushRule), p.Name
			out = append(out, v)
		}
	}
	s.cache = viewCache{m: m, version: s.st.version, pgs: out}
	return out
}

// ruleName is the name of CRUSH rule id in m, or its id.
func ruleName(m *osdmap.Map, id int32) string {
	if r := m.Crush().Rule(id); r != nil {
		return r.Name
	}
	return fmt.Sprint(id)
}

// derive makes the view of pg from its stored entry, if any (ok), and m.
// A PG is stale, as in Ceph, when the OSD that reported it is down, or
// is no longer its acting primary and the new primary has not reported
// it yet; and also when the report came from an earlier incarnation of
// its primary: an OSD that restarted has its PGs to peer again, and
// what it said before it stopped no longer holds.
func derive(m *osdmap.Map, pg osdmap.PG, size int, e pgEntry, ok bool, sc *osdmap.Scratch) pgView {
	mp, err := m.PGToUpActing(pg, sc)
	if err != nil {
		mp.ActingPrimary = -1
	}
	if !ok {
		st := wire.PGStat{PG: pg, State: stateUnknown, Up: slices.Clone(mp.Up), Acting: slices.Clone(mp.Acting),
			Primary: mp.ActingPrimary}
		return pgView{stat: st, state: stateUnknown, reporter: -1, size: size}
	}
	v := pgView{stat: e.stat, state: cmp.Or(e.stat.State, stateUnknown), reporter: e.reporter, updated: e.updated, size: size}
	switch {
	case !m.IsUp(e.reporter):
		v.stale = fmt.Sprintf("osd.%d, which reported it, is down", e.reporter)
	case mp.ActingPrimary < 0:
		v.stale = "no OSD of its acting set is up"
	case mp.ActingPrimary != e.reporter:
		v.stale = fmt.Sprintf("its primary is now osd.%d, which has not reported it yet", mp.ActingPrimary)
	case e.stat.ReportedEpoch < uint64(m.OSD(e.reporter).UpFrom):
		v.stale = fmt.Sprintf("osd.%d restarted (up from epoch %d) and has not reported it since", e.reporter, m.OSD(e.reporter).UpFrom)
	}
	if v.stale != "" && !v.has("stale") {
		v.state = "stale+" + v.state
	}
	return v
}

// summary is the cluster's PGs and usage in numbers ("pg stat").
type summary struct {
	pools, pgs int
	byState    []StateCount // most PGs first
	objects    int64
	bytes      int64
	copies     int64 // object copies the pools' sizes ask for
	degraded   int64
	misplaced  int64
	unfound    int64
	// Usage of the stores of the OSDs that are up.
	total, used, avail uint64
}

// summarize adds up the views and the usage of the OSDs up in m.
func (s *Service) summarize() summary {
	m := s.cfg.Map()
	var sum summary
	if m == nil {
		return sum
	}
	sum.pools = len(m.Pools())
	counts := map[string]int{}
	for _, v := range s.views() {
		sum.pgs++
		counts[v.state]++
		st := &v.stat
		sum.objects += st.Objects
		sum.bytes += st.Bytes
		sum.copies += st.Objects * int64(v.size)
		sum.degraded += st.Degraded
		sum.misplaced += st.Misplaced
		sum.unfound += st.Unfound
	}
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		sum.byState = append(sum.byState, StateCount{Name: name, Num: counts[name]})
	}
	slices.SortStableFunc(sum.byState, func(a, b StateCount) int { return cmp.Compare(b.Num, a.Num) })
	for id, u := range s.st.osds {
		if m.IsUp(id) {
			sum.total += u.total
			sum.used += u.used
			sum.avail += u.avail
		}
	}
	return sum
}

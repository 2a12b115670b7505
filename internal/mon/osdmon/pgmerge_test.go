package osdmon

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// pgTable is PG statistics as a test sets them: every PG of the map
// active+clean on the OSDs the map gives it, in the interval of epoch
// interval, at version 0'0, unless overridden in pgs.
type pgTable struct {
	pgStatsInput
	m        func() *osdmap.Map
	interval uint64
	pgs      map[osdmap.PG]wire.PGStat
}

func (p *pgTable) PGStat(pg osdmap.PG) (wire.PGStat, bool) {
	if st, ok := p.pgs[pg]; ok {
		return st, !strings.HasPrefix(st.State, "stale") && st.State != "unknown"
	}
	var sc osdmap.Scratch
	mp, err := p.m().PGToUpActing(pg, &sc)
	if err != nil {
		return wire.PGStat{PG: pg, State: "unknown"}, false
	}
	return wire.PGStat{PG: pg, State: "active+clean", Up: mp.Up, Acting: mp.Acting, SameIntervalSince: p.interval,
		LastUpdate: fmt.Sprintf("%d'%d", 3, pg.Seed)}, true
}

func TestNextMerge(t *testing.T) {
	pool := func(pgNum, pgpNum, target, pending uint32) *osdmap.Pool {
		p := &osdmap.Pool{ID: 1, Name: "p", PGNum: pgNum, PGPNum: pgpNum}
		p.SetTargets(target, min(target, pgpNum))
		if pending != 0 {
			p.PGNumPending, p.PendingSince = pending, 10
		}
		return p
	}
	clean := func(interval uint64, except map[uint32]wire.PGStat) func(osdmap.PG) (wire.PGStat, bool) {
		return func(pg osdmap.PG) (wire.PGStat, bool) {
			if st, ok := except[pg.Seed]; ok {
				st.PG = pg
				return st, st.State != "unknown"
			}
			return wire.PGStat{PG: pg, State: "active+clean", Acting: []int32{0, 1, 2}, SameIntervalSince: interval,
				LastUpdate: "4'7"}, true
		}
	}
	for _, tc := range []struct {
		name string
		pool *osdmap.Pool
		stat func(osdmap.PG) (wire.PGStat, bool)
		want mergeStep
	}{
		{"not merging", pool(16, 16, 16, 0), clean(1, nil), mergeStep{}},
		{"pgp_num first", pool(16, 12, 8, 0), clean(1, nil), mergeStep{Why: "waiting for pgp_num 12 to step down to 8"}},
		{"clean and together: hold writes", pool(16, 8, 8, 0), clean(1, nil), mergeStep{Var: "pg_num_pending", N: 8}},
		{"a source degraded", pool(16, 8, 8, 0), clean(1, map[uint32]wire.PGStat{13: {State: "active+degraded", Acting: []int32{0, 1}}}),
			mergeStep{Why: "waiting to merge pg_num 16 to 8: pg 1.d is active+degraded, not active+clean"}},
		{"a target unknown", pool(16, 8, 8, 0), clean(1, map[uint32]wire.PGStat{5: {State: "unknown"}}),
			mergeStep{Why: "pg 1.5 is unknown, without a current report"}},
		{"a PG outside the merge may be anything", pool(16, 4, 12, 0), clean(1, map[uint32]wire.PGStat{8: {State: "peering"}}),
			mergeStep{Var: "pg_num_pending", N: 12}},
		{"apart", pool(16, 8, 8, 0), clean(1, map[uint32]wire.PGStat{9: {State: "active+clean", Acting: []int32{0, 1, 3}}}),
			mergeStep{Why: "pg 1.9 on [0 1 3] and its target 1.1 on [0 1 2] are not on the same OSDs"}},
		{"together in another order", pool(16, 8, 8, 0), clean(1, map[uint32]wire.PGStat{9: {State: "active+clean", Acting: []int32{2, 0, 1}}}),
			mergeStep{Var: "pg_num_pending", N: 8}},
		{"pending: reports from before the hold", pool(16, 8, 8, 8), clean(9, nil),
			mergeStep{Why: "merging pg_num 16 to 8, writes to the merging PGs held: pg 1.8 has not reported since it stopped taking writes (epoch 10)"}},
		{"pending: reported since", pool(16, 8, 8, 8), clean(10, nil), mergeStep{Var: "pg_num_actual", N: 8}},
		{"pending: a version unreadable", pool(16, 8, 8, 8), clean(11, map[uint32]wire.PGStat{2: {State: "active+clean", Acting: []int32{0, 1, 2}, SameIntervalSince: 11, LastUpdate: "?"}}),
			mergeStep{Why: `pg 1.2 reported last update "?"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nextMerge(tc.pool, tc.stat)
			if got.Var != tc.want.Var || got.N != tc.want.N || !strings.Contains(got.Why, tc.want.Why) {
				t.Fatalf("nextMerge = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The leader's ticks take a merge from pg_num 16 to 8: pgp_num steps
// down, then writes are held, then pg_num drops with the versions the
// PGs reported recorded; a merge is refused while PGs are unclean.
func TestTickMergesPGs(t *testing.T) {
	m := newBootedCluster(t, 4, 1)
	stats := &pgTable{pgStatsInput: pgStatsInput{current: true}, m: m.svc.Map, interval: 1, pgs: map[osdmap.PG]wire.PGStat{}}
	m.svc.SetPGStats(stats)
	must(t, m.run("config set", "who", "mon", "name", "target_max_misplaced_ratio", "value", "0.5"))
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "16", "size", "2"))
	pool := func() osdmap.Pool { return *m.svc.Map().PoolByName("rbd") }

	// Bad input: nothing to merge below 1, nor above the pool limit, nor
	// while a PG is unclean.
	for _, tc := range []struct {
		val    string
		code   int32
		status string
	}{
		{"0", moncmd.EINVAL, "pg_num must be at least 1, not 0"},
		{"65537", moncmd.EINVAL, "pg_num 65537 is above the limit of 65536 PGs per pool"},
		{"-3", moncmd.EINVAL, `"-3" is not a count`},
	} {
		r := m.run("osd pool set", "pool", "rbd", "var", "pg_num", "val", tc.val)
		if r.Code != tc.code || !strings.Contains(r.Status, tc.status) {
			t.Fatalf("pg_num %s: %d %q, want %d %q", tc.val, r.Code, r.Status, tc.code, tc.status)
		}
	}
	stats.pgs[osdmap.PG{Pool: 1, Seed: 3}] = wire.PGStat{PG: osdmap.PG{Pool: 1, Seed: 3}, State: "active+recovering+degraded"}
	r := m.run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "8")
	if r.Code != moncmd.EBUSY || !strings.Contains(r.Status, "cannot merge PGs while pg 1.3 is active+recovering+degraded (1 of its 16 PGs are not active+clean)") {
		t.Fatalf("merge while unclean: %d %q", r.Code, r.Status)
	}
	if p := pool(); p.Merging() {
		t.Fatalf("a refused merge changed the pool: %v", p.String())
	}
	delete(stats.pgs, osdmap.PG{Pool: 1, Seed: 3})
	must(t, m.run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "8"))
	if p := pool(); p.PGNum != 16 || p.PGNumTarget != 8 || p.PGPNumTarget != 8 {
		t.Fatalf("after pg_num 8: %v", p.String())
	}
	// The operator cannot take the monitors' steps.
	if r := m.run("osd pool set", "pool", "rbd", "var", "pg_num_pending", "val", "8"); r.Code != moncmd.EBUSY {
		t.Fatalf("pg_num_pending by hand: %d %q", r.Code, r.Status)
	}

	// A source kept apart from its target by an upmap entry.
	var sc osdmap.Scratch
	mp, err := m.svc.Map().PGToUpActing(osdmap.PG{Pool: 1, Seed: 9}, &sc)
	if err != nil {
		t.Fatal(err)
	}
	other := int32(0)
	for slices.Contains(mp.Up, other) {
		other++
	}
	must(t, m.run("osd pg-upmap-items", "pgid", "1.9", "mappings", fmt.Sprint(mp.Up[0], " ", other)))

	// Step 1: pgp_num down to 8 (limit 0.5: 4 PGs a step).
	for _, want := range []uint32{12, 8} {
		for _, r := range m.tick() {
			must(t, r)
		}
		if p := pool(); p.PGPNum != want || p.PGNumPending != 0 {
			t.Fatalf("after a tick: %v, want pgp_num %d", p.String(), want)
		}
	}
	// The leader removes the upmap entry before the merge goes on.
	if r := m.tick(); len(r) != 1 || !strings.Contains(r[0].Status, "no pg_upmap_items on 1.9") {
		t.Fatalf("tick with pg 1.9 upmapped: %+v", r)
	}
	// Step 2: a PG degraded holds the merge; then writes are held.
	stats.pgs[osdmap.PG{Pool: 1, Seed: 9}] = wire.PGStat{PG: osdmap.PG{Pool: 1, Seed: 9}, State: "active+undersized+degraded"}
	if r := m.tick(); len(r) != 0 {
		t.Fatalf("tick with pg 1.9 degraded sent %v", r)
	}
	if r := m.run("osd pool get", "pool", "rbd", "var", "merge_status"); !strings.Contains(r.Text, "pg 1.9 is active+undersized+degraded") {
		t.Fatalf("merge_status while degraded: %q", r.Text)
	}
	delete(stats.pgs, osdmap.PG{Pool: 1, Seed: 9})
	// Nor while the last pgp_num step's PGs have not all reported.
	stats.current = false
	if r := m.tick(); len(r) != 0 {
		t.Fatalf("tick with stats not current sent %v", r)
	}
	stats.current = true
	for _, r := range m.tick() {
		must(t, r)
	}
	p := pool()
	if p.PGNumPending != 8 || p.PendingSince != m.svc.Map().Epoch() || p.PGNum != 16 {
		t.Fatalf("after the hold: %v (pending since %d)", p.String(), p.PendingSince)
	}
	// Nor may upmaps or pgp_num change while the step is pending.
	if r := m.run("osd pg-upmap-items", "pgid", "1.9", "mappings", fmt.Sprint(mp.Up[0], " ", other)); r.Code != moncmd.EBUSY ||
		!strings.Contains(r.Status, "pool 'rbd' is merging its PGs (pg_num 16 to 8)") {
		t.Fatalf("upmap while pending: %d %q", r.Code, r.Status)
	}
	if r := m.run("osd pool set", "pool", "rbd", "var", "pgp_num_actual", "val", "4"); r.Code != moncmd.EBUSY {
		t.Fatalf("pgp_num_actual while pending: %d %q", r.Code, r.Status)
	}
	// Step 3 waits for reports from the new interval.
	if r := m.tick(); len(r) != 0 {
		t.Fatalf("tick before the PGs reported sent %v", r)
	}
	stats.interval = uint64(p.PendingSince)
	for _, r := range m.tick() {
		must(t, r)
	}
	p = pool()
	if p.PGNum != 8 || p.PGNumPending != 0 || p.Merging() || p.LastMerge.From != 16 || len(p.LastMerge.PGs) != 8 {
		t.Fatalf("after the merge: %v, last merge %+v", p.String(), p.LastMerge)
	}
	for i, g := range p.LastMerge.PGs {
		want := osdmap.MergedPG{Source: uint32(8 + i), SourceVersion: osdmap.PGVersion{Epoch: 3, Counter: uint64(8 + i)},
			TargetVersion: osdmap.PGVersion{Epoch: 3, Counter: uint64(i)}}
		if g != want {
			t.Fatalf("merged PG %d: %+v, want %+v", i, g, want)
		}
	}
	if r := m.tick(); len(r) != 0 {
		t.Fatalf("tick after the merge sent %v", r)
	}
	// Growing again splits; the merge record is history.
	must(t, m.run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "12"))
	if p := pool(); p.LastMerge.From != 0 || p.PGNum != 12 {
		t.Fatalf("after growing: %v %+v", p.String(), p.LastMerge)
	}
}

// Setting pg_num back cancels a pending merge step: the PGs take writes
// again.
func TestPGNumCancelsPendingMerge(t *testing.T) {
	m := newBootedCluster(t, 4, 1)
	stats := &pgTable{pgStatsInput: pgStatsInput{current: true}, m: m.svc.Map, interval: 1, pgs: map[osdmap.PG]wire.PGStat{}}
	m.svc.SetPGStats(stats)
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "8", "pgp_num", "4", "size", "2"))
	must(t, m.run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "4"))
	for _, r := range m.tick() {
		must(t, r)
	}
	if p := *m.svc.Map().PoolByName("rbd"); p.PGNumPending != 4 {
		t.Fatalf("no step pending: %v", p.String())
	}
	if r := m.run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "6"); r.Code != moncmd.EBUSY ||
		!strings.Contains(r.Status, "a merge step to pg_num 4 is under way; set pg_num 4 or lower, or 8 to cancel it") {
		t.Fatalf("pg_num 6 while merging to 4: %d %q", r.Code, r.Status)
	}
	r := must(t, m.run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "8"))
	if !strings.Contains(r.Status, "the pending merge step is cancelled") {
		t.Fatalf("cancel: %q", r.Status)
	}
	if p := *m.svc.Map().PoolByName("rbd"); p.PGNumPending != 0 || p.Merging() || p.PGNum != 8 {
		t.Fatalf("after the cancel: %v", p.String())
	}
}

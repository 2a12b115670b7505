package osdmon

import (
	"fmt"
	"testing"

	"github.com/cuttlestore/cuttle/osdmap"
)

func TestNextPGPNum(t *testing.T) {
	for _, tc := range []struct {
		name               string
		cur, target, pgNum uint32
		unclean, limit     float64
		want               uint32
	}{
		{"at target", 32, 32, 64, 0, 0.05, 32},
		{"clean: half the limit's worth of 64 PGs is 1", 32, 64, 64, 0, 0.05, 33},
		{"clean: half the limit's worth of 1024 PGs is 25", 512, 1024, 1024, 0, 0.05, 537},
		{"room left under the limit bounds the step", 512, 1024, 1024, 0.04, 0.05, 522},
		{"at the limit: wait", 512, 1024, 1024, 0.05, 0.05, 512},
		{"above the limit: wait", 32, 64, 64, 0.3, 0.05, 32},
		{"little room still moves one PG", 512, 1024, 1024, 0.0499, 0.05, 513},
		{"the last step stops at the target", 1020, 1024, 1024, 0, 0.05, 1024},
		{"down toward a lower target", 1024, 512, 1024, 0, 0.05, 999},
		{"down, the last step stops at the target", 520, 512, 1024, 0, 0.05, 512},
		{"limit 1 moves half the pool at once", 32, 64, 64, 0, 1, 64},
		{"limit 0 never steps", 32, 64, 64, 0, 0, 32},
		{"a small pool steps one PG", 4, 8, 8, 0, 0.05, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextPGPNum(tc.cur, tc.target, tc.pgNum, tc.unclean, tc.limit); got != tc.want {
				t.Fatalf("nextPGPNum(%d, %d, %d, %g, %g) = %d, want %d", tc.cur, tc.target, tc.pgNum, tc.unclean, tc.limit, got, tc.want)
			}
		})
	}
}

// pgStatsInput is the PG statistics the stepping reads, as a test sets
// them: the share unclean, and whether the stats are current.
type pgStatsInput struct {
	unclean float64
	current bool
	asked   []osdmap.Epoch // the epochs StatsCurrent was asked about
}

func (p *pgStatsInput) UncleanRatio() float64 { return p.unclean }

func (p *pgStatsInput) StatsCurrent(_ int64, since osdmap.Epoch) bool {
	p.asked = append(p.asked, since)
	return p.current
}

// The leader's ticks step pgp_num toward its target one bounded step at
// a time, only while the statistics are current and the cluster is
// below target_max_misplaced_ratio, and stop at the target.
func TestTickStepsPGPNum(t *testing.T) {
	m := newBootedCluster(t, 4, 1)
	stats := &pgStatsInput{current: true}
	m.svc.SetPGStats(stats)
	must(t, m.run("config set", "who", "mon", "name", "target_max_misplaced_ratio", "value", "0.2"))
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "32", "size", "2"))
	must(t, m.run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "64"))
	if r := m.tick(); len(r) != 0 {
		t.Fatalf("tick with no pgp_num target pending sent %v", r)
	}
	must(t, m.run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "64"))
	pool := func() osdmap.Pool { return *m.svc.Map().PoolByName("rbd") }

	// Not current: no step (the previous step's moves are not counted yet).
	stats.current = false
	if r := m.tick(); len(r) != 0 {
		t.Fatalf("tick with stats not current sent %v", r)
	}
	if want := pool().LastChange; len(stats.asked) != 1 || stats.asked[0] != want {
		t.Fatalf("StatsCurrent asked about epochs %v, want [%d] (the pool's last change)", stats.asked, want)
	}
	// Above the limit: no step.
	stats.current, stats.unclean = true, 0.25
	if r := m.tick(); len(r) != 0 || pool().PGPNum != 32 {
		t.Fatalf("tick above the limit sent %v, pgp_num %d", r, pool().PGPNum)
	}
	// Clean: steps of half the limit's worth (0.1 × 64 = 6 PGs).
	stats.unclean = 0
	var seen []uint32
	for range 10 {
		m.tick()
		seen = append(seen, pool().PGPNum)
	}
	want := []uint32{38, 44, 50, 56, 62, 64, 64, 64, 64, 64}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("pgp_num after each tick %v, want %v", seen, want)
	}
	p := pool()
	if p.PGPNumTarget != 0 {
		t.Fatalf("pgp_num_target %d still pending at the target", p.PGPNumTarget)
	}
	if r := m.run("osd pool get", "pool", "rbd", "var", "pgp_num_target"); r.Text != "pgp_num_target: 64\n" {
		t.Fatalf("osd pool get pgp_num_target: %q", r.Text)
	}
	// A size-1 pool (confirmed when made) steps too.
	must(t, m.run("osd pool create", "pool", "one", "pg_num", "8", "size", "1", "yes_i_really_mean_it", "true"))
	must(t, m.run("osd pool set", "pool", "one", "var", "pg_num", "val", "16", "yes_i_really_mean_it", "true"))
	must(t, m.run("osd pool set", "pool", "one", "var", "pgp_num", "val", "16", "yes_i_really_mean_it", "true"))
	for _, r := range m.tick() {
		must(t, r)
	}
	if got := m.svc.Map().PoolByName("one").PGPNum; got != 9 {
		t.Fatalf("size-1 pool: pgp_num %d after a tick, want 9", got)
	}
	// Down again, with some data unclean: room 0.2 - 0.15 = 0.05, 3 PGs.
	must(t, m.run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "32"))
	stats.unclean = 0.15
	m.tick()
	if got := pool().PGPNum; got != 61 {
		t.Fatalf("pgp_num after a step down with 0.15 unclean: %d, want 61", got)
	}
}

package scrub

import (
	"slices"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/osdmap"
)

func TestNext(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	iv := Intervals{Light: 24 * time.Hour, Deep: 7 * 24 * time.Hour}
	pgA, pgB := osdmap.PG{Pool: 1, Seed: 0}, osdmap.PG{Pool: 1, Seed: 1}
	// lightDue and deepDue are how long after its last scrub each PG is
	// due one.
	lightDue := func(pg osdmap.PG) time.Duration { return stretched(iv.Light, spread(pg)) }
	deepDue := func(pg osdmap.PG) time.Duration { return stretched(iv.Deep, spread(pg)) }
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	longAgo := ago(365 * 24 * time.Hour)
	// fresh is a PG scrubbed both ways a minute ago.
	fresh := func(pg osdmap.PG) Candidate {
		return Candidate{PG: pg, LastScrub: ago(time.Minute), LastDeepScrub: ago(time.Minute), Since: longAgo}
	}
	for _, tc := range []struct {
		name       string
		candidates []Candidate
		want       *Job
	}{
		{name: "no candidates"},
		{name: "a PG scrubbed recently is not chosen", candidates: []Candidate{fresh(pgA), fresh(pgB)}},
		{name: "a new PG is not due", candidates: []Candidate{{PG: pgA, Since: ago(time.Hour)}}},
		{name: "a new PG is due a light scrub an interval after it came",
			candidates: []Candidate{{PG: pgA, Since: ago(lightDue(pgA))}}, want: &Job{PG: pgA}},
		{name: "not a moment before",
			candidates: []Candidate{{PG: pgA, Since: ago(lightDue(pgA) - time.Nanosecond)}}},
		{name: "a light scrub is due",
			candidates: []Candidate{fresh(pgA), {PG: pgB, LastScrub: ago(lightDue(pgB) + time.Second), LastDeepScrub: ago(time.Hour), Since: longAgo}},
			want:       &Job{PG: pgB}},
		{name: "a deep scrub is due",
			candidates: []Candidate{{PG: pgA, LastScrub: ago(time.Hour), LastDeepScrub: ago(deepDue(pgA)), Since: longAgo}, fresh(pgB)},
			want:       &Job{PG: pgA, Deep: true}},
		{name: "a PG due both ways gets the deep scrub",
			candidates: []Candidate{{PG: pgA, Since: ago(deepDue(pgA) + time.Hour)}}, want: &Job{PG: pgA, Deep: true}},
		{name: "stamps older than the PG's coming count from its coming",
			candidates: []Candidate{{PG: pgA, LastScrub: longAgo, LastDeepScrub: longAgo, Since: ago(time.Hour)}}},
		{name: "the most overdue PG first",
			candidates: []Candidate{
				{PG: pgA, LastScrub: ago(lightDue(pgA) + time.Hour), LastDeepScrub: ago(time.Hour), Since: longAgo},
				{PG: pgB, LastScrub: ago(lightDue(pgB) + 2*time.Hour), LastDeepScrub: ago(time.Hour), Since: longAgo},
			},
			want: &Job{PG: pgB}},
		{name: "a more overdue light scrub before a deep one",
			candidates: []Candidate{
				{PG: pgA, LastScrub: ago(time.Hour), LastDeepScrub: ago(deepDue(pgA) + time.Hour), Since: longAgo},
				{PG: pgB, LastScrub: ago(lightDue(pgB) + 2*time.Hour), LastDeepScrub: ago(time.Hour), Since: longAgo},
			},
			want: &Job{PG: pgB}},
		{name: "equally late: the higher PG",
			candidates: []Candidate{{PG: pgA, Since: ago(lightDue(pgA) + time.Hour)}, {PG: pgB, Since: ago(lightDue(pgB) + time.Hour)}},
			want:       &Job{PG: pgB}},
		{name: "equally late: the higher PG, whatever the order",
			candidates: []Candidate{{PG: pgB, Since: ago(lightDue(pgB) + time.Hour)}, {PG: pgA, Since: ago(lightDue(pgA) + time.Hour)}},
			want:       &Job{PG: pgB}},
		// A PG's deep scrub, due but less late than the best so far,
		// gives way to its light scrub when that is later still.
		{name: "a due deep scrub less late than the best: the PG's later light one",
			candidates: []Candidate{
				{PG: pgA, LastScrub: ago(lightDue(pgA) + 2*time.Hour), LastDeepScrub: ago(time.Hour), Since: longAgo},
				{PG: pgB, LastScrub: ago(lightDue(pgB) + 3*time.Hour), LastDeepScrub: ago(deepDue(pgB) + time.Hour), Since: longAgo},
			},
			want: &Job{PG: pgB}},
		{name: "noscrub holds back a light scrub",
			candidates: []Candidate{{PG: pgA, Since: ago(lightDue(pgA) + time.Hour), NoScrub: true}}},
		{name: "noscrub lets a due deep scrub run",
			candidates: []Candidate{{PG: pgA, Since: ago(deepDue(pgA) + time.Hour), NoScrub: true}}, want: &Job{PG: pgA, Deep: true}},
		{name: "nodeep-scrub makes a due deep scrub a light one",
			candidates: []Candidate{{PG: pgA, Since: ago(deepDue(pgA) + time.Hour), NoDeepScrub: true}}, want: &Job{PG: pgA}},
		{name: "nodeep-scrub holds back a deep scrub whose light one is not due",
			candidates: []Candidate{{PG: pgA, LastScrub: ago(time.Hour), LastDeepScrub: ago(deepDue(pgA) + time.Hour), Since: longAgo, NoDeepScrub: true}}},
		{name: "both flags hold back everything",
			candidates: []Candidate{{PG: pgA, Since: longAgo, NoScrub: true, NoDeepScrub: true}}},
		{name: "a flagged PG gives way to another",
			candidates: []Candidate{
				{PG: pgA, Since: ago(lightDue(pgA) + 3*time.Hour), NoScrub: true},
				{PG: pgB, Since: ago(lightDue(pgB) + time.Hour)},
			},
			want: &Job{PG: pgB}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Next(now, iv, tc.candidates)
			// The answer is the set's: the candidates reversed give it too.
			reversed := slices.Clone(tc.candidates)
			slices.Reverse(reversed)
			rgot, rok := Next(now, iv, reversed)
			if rgot != got || rok != ok {
				t.Fatalf("in reverse order chose %+v, %v; in order %+v, %v", rgot, rok, got, ok)
			}
			switch {
			case tc.want == nil && ok:
				t.Fatalf("chose %+v, want none", got)
			case tc.want != nil && !ok:
				t.Fatalf("chose none, want %+v", *tc.want)
			case tc.want != nil && got != *tc.want:
				t.Fatalf("chose %+v, want %+v", got, *tc.want)
			}
		})
	}
}

// Each PG's intervals stretch by its own fixed share of up to half, so
// PGs that came together come due apart.
func TestSpread(t *testing.T) {
	seen := map[float64]bool{}
	for seed := range uint32(64) {
		pg := osdmap.PG{Pool: 3, Seed: seed}
		f := spread(pg)
		if f < 0 || f >= 1 {
			t.Fatalf("spread(%v) = %v, out of [0, 1)", pg, f)
		}
		if spread(pg) != f {
			t.Fatalf("spread(%v) changes", pg)
		}
		if d := stretched(time.Hour, f); d < time.Hour || d >= 90*time.Minute {
			t.Fatalf("an hour stretched by %v is %v", f, d)
		}
		seen[f] = true
	}
	if len(seen) < 32 {
		t.Errorf("64 PGs share %d spreads", len(seen))
	}
}

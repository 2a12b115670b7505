package pgmon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// availabilityDetail returns PG_AVAILABILITY's summary and its detail
// line for pg, failing if the check or the line is missing.
func availabilityDetail(t *testing.T, tm *testMon, pg string) (summary, line string) {
	t.Helper()
	for _, c := range tm.svc.HealthChecks(tm.now) {
		if c.Code != "PG_AVAILABILITY" {
			continue
		}
		for _, l := range c.Detail {
			if strings.HasPrefix(l, "pg "+pg+" ") {
				return c.Summary, l
			}
		}
		t.Fatalf("PG_AVAILABILITY names no pg %s:\n%s", pg, strings.Join(c.Detail, "\n"))
	}
	t.Fatal("no PG_AVAILABILITY")
	return "", ""
}

// reportPG0 reports every PG clean but 1.0, which stat changes.
func reportPG0(tm *testMon, stat func(*wire.PGStat)) {
	tm.reportAll(func(mp osdmap.Mapping) wire.PGStat {
		s := tm.clean(mp)
		if mp.PG.Seed == 0 {
			stat(&s)
		}
		return s
	})
}

// A PG below its pool's min_size says how many copies are up; when CRUSH
// placed fewer than the pool's size (a rule whose failure domain has too
// few buckets, as replicated_rule on one host), it says so and names the
// rule.
func TestAvailabilityBelowMinSize(t *testing.T) {
	tm := newTestMon(t)
	primary := tm.primary(pgid(t, "1.0"))
	reportPG0(tm, func(s *wire.PGStat) {
		s.State, s.Up, s.Acting = "undersized+degraded+peered", []int32{primary}, []int32{primary}
	})
	tm.now = t0.Add(time.Minute)
	sum, line := availabilityDetail(t, tm, "1.0")
	rule := tm.m.Crush().Rule(tm.m.Pool(1).CrushRule).Name
	want := fmt.Sprintf("pg 1.0 is undersized+degraded+peered for 1m0s: 1 of 3 copies up, below min_size 2; "+
		"CRUSH rule %s places only 1 (too few failure domains for size 3? cuttle osd tree; cuttle osd pool set pool1 crush_rule RULE), acting [%d]", rule, primary)
	if sum != "Reduced data availability: 1 pg inactive, 1 pg below min_size" || line != want {
		t.Errorf("got\n%s\n%s\nwant\n%s", sum, line, want)
	}
}

// A peering PG says for how long: since the report that changed its
// state, not since the last report, which repeats it.
func TestAvailabilityPeeringSince(t *testing.T) {
	tm := newTestMon(t)
	peering := func(s *wire.PGStat) { s.State = "peering" }
	reportPG0(tm, peering)
	tm.now = t0.Add(45 * time.Second)
	reportPG0(tm, peering) // unchanged: stored as it was
	tm.now = t0.Add(2 * time.Minute)
	sum, line := availabilityDetail(t, tm, "1.0")
	mp, err := tm.m.PGToUpActing(pgid(t, "1.0"), &osdmap.Scratch{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pg 1.0 is peering for 2m0s, acting %s: its primary osd.%d is asking the OSDs that may hold its newest writes",
		osdmap.FormatOSDs(mp.Acting), mp.ActingPrimary)
	if sum != "Reduced data availability: 1 pg inactive, 1 pg peering" || line != want {
		t.Errorf("got\n%s\n%s\nwant\n%s", sum, line, want)
	}
}

// A down PG names the OSDs it waits for and the reason its primary gave.
func TestAvailabilityDown(t *testing.T) {
	tm := newTestMon(t)
	reportPG0(tm, func(s *wire.PGStat) {
		s.State, s.BlockedBy, s.DownReason = "down", []int32{1}, "osd.1 may hold writes of epochs 5-7"
	})
	sum, line := availabilityDetail(t, tm, "1.0")
	if sum != "Reduced data availability: 1 pg inactive, 1 pg down" ||
		!strings.HasSuffix(line, ", blocked by [1] (osd.1 may hold writes of epochs 5-7)") {
		t.Errorf("got\n%s\n%s", sum, line)
	}
}

// An unknown PG says its primary has not reported it yet, naming the
// primary, or that no OSD is up to serve it.
func TestAvailabilityUnknown(t *testing.T) {
	tm := newTestMon(t)
	_, line := availabilityDetail(t, tm, "1.2")
	mp, err := tm.m.PGToUpActing(pgid(t, "1.2"), &osdmap.Scratch{})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("pg 1.2 is unknown: no report from its primary osd.%d yet, acting %s", mp.ActingPrimary,
		osdmap.FormatOSDs(mp.Acting)); line != want {
		t.Errorf("got\n%s\nwant\n%s", line, want)
	}
	for id := range tm.m.MaxOSD() {
		tm.markDown(id)
	}
	if _, line := availabilityDetail(t, tm, "1.2"); line != "pg 1.2 is unknown: no OSD is up to serve it, acting [] (are the OSDs up and in? cuttle osd tree)" {
		t.Errorf("with every OSD down: %s", line)
	}
}

package pgmon

import (
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestProgressEstimate(t *testing.T) {
	var p progress
	if _, ok := p.estimate(t0); ok {
		t.Fatal("estimate without samples")
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	p.add(at(0), 100)
	if e, ok := p.estimate(at(0)); !ok || e.rate != 0 || e.done != 0 || e.left != 100 {
		t.Errorf("first sample: %+v", e)
	}
	p.add(at(10), 80)
	p.add(at(20), 60)
	e, _ := p.estimate(at(20))
	if e.rate != 2 || e.eta != 30*time.Second || e.done != 0.4 || e.peak != 100 {
		t.Errorf("after 20 s: %+v", e)
	}
	// Stalled: the rate over the last minute falls to zero.
	if e, _ := p.estimate(at(20 + 61)); e.rate != 0 || e.eta != 0 || e.done != 0.4 {
		t.Errorf("stalled: %+v", e)
	}
	// The window slides: from 100 s on, only the last minute counts.
	p.add(at(100), 50)
	p.add(at(130), 20)
	if e, _ := p.estimate(at(130)); e.rate != 40.0/60 || e.eta != 30*time.Second {
		t.Errorf("sliding window: %+v", e)
	}
	if len(p.samples) > 3 {
		t.Errorf("samples kept beyond the window: %+v", p.samples)
	}
	// A growing backlog raises the peak; it is new damage, not negative
	// progress. Zero ends the recovery.
	p.add(at(140), 300)
	if e, _ := p.estimate(at(140)); e.peak != 300 || e.rate != 40.0/60 || !e.since.Equal(at(0)) {
		t.Errorf("growing backlog: %+v", e)
	}
	p.add(at(150), 0)
	if _, ok := p.estimate(at(150)); ok {
		t.Error("estimate after recovery ended")
	}
}

// "status" shows the data section with PGs by state and, while copies
// are degraded, the recovery's progress.
func TestStatusText(t *testing.T) {
	tm := newTestMon(t)
	if got, want := tm.svc.StatusText(tm.now), "  data:\n"+
		"    pools:   1 pool, 4 pgs\n"+
		"    objects: 0 objects, 0 B\n"+
		"    usage:   0 B used, 0 B / 0 B avail\n"+
		"    pgs:     100.000% pgs unknown\n"+
		"             4 unknown\n"; got != want {
		t.Errorf("before reports:\n%s\nwant\n%s", got, want)
	}
	degraded := func(n int64) func(osdmap.Mapping) wire.PGStat {
		return func(mp osdmap.Mapping) wire.PGStat {
			if mp.PG.Seed != 0 {
				return tm.clean(mp)
			}
			s := tm.withState("active+recovering+degraded")(mp)
			s.Degraded, s.Objects = n, 12
			return s
		}
	}
	tm.reportAll(degraded(12))
	if got := tm.svc.StatusText(tm.now); !strings.Contains(got, "recovery: no progress yet, 0% done\n      [") {
		t.Errorf("degraded:\n%s", got)
	}
	tm.now = t0.Add(4 * time.Second)
	tm.reportAll(degraded(4))
	got := tm.svc.StatusText(tm.now)
	want := "  data:\n" +
		"    pools:   1 pool, 4 pgs\n" +
		"    objects: 18 objects, 32 KiB\n" +
		"    usage:   3.0 GiB used, 27 GiB / 30 GiB avail\n" +
		"    pgs:     4/54 objects degraded (7.407%)\n" +
		"             3 active+clean\n" +
		"             1 active+recovering+degraded\n" +
		"\n  progress:\n" +
		"    recovery: 2.0 objects/s, 66% done, ~2s left\n" +
		"      [====================..........] 4 objects left\n"
	if got != want {
		t.Errorf("recovering:\n%s\nwant\n%s", got, want)
	}
	if stat := tm.statText(); !strings.HasSuffix(stat, "; 4/54 objects degraded (7.407%); 2.0 objects/s recovering\n") {
		t.Errorf("pg stat: %q", stat)
	}
	tm.now = t0.Add(2 * time.Minute)
	if got := tm.svc.StatusText(tm.now); !strings.Contains(got, "recovery: no progress in the last 1m0s, 66% done\n") {
		t.Errorf("stalled:\n%s", got)
	}
	tm.reportAll(degraded(0))
	if got := tm.svc.StatusText(tm.now); strings.Contains(got, "progress") {
		t.Errorf("recovered:\n%s", got)
	}
}

package pgmon

import (
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The OSDs' reported loads reach the map through "osd set-loads", at
// most once per LoadPublishInterval, and only when they differ from the
// map's.
func TestTickPublishesLoads(t *testing.T) {
	tm := newTestMon(t)
	report := func(id int32, l osdmap.Load) {
		t.Helper()
		must(t, tm.report(wire.PGStatsReport{OSD: id, Epoch: uint64(tm.m.Epoch()), Load: l}))
	}
	report(0, osdmap.Load{})
	if cmds := tm.svc.Tick(tm.now); len(cmds) != 0 {
		t.Fatalf("idle OSDs, idle map: Tick asks %v", cmds)
	}
	report(0, osdmap.Load{Disk: 40, CPU: 10, Memory: 70})
	report(2, osdmap.Load{Disk: 100})
	cmds := tm.svc.Tick(tm.now)
	if len(cmds) != 1 || cmds[0].Prefix != "osd set-loads" || cmds[0].Args["loads"] != "0:40/10/70,2:100/0/0" {
		t.Fatalf("Tick asks %v, want osd set-loads 0:40/10/70,2:100/0/0", cmds)
	}
	if again := tm.svc.Tick(tm.now.Add(LoadPublishInterval - time.Second)); len(again) != 0 {
		t.Fatalf("within the interval, Tick asks %v", again)
	}
	if again := tm.svc.Tick(tm.now.Add(LoadPublishInterval)); len(again) != 1 {
		t.Fatalf("map still without the loads after the interval: Tick asks %v", again)
	}
	tm.change(func(s *osdmap.Spec) {
		s.OSDs[0].Load = osdmap.Load{Disk: 40, CPU: 10, Memory: 70}
		s.OSDs[2].Load = osdmap.Load{Disk: 100}
	})
	if again := tm.svc.Tick(tm.now.Add(2 * LoadPublishInterval)); len(again) != 0 {
		t.Fatalf("map in step, Tick asks %v", again)
	}
}

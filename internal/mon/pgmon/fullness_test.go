package pgmon

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// usagePercent reports osd id's store usage as used percent of 100 GiB.
func (tm *testMon) usagePercent(id int32, usedPercent uint64) {
	tm.t.Helper()
	const total = 100 << 30
	used := total / 100 * usedPercent
	must(tm.t, tm.report(wire.PGStatsReport{OSD: id, Epoch: uint64(tm.m.Epoch()), Total: total, Used: used, Available: total - used}))
}

// applyFullStates does what osdmon does with "osd full-states": it sets
// the listed OSDs' bits and the pools' full flag in the test's map.
func (tm *testMon) applyFullStates(args map[string]string) {
	tm.t.Helper()
	tm.change(func(s *osdmap.Spec) {
		for i := range s.OSDs {
			s.OSDs[i].State &^= osdmap.FullnessBits
		}
		for arg, bit := range map[string]osdmap.OSDState{"full": osdmap.OSDFull, "backfillfull": osdmap.OSDBackfillFull, "nearfull": osdmap.OSDNearFull} {
			for _, f := range strings.Split(args[arg], ",") {
				if f == "" {
					continue
				}
				var id int
				for _, c := range f {
					id = id*10 + int(c-'0')
				}
				s.OSDs[id].State |= bit
			}
		}
		for i := range s.Pools {
			s.Pools[i].Flags &^= osdmap.PoolFull
			if strings.TrimSpace(args["full"]) != "" {
				s.Pools[i].Flags |= osdmap.PoolFull
			}
		}
	})
}

func TestTickMarksOSDsFullFromUsage(t *testing.T) {
	tm := newTestMon(t)
	if cmds := tm.svc.Tick(tm.now); len(cmds) != 0 {
		t.Fatalf("no usage yet, Tick asks %v", cmds)
	}
	tm.usagePercent(0, 50)
	tm.usagePercent(1, 50)
	tm.usagePercent(2, 50)
	if cmds := tm.svc.Tick(tm.now); len(cmds) != 0 {
		t.Fatalf("every OSD half full, Tick asks %v", cmds)
	}
	tm.usagePercent(0, 96)
	tm.usagePercent(1, 91)
	tm.usagePercent(2, 85)
	cmds := tm.svc.Tick(tm.now)
	if len(cmds) != 1 || cmds[0].Prefix != "osd full-states" {
		t.Fatalf("Tick asks %v, want one osd full-states", cmds)
	}
	want := map[string]string{"full": "0", "backfillfull": "1", "nearfull": "2"}
	if !maps.Equal(cmds[0].Args, want) {
		t.Fatalf("osd full-states %v, want %v", cmds[0].Args, want)
	}
	// Until the map changes, Tick asks again; once it has, never.
	if again := tm.svc.Tick(tm.now); len(again) != 1 {
		t.Fatalf("map unchanged, Tick asks %v", again)
	}
	tm.applyFullStates(cmds[0].Args)
	if again := tm.svc.Tick(tm.now); len(again) != 0 {
		t.Fatalf("map in step, Tick asks %v", again)
	}
	// More reports at the same levels change nothing.
	tm.usagePercent(0, 97)
	if again := tm.svc.Tick(tm.now); len(again) != 0 {
		t.Fatalf("osd.0 still full, Tick asks %v", again)
	}

	checks := tm.checks()
	for code, wantText := range map[string]string{
		"OSD_FULL":         "1 full osd(s)\nosd.0 is full (97.0% used, full_ratio 0.95)",
		"OSD_BACKFILLFULL": "1 backfillfull osd(s)\nosd.1 is backfill full (91.0% used, backfillfull_ratio 0.9)",
		"OSD_NEARFULL":     "1 nearfull osd(s)\nosd.2 is near full (85.0% used, nearfull_ratio 0.85)",
		"POOL_FULL":        "1 pool(s) full\npool 'pool1' is full (no space): osd.0 full",
	} {
		if checks[code] != wantText {
			t.Errorf("%s:\n%s\nwant\n%s", code, checks[code], wantText)
		}
	}
	sev := map[string]string{}
	for _, c := range tm.svc.HealthChecks(tm.now) {
		sev[c.Code] = string(c.Severity)
	}
	if sev["OSD_FULL"] != "HEALTH_ERR" || sev["OSD_NEARFULL"] != "HEALTH_WARN" || sev["POOL_FULL"] != "HEALTH_WARN" {
		t.Errorf("severities %v", sev)
	}

	// Space freed: the states clear.
	tm.usagePercent(0, 10)
	tm.usagePercent(1, 10)
	tm.usagePercent(2, 10)
	cmds = tm.svc.Tick(tm.now)
	if len(cmds) != 1 || !maps.Equal(cmds[0].Args, map[string]string{"full": "", "backfillfull": "", "nearfull": ""}) {
		t.Fatalf("after freeing space Tick asks %v", cmds)
	}
	tm.applyFullStates(cmds[0].Args)
	for _, code := range slices.Sorted(maps.Keys(tm.checks())) {
		if strings.Contains(code, "FULL") {
			t.Errorf("%s still raised", code)
		}
	}
	// Lower ratios make the same usage full.
	tm.change(func(s *osdmap.Spec) { s.Ratios = osdmap.Ratios{NearFull: 0.02, BackfillFull: 0.05, Full: 0.08} })
	cmds = tm.svc.Tick(tm.now)
	if len(cmds) != 1 || cmds[0].Args["full"] != "0,1,2" {
		t.Fatalf("with full_ratio 0.08, Tick asks %v", cmds)
	}
}

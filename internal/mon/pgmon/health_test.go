package pgmon

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Each health check is raised by the PG states and counts that call for
// it, with Ceph's wording, and by nothing else.
func TestHealthChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		// pg changes the stat of PG 1.0; the others are active+clean.
		pg   func(*wire.PGStat)
		want map[string]string // code -> summary and detail lines
	}{
		{name: "all clean", pg: func(*wire.PGStat) {}, want: map[string]string{}},
		{name: "down", pg: func(s *wire.PGStat) {
			s.State, s.Acting, s.BlockedBy, s.DownReason = "down", []int32{2}, []int32{0, 1}, "waiting for osd.0 or osd.1"
		}, want: map[string]string{"PG_AVAILABILITY": "Reduced data availability: 1 pg inactive, 1 pg down\n" +
			"pg 1.0 is down, acting [2], blocked by [0,1] (waiting for osd.0 or osd.1)"}},
		{name: "peering", pg: func(s *wire.PGStat) { s.State = "peering" },
			want: map[string]string{"PG_AVAILABILITY": "Reduced data availability: 1 pg inactive, 1 pg peering\n" +
				"pg 1.0 is peering for 1m30s, acting [ACTING]: its primary osd.PRIMARY is asking the OSDs that may hold its newest writes"}},
		{name: "below min_size", pg: func(s *wire.PGStat) { s.State, s.Acting = "undersized+degraded+peered", []int32{1} },
			want: map[string]string{
				"PG_AVAILABILITY": "Reduced data availability: 1 pg inactive, 1 pg below min_size\n" +
					"pg 1.0 is undersized+degraded+peered for 1m30s: 1 of 3 copies up, below min_size 2, acting [1]",
				"PG_DEGRADED": "Degraded data redundancy: 1 pg degraded, 1 pg undersized\n" +
					"pg 1.0 is undersized+degraded+peered, acting [1]"}},
		{name: "degraded", pg: func(s *wire.PGStat) { s.State, s.Acting, s.Degraded = "active+undersized+degraded", []int32{1, 2}, 2 },
			want: map[string]string{"PG_DEGRADED": "Degraded data redundancy: 2/24 objects degraded (8.333%), 1 pg degraded, 1 pg undersized\n" +
				"pg 1.0 is active+undersized+degraded, acting [1,2], 2 objects degraded"}},
		{name: "recovering", pg: func(s *wire.PGStat) { s.State, s.Degraded = "active+recovering+degraded", 1 },
			want: map[string]string{"PG_DEGRADED": "Degraded data redundancy: 1/24 objects degraded (4.167%), 1 pg degraded\n" +
				"pg 1.0 is active+recovering+degraded, acting [ACTING], 1 object degraded"}},
		{name: "inconsistent", pg: func(s *wire.PGStat) {
			s.State, s.Inconsistent = "active+clean+inconsistent", []string{"rbd_data.1", "rbd_data.2"}
		}, want: map[string]string{"PG_DAMAGED": "Possible data damage: 1 pg inconsistent\n" +
			"pg 1.0 is active+clean+inconsistent, acting [ACTING], 2 inconsistent objects: rbd_data.1, rbd_data.2"}},
		{name: "misplaced", pg: func(s *wire.PGStat) { s.State, s.Misplaced = "active+remapped+backfilling", 2 },
			want: map[string]string{"OBJECT_MISPLACED": "2/24 objects misplaced (8.333%)\n"}},
		{name: "unfound", pg: func(s *wire.PGStat) { s.State, s.Unfound = "active+recovery_unfound+degraded", 1 },
			want: map[string]string{
				"OBJECT_UNFOUND": "1/8 objects unfound (12.500%)\npg 1.0 has 1 unfound object",
				"PG_DEGRADED":    "Degraded data redundancy: 1 pg degraded\npg 1.0 is active+recovery_unfound+degraded, acting [ACTING]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTestMon(t)
			tm.reportAll(func(mp osdmap.Mapping) wire.PGStat {
				s := tm.clean(mp)
				if mp.PG.Seed == 0 {
					tc.pg(&s)
				}
				return s
			})
			tm.now = t0.Add(90 * time.Second)
			got := tm.checks()
			acting := osdmap.FormatOSDs(tm.query("1.0").Acting)
			for code, want := range tc.want {
				want = strings.ReplaceAll(want, "[ACTING]", acting)
				want = strings.ReplaceAll(want, "osd.PRIMARY", fmt.Sprintf("osd.%d", tm.primary(pgid(t, "1.0"))))
				if got[code] != want {
					t.Errorf("%s:\n%s\nwant\n%s", code, got[code], want)
				}
			}
			if codes, want := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.want)); !slices.Equal(codes, want) {
				t.Errorf("checks %v, want %v", codes, want)
			}
		})
	}
}

// Until their primaries report, a new pool's PGs are unknown and
// PG_AVAILABILITY warns; the detail lists at most maxDetail PGs.
func TestHealthUnknownPGs(t *testing.T) {
	tm := newTestMon(t)
	tm.change(func(s *osdmap.Spec) { s.Pools = append(s.Pools, testPool(2, 64)) })
	checks := tm.svc.HealthChecks(tm.now)
	if len(checks) != 1 || checks[0].Code != "PG_AVAILABILITY" || checks[0].Severity != health.Warn {
		t.Fatalf("checks: %+v", checks)
	}
	c := checks[0]
	if c.Summary != "Reduced data availability: 68 pgs inactive" || len(c.Detail) != maxDetail+1 ||
		c.Detail[maxDetail] != fmt.Sprintf("... and %d more", 68-maxDetail) ||
		!strings.HasPrefix(c.Detail[0], fmt.Sprintf("pg 1.0 is unknown: no report from its primary osd.%d yet, acting [", tm.primary(pgid(t, "1.0")))) {
		t.Errorf("PG_AVAILABILITY: %s\n%s", c.Summary, strings.Join(c.Detail, "\n"))
	}
	tm.reportAll(tm.clean)
	if checks := tm.svc.HealthChecks(tm.now); len(checks) != 0 {
		t.Errorf("after reports: %+v", checks)
	}
}

// PG_DAMAGED is an error, the others warnings.
func TestHealthSeverity(t *testing.T) {
	tm := newTestMon(t)
	tm.reportAll(func(mp osdmap.Mapping) wire.PGStat {
		s := tm.withState("active+clean+inconsistent")(mp)
		s.Degraded, s.Misplaced, s.Unfound = 1, 1, 1
		return s
	})
	tm.markDown(tm.primary(pgid(t, "1.0")))
	for _, c := range tm.svc.HealthChecks(tm.now) {
		if want := map[bool]health.Status{true: health.Err, false: health.Warn}[c.Code == "PG_DAMAGED"]; c.Severity != want {
			t.Errorf("%s: %s, want %s", c.Code, c.Severity, want)
		}
	}
	if r := health.Summarize(tm.svc.HealthChecks(tm.now)); r.Status != health.Err || len(r.Checks) != 5 {
		t.Errorf("report: %+v", r)
	}
}

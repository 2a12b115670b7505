package pgmon

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// statText returns "pg stat"'s text.
func (tm *testMon) statText() string {
	tm.t.Helper()
	return must(tm.t, tm.run("pg stat")).Text
}

// query returns "pg query"'s view of pg.
func (tm *testMon) query(pg string) PGView {
	tm.t.Helper()
	var v PGView
	if err := json.Unmarshal(must(tm.t, tm.run("pg query", "pgid", pg)).Data, &v); err != nil {
		tm.t.Fatal(err)
	}
	return v
}

// A PG is unknown until its primary reports it; the reports fill in the
// states, the object counts and the usage of the OSDs.
func TestReportsFillTheMap(t *testing.T) {
	tm := newTestMon(t)
	if got, want := tm.statText(), "4 pgs: 4 unknown; 0 objects, 0 B data, 0 B used, 0 B / 0 B avail\n"; got != want {
		t.Errorf("before reports:\n%q\nwant\n%q", got, want)
	}
	tm.reportAll(tm.clean)
	if got, want := tm.statText(), "4 pgs: 4 active+clean; 8 objects, 32 KiB data, 3.0 GiB used, 27 GiB / 30 GiB avail\n"; got != want {
		t.Errorf("after reports:\n%q\nwant\n%q", got, want)
	}
	v := tm.query("1.2")
	if v.State != "active+clean" || v.ReportedBy != tm.primary(pgid(t, "1.2")) || !v.LastChange.Equal(t0) ||
		v.Objects != 2 || v.ReportedEpoch != 1 || v.LastUpdate != "3'2" {
		t.Errorf("pg query 1.2: %+v", v)
	}
	if len(tm.checks()) != 0 {
		t.Errorf("checks of a clean cluster: %v", tm.checks())
	}
}

// A steady cluster puts nothing through Raft: a report equal to what is
// stored makes no proposal; a change of one PG or of the usage proposes
// only that.
func TestUnchangedReportProposesNothing(t *testing.T) {
	tm := newTestMon(t)
	tm.reportAll(tm.clean)
	for _, r := range tm.reports(tm.clean) {
		if p, reply := tm.prepare(r); p != nil || reply.Code != moncmd.OK || !strings.Contains(reply.Status, "unchanged") {
			t.Errorf("osd.%d: steady report proposed %d bytes (%+v)", r.OSD, len(p), reply)
		}
	}
	r := tm.withPGs(tm.clean)
	r.PGs[0].Objects++
	p, _ := tm.prepare(r)
	if p == nil {
		t.Fatal("a changed PG made no proposal")
	}
	got, err := decodeProposal(p)
	if err != nil || len(got.report.PGs) != 1 || got.report.PGs[0].PG != r.PGs[0].PG {
		t.Errorf("proposal of one changed PG: %+v %v", got.report.PGs, err)
	}
	r = tm.withPGs(tm.clean)
	r.Used += 4096
	if p, _ := tm.prepare(r); p == nil {
		t.Error("changed usage made no proposal")
	}
}

// A report older than what is stored for a PG does not replace it: the
// OSD that lost the PG to a newer primary cannot overwrite its report.
func TestOlderReportIgnored(t *testing.T) {
	tm := newTestMon(t)
	pg := pgid(t, "1.0")
	old := tm.primary(pg)
	tm.reportAll(tm.clean)
	// A new primary (primary_temp) reports at epoch 2.
	next := (old + 1) % 3
	tm.change(func(s *osdmap.Spec) { s.PrimaryTemp = map[osdmap.PG]int32{pg: next} })
	st := tm.withState("active+clean")(osdmap.Mapping{PG: pg, Up: []int32{0, 1, 2}, Acting: []int32{0, 1, 2}, ActingPrimary: next})
	st.Objects = 5
	must(t, tm.report(wire.PGStatsReport{OSD: next, Epoch: 2, PGs: []wire.PGStat{st}}))
	// The old primary's late report made at epoch 1.
	late := st
	late.Objects, late.ReportedEpoch, late.Primary = 1, 1, old
	must(t, tm.report(wire.PGStatsReport{OSD: old, Epoch: 1, PGs: []wire.PGStat{late}}))
	// ... and one whose map is at 2 but whose PG is still at 1.
	must(t, tm.report(wire.PGStatsReport{OSD: old, Epoch: 2, PGs: []wire.PGStat{late}}))
	if v := tm.query("1.0"); v.Objects != 5 || v.ReportedBy != next || v.State != "active+clean" {
		t.Errorf("older reports replaced the newer: %+v", v)
	}
	// The same epoch replaces.
	st.Objects = 6
	must(t, tm.report(wire.PGStatsReport{OSD: next, Epoch: 2, PGs: []wire.PGStat{st}}))
	if v := tm.query("1.0"); v.Objects != 6 {
		t.Errorf("a report of the same epoch did not replace: %+v", v)
	}
	// A PG's epoch beyond its report's is bounded by it.
	st.ReportedEpoch, st.Objects = 99, 7
	must(t, tm.report(wire.PGStatsReport{OSD: next, Epoch: 2, PGs: []wire.PGStat{st}}))
	if v := tm.query("1.0"); v.Objects != 7 || v.ReportedEpoch != 2 {
		t.Errorf("epoch beyond the report's: %+v", v)
	}
}

// Reports that do not decode, or name what does not exist, are refused
// with a clear reply; PGs the map does not have are dropped.
func TestBadReports(t *testing.T) {
	tm := newTestMon(t)
	good := tm.reports(tm.clean)[0]
	for _, tc := range []struct {
		name   string
		kv     []string
		code   int32
		status string
	}{
		{"no argument", nil, moncmd.EINVAL, `missing "report"`},
		{"garbage", []string{"report", "not a report"}, moncmd.EINVAL, "not a PG stats report"},
		{"truncated", []string{"report", string(good.Encode()[:20])}, moncmd.EINVAL, "not a PG stats report"},
		{"another osd's", []string{"report", string(good.Encode()), callerArg, "osd.9"}, moncmd.EACCES, "may not report"},
		{"no such osd", []string{"report", string(wire.PGStatsReport{OSD: 7, Epoch: 1}.Encode())}, moncmd.ENOENT, "osd.7 does not exist"},
	} {
		r := tm.run("pg report", tc.kv...)
		if r.Code != tc.code || !strings.Contains(r.Status, tc.status) {
			t.Errorf("%s: code %d %q, want %d ~%q", tc.name, r.Code, r.Status, tc.code, tc.status)
		}
	}
	// PGs of a pool that does not exist, or beyond pg_num, are dropped.
	bad := good
	bad.PGs = []wire.PGStat{{PG: osdmap.PG{Pool: 9, Seed: 0}, State: "active+clean"}, {PG: osdmap.PG{Pool: 1, Seed: 4}, State: "active+clean"}}
	must(t, tm.report(bad))
	if strings.Contains(tm.dumpStore(), "pg/") {
		t.Errorf("stored PGs the map does not have:\n%s", tm.dumpStore())
	}
	if p, r := tm.prepare(bad); p != nil {
		t.Errorf("dropped PGs and unchanged usage proposed: %+v", r)
	}
	// Apply refuses a proposal that does not decode, changing nothing.
	before := tm.dumpStore()
	if r := tm.commit([]byte("junk")); r.Code != moncmd.EINVAL {
		t.Errorf("junk proposal: %+v", r)
	}
	if tm.dumpStore() != before {
		t.Error("junk proposal changed the store")
	}
	// Before the cluster exists.
	tm.m = nil
	if r := tm.report(good); r.Code != moncmd.ENOENT {
		t.Errorf("report without a map: %+v", r)
	}
}

// A PG whose reporter is down, or is no longer its acting primary while
// the new primary has not reported, is stale; the new primary's report
// makes it fresh again.
func TestStale(t *testing.T) {
	tm := newTestMon(t)
	tm.reportAll(tm.clean)
	pg := pgid(t, "1.1")
	old := tm.primary(pg)
	tm.markDown(old)
	v := tm.query("1.1")
	if v.State != "stale+active+clean" || !strings.Contains(v.StaleReason, "is down") {
		t.Errorf("reporter down: %+v", v)
	}
	if c := tm.checks()["PG_AVAILABILITY"]; !strings.Contains(c, "1 pg stale") || !strings.Contains(c, "pg 1.1 is stuck stale") {
		t.Errorf("PG_AVAILABILITY: %s", c)
	}
	// The new primary (the map moved the PG) has not reported yet.
	if p := tm.primary(pg); p == old || p < 0 {
		t.Fatalf("primary after osd.%d down: %d", old, p)
	}
	tm.change(func(*osdmap.Spec) {}) // a later epoch; the reporter is still down
	if v := tm.query("1.1"); v.State != "stale+active+clean" {
		t.Errorf("still stale: %+v", v)
	}
	tm.reportAll(tm.withState("active+undersized+degraded"))
	if v := tm.query("1.1"); v.State != "active+undersized+degraded" || v.StaleReason != "" {
		t.Errorf("after the new primary's report: %+v", v)
	}

	// Primary moved by primary_temp while the old primary is up.
	tm = newTestMon(t)
	tm.reportAll(tm.clean)
	old = tm.primary(pg)
	tm.change(func(s *osdmap.Spec) { s.PrimaryTemp = map[osdmap.PG]int32{pg: (old + 1) % 3} })
	if v := tm.query("1.1"); v.State != "stale+active+clean" || !strings.Contains(v.StaleReason, "has not reported it yet") {
		t.Errorf("primary moved: %+v", v)
	}
	tm.reportAll(tm.clean)
	if v := tm.query("1.1"); v.State != "active+clean" {
		t.Errorf("after the new primary's report: %+v", v)
	}
}

// A report from before its primary restarted is stale until the new
// incarnation reports: "cluster up" on a stopped cluster waits for that,
// not for what the OSDs said before they stopped.
func TestStaleAfterRestart(t *testing.T) {
	tm := newTestMon(t)
	tm.reportAll(tm.clean)
	pg := pgid(t, "1.1")
	p := tm.primary(pg)
	tm.markDown(p)
	tm.change(func(s *osdmap.Spec) {
		s.OSDs[p].State |= osdmap.OSDUp
		s.OSDs[p].UpFrom = s.Epoch
	})
	if tm.primary(pg) != p {
		t.Fatalf("primary after the restart: osd.%d, want osd.%d", tm.primary(pg), p)
	}
	v := tm.query("1.1")
	if v.State != "stale+active+clean" || !strings.Contains(v.StaleReason, "restarted") {
		t.Errorf("reported before the restart: %+v", v)
	}
	if c := tm.checks()["PG_AVAILABILITY"]; !strings.Contains(c, "pg 1.1 is stuck stale") {
		t.Errorf("PG_AVAILABILITY: %s", c)
	}
	tm.reportAll(tm.clean)
	if v := tm.query("1.1"); v.State != "active+clean" || v.StaleReason != "" {
		t.Errorf("after the new incarnation's report: %+v", v)
	}
}

// Deleting a pool or shrinking it drops its PGs' statistics from the
// store at the next report, and from the queries at once.
func TestDeletedPoolDropped(t *testing.T) {
	tm := newTestMon(t)
	tm.change(func(s *osdmap.Spec) { s.Pools = append(s.Pools, testPool(2, 2)) })
	tm.reportAll(tm.clean)
	if !strings.Contains(tm.dumpStore(), "pg/2.1=") {
		t.Fatalf("pool 2 not stored:\n%s", tm.dumpStore())
	}
	tm.change(func(s *osdmap.Spec) { s.Pools = s.Pools[:1] })
	if got := tm.statText(); !strings.HasPrefix(got, "4 pgs: 4 active+clean; 8 objects") {
		t.Errorf("stat after pool 2 deleted: %q", got)
	}
	if r := tm.run("pg query", "pgid", "2.0"); r.Code != moncmd.ENOENT {
		t.Errorf("query of a deleted pool's PG: %+v", r)
	}
	r := tm.reports(tm.clean)[0]
	r.Used++
	must(t, tm.report(r))
	if s := tm.dumpStore(); strings.Contains(s, "pg/2.") || !strings.Contains(s, "pg/1.3=") {
		t.Errorf("store after the next report:\n%s", s)
	}
	// An OSD removed from the map goes too.
	tm.change(func(s *osdmap.Spec) { s.OSDs[2] = osdmap.OSD{} })
	must(t, tm.report(tm.reports(tm.withState("active+undersized+degraded"))[0]))
	if strings.Contains(tm.dumpStore(), "osd/2=") {
		t.Errorf("removed osd.2 still stored:\n%s", tm.dumpStore())
	}
}

// A restarted monitor loads what was applied.
func TestLoadAfterRestart(t *testing.T) {
	tm := newTestMon(t)
	tm.reportAll(tm.clean)
	tm.now = t0.Add(time.Minute)
	tm.reportAll(tm.withState("active+undersized+degraded"))
	before := must(t, tm.run("pg dump"))
	again := New(Config{Map: func() *osdmap.Map { return tm.m }, Now: func() time.Time { return tm.now }})
	if err := again.Load(tm.st); err != nil {
		t.Fatal(err)
	}
	tm.svc = again
	after := must(t, tm.run("pg dump"))
	if string(before.Data) != string(after.Data) || before.Text != after.Text {
		t.Errorf("dump after reload:\n%s\nwant\n%s", after.Text, before.Text)
	}
}

// Two monitors applying the same proposals at the same times reach the
// same store, byte for byte, whatever their clocks say.
func TestDeterminism(t *testing.T) {
	a, b := newTestMon(t), newTestMon(t)
	b.svc.cfg.Now = func() time.Time { return t0.Add(time.Hour) }
	for i, state := range []string{"active+clean", "peering", "active+undersized+degraded", "active+clean"} {
		for _, r := range a.reports(a.withState(state)) {
			p, reply := a.prepare(r)
			if p == nil {
				must(t, reply) // an OSD primary of nothing, usage unchanged
				continue
			}
			a.now, b.now = t0.Add(time.Duration(i)*time.Second), t0.Add(time.Duration(i)*time.Second)
			ra, rb := a.commit(p), b.commit(p)
			if ra.Code != rb.Code || ra.Status != rb.Status {
				t.Fatalf("replies differ: %+v vs %+v", ra, rb)
			}
		}
	}
	if sa, sb := a.dumpStore(), b.dumpStore(); sa != sb || sa == "" {
		t.Errorf("stores differ:\n%s\n%s", sa, sb)
	}
}

func TestQueries(t *testing.T) {
	tm := newTestMon(t)
	tm.reportAll(tm.clean)
	degraded := tm.withState("active+undersized+degraded")
	st := degraded(osdmap.Mapping{PG: pgid(t, "1.3"), Up: []int32{0, 1}, Acting: []int32{0, 1}, ActingPrimary: tm.primary(pgid(t, "1.3"))})
	st.Degraded = 2
	must(t, tm.report(wire.PGStatsReport{OSD: st.Primary, Epoch: 1, PGs: []wire.PGStat{st}, Total: 10 << 30, Used: 1 << 30, Available: 9 << 30}))

	var ls ListView
	for _, tc := range []struct {
		kv   []string
		want []string
	}{
		{nil, []string{"1.0", "1.1", "1.2", "1.3"}},
		{[]string{"states", "degraded"}, []string{"1.3"}},
		{[]string{"states", "active,undersized"}, []string{"1.3"}},
		{[]string{"states", "active clean"}, []string{"1.0", "1.1", "1.2"}},
		{[]string{"states", "active+clean"}, []string{"1.0", "1.1", "1.2"}},
		{[]string{"states", "down"}, nil},
	} {
		r := must(t, tm.run("pg ls", tc.kv...))
		if err := json.Unmarshal(r.Data, &ls); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range ls.PGStats {
			got = append(got, v.PGID)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("pg ls %v: %v, want %v", tc.kv, got, tc.want)
		}
		if lines := strings.Count(r.Text, "\n"); lines != len(tc.want)+1 {
			t.Errorf("pg ls %v: %d lines of text:\n%s", tc.kv, lines, r.Text)
		}
	}
	for _, arg := range []string{"2", "osd.2"} {
		r := must(t, tm.run("pg ls-by-osd", "osd", arg))
		if err := json.Unmarshal(r.Data, &ls); err != nil {
			t.Fatal(err)
		}
		if len(ls.PGStats) != 3 { // 1.3's acting set lost osd.2
			t.Errorf("ls-by-osd %s: %d pgs:\n%s", arg, len(ls.PGStats), r.Text)
		}
	}
	for _, tc := range []struct {
		prefix string
		kv     []string
		code   int32
		status string
	}{
		{"pg query", []string{"pgid", "1.4"}, moncmd.ENOENT, "pg 1.4 does not exist"},
		{"pg query", []string{"pgid", "1"}, moncmd.EINVAL, "want POOL.SEED"},
		{"pg query", []string{"pgid", "1.xyz"}, moncmd.EINVAL, `"1.xyz" is not a pg id`},
		{"pg query", nil, moncmd.EINVAL, `missing "pgid"`},
		{"pg ls-by-osd", []string{"osd", "osd.x"}, moncmd.EINVAL, "not an osd id"},
		{"pg ls-by-osd", []string{"osd", "9"}, moncmd.ENOENT, "osd.9 does not exist"},
	} {
		if r := tm.run(tc.prefix, tc.kv...); r.Code != tc.code || !strings.Contains(r.Status, tc.status) {
			t.Errorf("%s %v: code %d %q, want %d ~%q", tc.prefix, tc.kv, r.Code, r.Status, tc.code, tc.status)
		}
	}

	var d DumpView
	r := must(t, tm.run("pg dump"))
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.PGStats) != 4 || len(d.OSDStats) != 3 || d.OSDStats[0].UsedBytes != 1<<30 || d.PGStats[3].Degraded != 2 {
		t.Errorf("dump: %+v", d)
	}
	for _, want := range []string{"PG   OBJECTS  DEGRADED", "1.3  2        2 ", "active+undersized+degraded", "[0,1]p",
		"OSD    UP  USED     AVAIL    TOTAL   PGS  PRIMARY_PGS", "osd.0  up  1.0 GiB  9.0 GiB  10 GiB"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("dump text lacks %q:\n%s", want, r.Text)
		}
	}
	var raw map[string]any
	_ = json.Unmarshal(must(t, tm.run("pg query", "pgid", "1.3")).Data, &raw)
	for _, k := range []string{"pgid", "state", "reported_by", "last_change", "up", "acting", "acting_primary",
		"num_objects", "num_objects_degraded", "last_scrub_stamp", "log_size"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("pg query JSON lacks %q: %v", k, raw)
		}
	}
	if raw["state"] != "active+undersized+degraded" {
		t.Errorf("pg query state %v", raw["state"])
	}
	text := must(t, tm.run("pg query", "pgid", "1.3")).Text
	for _, want := range []string{"state            active+undersized+degraded", "acting           [0,1], primary osd.", "2 degraded"} {
		if !strings.Contains(text, want) {
			t.Errorf("pg query text lacks %q:\n%s", want, text)
		}
	}
}

func TestCommandsListed(t *testing.T) {
	for _, p := range Prefixes() {
		ok, write := New(Config{}).Handles(p)
		if !ok || write != (p == "pg report") {
			t.Errorf("%s: handled %v write %v", p, ok, write)
		}
	}
	if ok, _ := New(Config{}).Handles("pg scrub"); ok {
		t.Error("pg scrub is not the service's")
	}
	if r := New(Config{}).Query(moncmd.New("pg stat")); r.Code != moncmd.OK || !strings.HasPrefix(r.Text, "0 pgs;") {
		t.Errorf("pg stat without a map: %+v", r)
	}
}

func FuzzDecodeProposal(f *testing.F) {
	f.Add(proposal{op: opReport, report: wire.PGStatsReport{OSD: 1, Epoch: 3, PGs: []wire.PGStat{{PG: osdmap.PG{Pool: 1, Seed: 2}, State: "active+clean"}}}}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProposal(b)
		if err != nil {
			return
		}
		if q, err := decodeProposal(p.encode()); err != nil || string(q.encode()) != string(p.encode()) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzLoadRecord(f *testing.F) {
	e := pgEntry{stat: wire.PGStat{PG: osdmap.PG{Pool: 1, Seed: 0x1f}, State: "down", BlockedBy: []int32{2}}, reporter: 3, updated: t0}
	f.Add("pg/1.1f", e.encode())
	f.Add("osd/3", osdEntry{total: 10, used: 4, avail: 6, updated: t0}.encode(3))
	f.Fuzz(func(t *testing.T, key string, b []byte) {
		st := newState()
		if err := st.load(key, b); err != nil {
			return
		}
		again := newState()
		for pg, e := range st.pgs {
			if err := again.load(string(pgKey(pg)), e.encode()); err != nil {
				t.Fatalf("reload pg %s: %v", pg, err)
			}
		}
		for id, e := range st.osds {
			if err := again.load(string(osdKey(id)), e.encode(id)); err != nil {
				t.Fatalf("reload osd.%d: %v", id, err)
			}
		}
	})
}

package pgmon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
	pb "go.etcd.io/raft/v3/raftpb"
)

// t0 is when test clusters start.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // read-only

// testMon is one monitor without Raft: the service over a real store,
// with an OSD map the test changes by hand. A write is prepared,
// appended to the log as the next entry, applied and committed, the path
// of a single-monitor cluster.
type testMon struct {
	t     testing.TB
	st    *monstore.Store
	svc   *Service
	m     *osdmap.Map
	index uint64
	now   time.Time
}

// newTestMon returns a monitor whose map has osd.0-2, one per host, up
// and in, and pool 1 of 4 PGs with size 3.
func newTestMon(t testing.TB) *testMon {
	t.Helper()
	st, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "mon"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	spec, err := crush.BuildLayout(crush.Layout{Hosts: 3, OSDsPerHost: 1})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := osdmap.NewSimple(cm, 3, testPool(1, 4))
	if err != nil {
		t.Fatal(err)
	}
	tm := &testMon{t: t, st: st, m: m, now: t0}
	tm.svc = New(Config{Map: func() *osdmap.Map { return tm.m }, Now: func() time.Time { return tm.now }})
	if err := tm.svc.Load(st); err != nil {
		t.Fatal(err)
	}
	return tm
}

func testPool(id int64, pgNum uint32) osdmap.Pool {
	return osdmap.Pool{ID: id, Name: fmt.Sprintf("pool%d", id), Type: osdmap.PoolReplicated, Size: 3, MinSize: 2,
		PGNum: pgNum, PGPNum: pgNum, Flags: osdmap.PoolHashPSPool}
}

// change makes the next epoch of the map from a modified Spec.
func (tm *testMon) change(fn func(*osdmap.Spec)) {
	tm.t.Helper()
	s := tm.m.Spec()
	s.Epoch++
	fn(&s)
	m, err := osdmap.New(s)
	if err != nil {
		tm.t.Fatal(err)
	}
	tm.m = m
}

// markDown marks osd id down in a new epoch.
func (tm *testMon) markDown(id int32) {
	tm.change(func(s *osdmap.Spec) { s.OSDs[id].State &^= osdmap.OSDUp })
}

// run sends a command as the driver does, as client.admin.
func (tm *testMon) run(prefix string, kv ...string) moncmd.Reply {
	tm.t.Helper()
	c := moncmd.New(prefix, kv...)
	if !c.Has(callerArg) {
		c.Args[callerArg] = "client.admin"
	}
	ok, write := tm.svc.Handles(c.Prefix)
	if !ok {
		tm.t.Fatalf("%s: not handled", c.Prefix)
	}
	if !write {
		return tm.svc.Query(c)
	}
	p, r := tm.svc.Prepare(c, tm.now)
	if p == nil {
		return r
	}
	return tm.commit(p)
}

// commit appends the proposal as the next log entry, applies and commits.
func (tm *testMon) commit(p []byte) moncmd.Reply {
	tm.t.Helper()
	tm.index++
	i := tm.index
	if err := tm.st.Append(&pb.HardState{Term: new(uint64(1)), Commit: new(i)},
		[]*pb.Entry{{Index: new(i), Term: new(uint64(1)), Type: pb.EntryNormal.Enum(), Data: p}}, nil); err != nil {
		tm.t.Fatal(err)
	}
	b := tm.st.NewBatch()
	r, err := tm.svc.Apply(b, p, tm.now)
	if err != nil {
		tm.t.Fatal(err)
	}
	if err := tm.st.Commit(i, b); err != nil {
		tm.t.Fatal(err)
	}
	return r
}

// report sends r as osd.r.OSD sends it.
func (tm *testMon) report(r wire.PGStatsReport) moncmd.Reply {
	tm.t.Helper()
	return tm.run("pg report", "report", string(r.Encode()), callerArg, fmt.Sprintf("osd.%d", r.OSD))
}

// prepare returns what Prepare makes of r, without committing it.
func (tm *testMon) prepare(r wire.PGStatsReport) ([]byte, moncmd.Reply) {
	return tm.svc.Prepare(moncmd.New("pg report", "report", string(r.Encode())), tm.now)
}

// reports returns, for each up OSD, the report of the PGs it is the
// acting primary of, made by stat from the PG's mapping; OSDs that are
// primary of nothing report their usage only.
func (tm *testMon) reports(stat func(osdmap.Mapping) wire.PGStat) []wire.PGStatsReport {
	tm.t.Helper()
	byOSD := map[int32]*wire.PGStatsReport{}
	var order []int32
	for id := range tm.m.MaxOSD() {
		if tm.m.IsUp(id) {
			byOSD[id] = &wire.PGStatsReport{OSD: id, Epoch: uint64(tm.m.Epoch()), Total: 10 << 30, Used: 1 << 30, Available: 9 << 30}
			order = append(order, id)
		}
	}
	var sc osdmap.Scratch
	for _, p := range tm.m.Pools() {
		for seed := range p.PGNum {
			mp, err := tm.m.PGToUpActing(osdmap.PG{Pool: p.ID, Seed: seed}, &sc)
			if err != nil {
				tm.t.Fatal(err)
			}
			if r := byOSD[mp.ActingPrimary]; r != nil {
				r.PGs = append(r.PGs, stat(mp))
			}
		}
	}
	out := make([]wire.PGStatsReport, 0, len(order))
	for _, id := range order {
		out = append(out, *byOSD[id])
	}
	return out
}

// withPGs returns the first report of reports that holds PGs.
func (tm *testMon) withPGs(stat func(osdmap.Mapping) wire.PGStat) wire.PGStatsReport {
	tm.t.Helper()
	for _, r := range tm.reports(stat) {
		if len(r.PGs) > 0 {
			return r
		}
	}
	tm.t.Fatal("no OSD is primary of any PG")
	return wire.PGStatsReport{}
}

// reportAll sends every up OSD's report, each PG made by stat.
func (tm *testMon) reportAll(stat func(osdmap.Mapping) wire.PGStat) {
	tm.t.Helper()
	for _, r := range tm.reports(stat) {
		must(tm.t, tm.report(r))
	}
}

// clean is the stat of a healthy PG with two objects.
func (tm *testMon) clean(mp osdmap.Mapping) wire.PGStat {
	return tm.withState("active+clean")(mp)
}

// withState returns a stat maker for PGs in state with two objects of
// 4 KiB each.
func (tm *testMon) withState(state string) func(osdmap.Mapping) wire.PGStat {
	return func(mp osdmap.Mapping) wire.PGStat {
		return wire.PGStat{PG: mp.PG, State: state, Up: append([]int32{}, mp.Up...), Acting: append([]int32{}, mp.Acting...),
			Primary: mp.ActingPrimary, ReportedEpoch: uint64(tm.m.Epoch()), LastUpdate: "3'2", LogEntries: 2,
			Objects: 2, Bytes: 8 << 10}
	}
}

// primary returns the acting primary of pg in the current map.
func (tm *testMon) primary(pg osdmap.PG) int32 {
	tm.t.Helper()
	mp, err := tm.m.PGToUpActing(pg, &osdmap.Scratch{})
	if err != nil {
		tm.t.Fatal(err)
	}
	return mp.ActingPrimary
}

// dumpStore returns every key and value of the service.
func (tm *testMon) dumpStore() string {
	var b strings.Builder
	if err := tm.st.Scan(ServiceName, nil, func(k, v []byte) error {
		fmt.Fprintf(&b, "%s=%x\n", k, v)
		return nil
	}); err != nil {
		tm.t.Fatal(err)
	}
	return b.String()
}

// checks returns the health checks by code.
func (tm *testMon) checks() map[string]string {
	out := map[string]string{}
	for _, c := range tm.svc.HealthChecks(tm.now) {
		out[c.Code] = c.Summary + "\n" + strings.Join(c.Detail, "\n")
	}
	return out
}

func must(t testing.TB, r moncmd.Reply) moncmd.Reply {
	t.Helper()
	if r.Code != moncmd.OK {
		t.Fatalf("code %d: %s", r.Code, r.Status)
	}
	return r
}

func pgid(t testing.TB, s string) osdmap.PG {
	t.Helper()
	pg, err := osdmap.ParsePG(s)
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

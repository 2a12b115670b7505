package mdsmon

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/mon/montest"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/internal/mon/pgmon"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
	"github.com/cuttlestore/cuttle/osdmap"
)

// testMon is one monitor without Raft: the config, OSD-map, PG and
// MDS-map services over a real store, each write prepared, appended to
// the log, applied and committed, as a single-monitor cluster does. Time
// is virtual: now moves only when a test moves it.
type testMon struct {
	t   testing.TB
	st  *monstore.Store
	cfg *configmon.Service
	osd *osdmon.Service
	pgs *pgmon.Service
	mds *Service
	log *montest.Log
	now time.Time
}

func newTestMon(t testing.TB, st *monstore.Store) *testMon {
	t.Helper()
	var log *montest.Log
	if st == nil {
		log = montest.Open(t)
		st = log.Store
	} else {
		log = montest.On(t, st)
	}
	m := &testMon{t: t, st: st, log: log, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	m.cfg = configmon.New(nil)
	osd, err := osdmon.New(osdmon.Config{Options: m.cfg.View("mon")})
	if err != nil {
		t.Fatal(err)
	}
	m.osd = osd
	m.pgs = pgmon.New(pgmon.Config{Map: osd.Map})
	m.mds = New(Config{OSDMap: osd.Map, PoolObjects: m.pgs.PoolObjects, Options: m.cfg.View("mon")})
	for _, s := range m.services() {
		if err := s.Load(st); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func (m *testMon) services() []moncmd.Service { return []moncmd.Service{m.osd, m.pgs, m.mds, m.cfg} }

// newCluster returns a monitor whose cluster has three OSDs and the
// pools meta, data, data2 and other.
func newCluster(t testing.TB) *testMon {
	t.Helper()
	m := newTestMon(t, nil)
	fsid, err := osdmon.ParseFSID("c0ffee00-0000-4000-8000-000000000001")
	if err != nil {
		t.Fatal(err)
	}
	p, err := osdmon.Initial(fsid, m.now, osdmap.DefaultRatios())
	if err != nil {
		t.Fatal(err)
	}
	must(t, m.commit(m.osd, p))
	for i := range 3 {
		must(t, m.run("osd create"))
		must(t, m.run("osd boot", "id", fmt.Sprint(i), "addr", fmt.Sprintf("10.0.0.%d:6800", i), "host", fmt.Sprintf("h%d", i)))
	}
	for _, name := range []string{"meta", "data", "data2", "other"} {
		must(t, m.run("osd pool create", "pool", name, "pg_num", "8", "size", "3"))
	}
	return m
}

func (m *testMon) run(prefix string, kv ...string) moncmd.Reply {
	m.t.Helper()
	return m.log.Run(m.services(), m.now, prefix, kv...)
}

func (m *testMon) commit(s moncmd.Service, p []byte) moncmd.Reply {
	m.t.Helper()
	return m.log.Commit(s, p, m.now)
}

// tick runs the MDS service's Tick at now and runs what it returns.
func (m *testMon) tick() {
	m.t.Helper()
	for _, c := range m.mds.Tick(m.now) {
		var kv []string
		for k, v := range c.Args {
			kv = append(kv, k, v)
		}
		must(m.t, m.run(c.Prefix, kv...))
	}
}

// beacon sends b through the command and decodes the reply.
func (m *testMon) beacon(b wire.MDSBeacon) wire.MDSBeaconReply {
	m.t.Helper()
	c := wire.BeaconCommand(b)
	r := must(m.t, m.run(c.Prefix, "beacon", c.Args["beacon"]))
	rep, err := wire.DecodeMDSBeaconReply(r.Data)
	if err != nil {
		m.t.Fatalf("beacon reply: %v (%s)", err, base64.StdEncoding.EncodeToString(r.Data))
	}
	return rep
}

func must(t testing.TB, r moncmd.Reply) moncmd.Reply {
	t.Helper()
	if r.Code != moncmd.OK {
		t.Fatalf("code %d: %s", r.Code, r.Status)
	}
	return r
}

// mdsd is a daemon as far as beacons go: it adopts the state the
// monitors give it and, holding a rank, finishes a phase per beacon.
type mdsd struct {
	b wire.MDSBeacon
}

func newMDS(name string, nonce uint64) *mdsd {
	return &mdsd{b: wire.MDSBeacon{Name: name, Addr: "10.1.0.1:68" + name, Nonce: nonce, State: mdsmap.StateBoot, WantRank: mdsmap.NoRank}}
}

func (d *mdsd) send(m *testMon) wire.MDSBeaconReply {
	d.b.Seq++
	switch d.b.State {
	case mdsmap.StateCreating, mdsmap.StateRejoin:
		d.b.State = mdsmap.StateActive
	case mdsmap.StateReplay:
		d.b.State = mdsmap.StateReconnect
	case mdsmap.StateReconnect:
		d.b.State = mdsmap.StateRejoin
	}
	r := m.beacon(d.b)
	d.b.GID, d.b.Epoch = r.GID, r.Epoch
	if r.State != mdsmap.StateNone {
		d.b.State = r.State
	}
	return r
}

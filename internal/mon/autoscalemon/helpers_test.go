package autoscalemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/autoscale"
	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/mon/montest"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/osdmap"
)

// testMon is one monitor without Raft: the config and OSD-map services
// and the autoscaler over a real store, each write prepared, appended to
// the log, applied and committed, as a single-monitor cluster does. The
// usage the PG statistics would report is set by the test (stored,
// capacity).
type testMon struct {
	t        testing.TB
	st       *monstore.Store
	cfg      *configmon.Service
	osd      *osdmon.Service
	scaler   *Service
	stored   map[int64]int64
	capacity map[int32]uint64
	log      *montest.Log
	now      time.Time
}

// newCluster returns a monitor whose cluster has n hosts of one OSD
// each, all up and in, with capacity bytes each reported.
func newCluster(t testing.TB, n int, capacity uint64) *testMon {
	t.Helper()
	log := montest.Open(t)
	st := log.Store
	m := &testMon{t: t, st: st, log: log, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), stored: map[int64]int64{},
		capacity: map[int32]uint64{}}
	m.cfg = configmon.New(nil)
	osd, err := osdmon.New(osdmon.Config{Options: m.cfg.View("mon")})
	if err != nil {
		t.Fatal(err)
	}
	m.osd = osd
	m.scaler = New(Config{Map: m.osd.Map, Options: m.cfg.View("mon"),
		Usage: func() autoscale.Usage { return autoscale.Usage{Stored: m.stored, Capacity: m.capacity} }})
	for _, s := range m.services() {
		if err := s.Load(st); err != nil {
			t.Fatal(err)
		}
	}
	fsid, err := osdmon.ParseFSID("c0ffee00-0000-4000-8000-000000000001")
	if err != nil {
		t.Fatal(err)
	}
	p, err := osdmon.Initial(fsid, m.now, osdmap.DefaultRatios())
	if err != nil {
		t.Fatal(err)
	}
	must(t, m.commit(m.osd, p))
	for i := range n {
		must(t, m.run("osd create"))
		must(t, m.run("osd boot", "id", fmt.Sprint(i), "addr", fmt.Sprintf("10.0.0.%d:6800", i), "host", fmt.Sprintf("h%d", i)))
		m.capacity[int32(i)] = capacity
	}
	return m
}

func (m *testMon) services() []moncmd.Service { return []moncmd.Service{m.osd, m.scaler, m.cfg} }

func (m *testMon) run(prefix string, kv ...string) moncmd.Reply {
	m.t.Helper()
	return m.log.Run(m.services(), m.now, prefix, kv...)
}

func (m *testMon) commit(s moncmd.Service, p []byte) moncmd.Reply {
	m.t.Helper()
	return m.log.Commit(s, p, m.now)
}

// tick runs the autoscaler's Tick at now and sends what it returns,
// returning the commands as text.
func (m *testMon) tick() []string {
	m.t.Helper()
	var out []string
	for _, c := range m.scaler.Tick(m.now) {
		var kv []string
		for k, v := range c.Args {
			kv = append(kv, k, v)
		}
		must(m.t, m.run(c.Prefix, kv...))
		out = append(out, fmt.Sprintf("%s %s=%s", c.Prefix, c.Args["var"], c.Args["val"]))
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

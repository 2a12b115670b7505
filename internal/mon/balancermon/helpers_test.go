package balancermon

import (
	"fmt"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/mon/montest"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/osdmap"
)

// testMon is one monitor without Raft: the config, OSD-map and balancer
// services over a real store, each write prepared, appended to the log,
// applied and committed, as a single-monitor cluster does.
type testMon struct {
	t       testing.TB
	st      *monstore.Store
	cfg     *configmon.Service
	osd     *osdmon.Service
	bal     *Service
	unclean float64
	log     *montest.Log
	now     time.Time
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
	m.bal = New(Config{Map: osd.Map, Options: m.cfg.View("mon"), Unclean: func() float64 { return m.unclean }})
	for _, s := range m.services() {
		if err := s.Load(st); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func (m *testMon) services() []moncmd.Service { return []moncmd.Service{m.osd, m.bal, m.cfg} }

// newCluster returns a monitor whose cluster has hosts hosts of perHost
// OSDs each, all up and in, and pool rbd of pgNum PGs and size 3.
func newCluster(t testing.TB, hosts, perHost int, pgNum int) *testMon {
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
	for i := range hosts * perHost {
		must(t, m.run("osd create"))
		must(t, m.run("osd boot", "id", fmt.Sprint(i), "addr", fmt.Sprintf("10.0.0.%d:6800", i),
			"host", fmt.Sprintf("h%d", i/perHost)))
	}
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", fmt.Sprint(pgNum), "size", "3"))
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

// tick runs the balancer's Tick at now and sends what it returns.
func (m *testMon) tick() []moncmd.Reply {
	m.t.Helper()
	var out []moncmd.Reply
	for _, c := range m.bal.Tick(m.now) {
		var kv []string
		for k, v := range c.Args {
			kv = append(kv, k, v)
		}
		out = append(out, m.run(c.Prefix, kv...))
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

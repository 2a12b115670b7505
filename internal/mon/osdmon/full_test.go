package osdmon

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestInitialMapHasConfiguredRatios(t *testing.T) {
	m := newTestMon(t)
	must(t, m.run("config set", "who", "mon", "name", OptFullRatio, "value", "0.9"))
	must(t, m.run("osdmap create", "fsid", testFSID))
	want := osdmap.Ratios{NearFull: 0.85, BackfillFull: 0.9, Full: 0.9}
	if got := m.svc.Map().Ratios(); got != want {
		t.Fatalf("first map has ratios %+v, want %+v", got, want)
	}
	r := must(t, m.run("osd dump"))
	if !strings.Contains(r.Text, "\nfull_ratio 0.9\nbackfillfull_ratio 0.9\nnearfull_ratio 0.85\n") {
		t.Fatalf("osd dump does not show the ratios:\n%s", r.Text)
	}
	if !strings.Contains(string(r.Data), `"full_ratio":0.9,"backfillfull_ratio":0.9,"nearfull_ratio":0.85`) {
		t.Fatalf("osd dump json does not show the ratios:\n%s", r.Data)
	}
}

func TestSetRatios(t *testing.T) {
	m := newCluster(t)
	runSteps(t, m, []step{
		{prefix: "osd set-full-ratio", args: []string{"ratio", "0"}, code: moncmd.EINVAL, status: "out of (0, 1]"},
		{prefix: "osd set-full-ratio", args: []string{"ratio", "1.5"}, code: moncmd.EINVAL, status: "out of (0, 1]"},
		{prefix: "osd set-full-ratio", args: []string{"ratio", "NaN"}, code: moncmd.EINVAL},
		{prefix: "osd set-full-ratio", args: []string{"ratio", "x"}, code: moncmd.EINVAL},
		{prefix: "osd set-full-ratio", args: []string{"ratio", "0.95"}, status: "full_ratio is already 0.95"},
		{prefix: "osd set-full-ratio", args: []string{"ratio", "0.97"}, status: "full_ratio set to 0.97"},
		{prefix: "osd set-backfillfull-ratio", args: []string{"ratio", "0.5"}, status: "backfillfull_ratio set to 0.5; warning: ratios out of order"},
	})
	if checks := m.svc.Health(m.now); len(checks) != 1 || checks[0].Code != "OSD_OUT_OF_ORDER_FULL" ||
		!slices.Equal(checks[0].Detail, []string{"backfillfull_ratio (0.5) < nearfull_ratio (0.85)"}) {
		t.Fatalf("health with ratios out of order: %+v", checks)
	}
	runSteps(t, m, []step{
		{prefix: "osd set-nearfull-ratio", args: []string{"ratio", "0.4"}, status: "nearfull_ratio set to 0.4"},
		{prefix: "osd set-full-ratio", args: []string{"ratio", "1"}, status: "full_ratio set to 1"},
	})
	if checks := m.svc.Health(m.now); len(checks) != 0 {
		t.Fatalf("health with ratios in order: %+v", checks)
	}
	if got, want := m.svc.Map().Ratios(), (osdmap.Ratios{NearFull: 0.4, BackfillFull: 0.5, Full: 1}); got != want {
		t.Fatalf("ratios %+v, want %+v", got, want)
	}
	// The changes travelled as incrementals: replaying the stored ones
	// from epoch 1 makes the same map.
	m.reloadAndCompare()
}

// reloadAndCompare loads a fresh service from the store and checks that
// it has the same map.
func (m *testMon) reloadAndCompare() {
	m.t.Helper()
	svc, err := New(Config{Options: m.cfg.View("mon")})
	if err != nil {
		m.t.Fatal(err)
	}
	if err := svc.Load(m.st); err != nil {
		m.t.Fatal(err)
	}
	if !svc.Map().Equal(m.svc.Map()) {
		m.t.Fatal("reloaded map differs")
	}
	cur := m.svc.Map()
	first, err := m.st.Full(ServiceName, 1)
	if err != nil {
		m.t.Fatal(err)
	}
	mm, err := osdmap.UnmarshalMap(first)
	if err != nil {
		m.t.Fatal(err)
	}
	for e := uint64(2); e <= uint64(cur.Epoch()); e++ {
		b, err := m.st.Inc(ServiceName, e)
		if err != nil {
			m.t.Fatal(err)
		}
		inc, err := osdmap.UnmarshalIncremental(b)
		if err != nil {
			m.t.Fatal(err)
		}
		if mm, err = mm.Apply(inc); err != nil {
			m.t.Fatal(err)
		}
	}
	if !mm.Equal(cur) {
		m.t.Fatal("map rebuilt from incrementals differs")
	}
}

func TestFullStatesMarkOSDsAndPools(t *testing.T) {
	m := newBootedCluster(t, 4, 1)
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "2"))
	must(t, m.run("osd pool create", "pool", "data", "pg_num", "8", "size", "2"))
	pool := func(name string) osdmap.Pool { return *m.svc.Map().PoolByName(name) }
	e0 := m.svc.Map().Epoch()

	r := must(t, m.run("osd full-states", "full", "2", "backfillfull", "1", "nearfull", "0,3"))
	if !strings.Contains(r.Status, "osd.2 is full") || !strings.Contains(r.Status, "osd.1 is backfillfull") {
		t.Fatalf("status %q", r.Status)
	}
	for id, want := range map[int32]osdmap.OSDState{0: osdmap.OSDNearFull, 1: osdmap.OSDBackfillFull, 2: osdmap.OSDFull, 3: osdmap.OSDNearFull} {
		if got := m.osd(id).State & osdmap.FullnessBits; got != want {
			t.Errorf("osd.%d: %v, want %v", id, got, want)
		}
		if !m.osd(id).IsUp() {
			t.Errorf("osd.%d lost its other state bits: %v", id, m.osd(id).State)
		}
	}
	for _, name := range []string{"rbd", "data"} {
		if p := pool(name); p.Flags&osdmap.PoolFull == 0 || p.LastChange != e0+1 {
			t.Errorf("pool %s: flags %v last_change %d, want full at %d", name, p.Flags, p.LastChange, e0+1)
		}
	}
	// The same states again change nothing: no new epoch.
	if r := must(t, m.run("osd full-states", "full", "2", "backfillfull", "1", "nearfull", "0,3")); r.Status != "" {
		t.Fatalf("unchanged states: %q", r.Status)
	}
	if m.svc.Map().Epoch() != e0+1 {
		t.Fatalf("epoch %d, want %d: unchanged states proposed", m.svc.Map().Epoch(), e0+1)
	}
	// A full OSD marked out holds no data: the pools are no longer full.
	must(t, m.run("osd out", "ids", "2"))
	if p := pool("rbd"); p.Flags&osdmap.PoolFull != 0 {
		t.Fatalf("pool rbd still full with its full OSD out: %v", p.Flags)
	}
	must(t, m.run("osd in", "ids", "2"))
	if p := pool("rbd"); p.Flags&osdmap.PoolFull == 0 {
		t.Fatal("pool rbd not full with its full OSD back in")
	}
	// A pool created while an OSD is full is full at once.
	must(t, m.run("osd pool create", "pool", "late", "pg_num", "4", "size", "2"))
	if p := pool("late"); p.Flags&osdmap.PoolFull == 0 {
		t.Fatal("new pool is not full")
	}
	// Clearing every state clears the pools.
	must(t, m.run("osd full-states"))
	for id := range int32(4) {
		if s := m.osd(id).State & osdmap.FullnessBits; s != 0 {
			t.Errorf("osd.%d still %v", id, s)
		}
	}
	for _, name := range []string{"rbd", "data", "late"} {
		if p := pool(name); p.Flags&osdmap.PoolFull != 0 {
			t.Errorf("pool %s still full", name)
		}
	}
	runSteps(t, m, []step{
		{prefix: "osd full-states", args: []string{"full", "1", "nearfull", "1"}, code: moncmd.EINVAL, status: "osd.1 is in two states"},
		{prefix: "osd full-states", args: []string{"full", "x"}, code: moncmd.EINVAL},
	})
	m.reloadAndCompare()
}

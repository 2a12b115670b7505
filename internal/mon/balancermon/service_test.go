package balancermon

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// maxDeviation returns the largest deviation of any pool of the applied
// map.
func (m *testMon) maxDeviation() float64 {
	worst := 0.0
	for _, p := range balancer.Eval(m.osd.Map(), nil).Pools {
		worst = max(worst, p.MaxDeviation)
	}
	return worst
}

// With the balancer on, the leader's ticks propose bounded rounds, one
// interval apart, until every OSD is within a PG copy of its target; the
// OSD map applies each round in one epoch.
func TestAutomaticRounds(t *testing.T) {
	m := newCluster(t, 8, 2, 128)
	if m.maxDeviation() <= 1 {
		t.Fatalf("CRUSH alone is already within 1: %v", balancer.Eval(m.osd.Map(), nil))
	}
	if out := m.tick(); len(out) != 0 {
		t.Fatalf("the balancer is off but proposed %v", out)
	}
	must(t, m.run("balancer on"))
	rounds := 0
	for ; rounds < 100; rounds++ {
		epoch := m.osd.Map().Epoch()
		out := m.tick()
		if len(out) == 0 {
			break
		}
		must(t, out[0])
		if m.osd.Map().Epoch() != epoch+1 {
			t.Fatalf("round %d: epoch %d -> %d, want one epoch", rounds, epoch, m.osd.Map().Epoch())
		}
		if again := m.tick(); len(again) != 0 {
			t.Fatalf("second round within the interval: %v", again)
		}
		m.now = m.now.Add(time.Minute)
	}
	if d := m.maxDeviation(); d > 1 {
		t.Fatalf("after %d rounds max deviation %v", rounds, d)
	}
	st := must(t, m.run("balancer status"))
	var v StatusView
	if err := json.Unmarshal(st.Data, &v); err != nil || !v.Active || v.Mode != ModeUpmap ||
		!strings.Contains(v.LastResult, "balanced") {
		t.Fatalf("status %+v (%v)", v, err)
	}
}

// The balancer waits while too many copies are degraded or misplaced,
// and its options come from the central config.
func TestRoundsWaitAndOptions(t *testing.T) {
	m := newCluster(t, 8, 2, 128)
	must(t, m.run("balancer on"))
	must(t, m.run("config set", "who", "mon", "name", OptMaxOptimizations, "value", "3"))
	m.unclean = 0.2
	if out := m.tick(); len(out) != 0 {
		t.Fatalf("round while 20%% of copies are misplaced: %v", out)
	}
	m.unclean = 0
	m.now = m.now.Add(time.Minute)
	epoch := m.osd.Map().Epoch()
	must(t, m.tick()[0])
	moved := 0
	for _, items := range m.osd.Map().Spec().PGUpmapItems {
		moved += len(items)
	}
	if moved == 0 || moved > 3 || m.osd.Map().Epoch() != epoch+1 {
		t.Fatalf("%d upmap pairs after a round of at most 3 moves", moved)
	}
	must(t, m.run("balancer off"))
	m.now = m.now.Add(time.Hour)
	if out := m.tick(); len(out) != 0 {
		t.Fatalf("round while off: %v", out)
	}
}

// A plan is stored by name, shown with the command that executes it,
// scored, executed once, refused when stale, and removed; the state
// survives a restart of the monitor.
func TestPlans(t *testing.T) {
	m := newCluster(t, 8, 2, 128)
	before := balancer.Eval(m.osd.Map(), nil).Score
	must(t, m.run("balancer optimize", "plan", "p1", "pools", "rbd"))
	show := must(t, m.run("balancer show", "plan", "p1"))
	var v ShowView
	if err := json.Unmarshal(show.Data, &v); err != nil || len(v.Moves) == 0 || len(v.Moves) > balancer.DefaultMaxMoves ||
		v.Command.Prefix != "osd pg-upmap-plan" || !strings.Contains(show.Text, "cuttle osd pg-upmap-items") {
		t.Fatalf("show %+v (%v):\n%s", v, err, show.Text)
	}
	ev := must(t, m.run("balancer eval", "plan", "p1"))
	var after balancer.Evaluation
	if err := json.Unmarshal(ev.Data, &after); err != nil || after.Score >= before {
		t.Fatalf("plan's score %v, map's %v (%v)", after.Score, before, err)
	}

	// Restart: a new service loads the plan and the mode.
	m2 := newTestMon(t, m.st)
	if p, ok := m2.bal.st.plan("p1"); !ok || !slices.Equal(p.pools, []int64{1}) || m2.bal.st.version != m.bal.st.version {
		t.Fatalf("after Load: %+v %v", m2.bal.st, ok)
	}

	// Execute as the CLI does: send the plan's command, then remove it.
	var kv []string
	for k, val := range v.Command.Args {
		kv = append(kv, k, val)
	}
	must(t, m.run(v.Command.Prefix, kv...))
	if got := balancer.Eval(m.osd.Map(), nil).Score; got != after.Score {
		t.Fatalf("executed plan scores %v, eval said %v", got, after.Score)
	}
	if r := m.run(v.Command.Prefix, kv...); r.Code != moncmd.EBUSY {
		t.Fatalf("stale plan executed again: %+v", r)
	}
	if r := m.run("balancer eval", "plan", "p1"); r.Code != moncmd.EBUSY {
		t.Fatalf("eval of a stale plan: %+v", r)
	}
	must(t, m.run("balancer rm", "plan", "p1"))
	for _, tc := range []struct {
		prefix string
		args   []string
		code   int32
	}{
		{"balancer show", []string{"plan", "p1"}, moncmd.ENOENT},
		{"balancer rm", []string{"plan", "p1"}, moncmd.ENOENT},
		{"balancer optimize", []string{"plan", "x", "pools", "nosuch"}, moncmd.ENOENT},
		{"balancer optimize", nil, moncmd.EINVAL},
		{"balancer mode", []string{"mode", "crush-compat"}, moncmd.EINVAL},
		{"balancer eval", []string{"pools", "nosuch"}, moncmd.ENOENT},
	} {
		if r := m.run(tc.prefix, tc.args...); r.Code != tc.code {
			t.Errorf("%s %v: %+v, want code %d", tc.prefix, tc.args, r, tc.code)
		}
	}
	must(t, m.run("balancer mode", "mode", "none"))
	if r := m.run("balancer optimize", "plan", "x"); r.Code != moncmd.EINVAL {
		t.Fatalf("optimize in mode none: %+v", r)
	}
}

// A proposal prepared against an older state is refused with EAGAIN.
func TestStaleProposal(t *testing.T) {
	m := newCluster(t, 4, 1, 16)
	p, _ := m.bal.Prepare(moncmd.New("balancer on"), m.now)
	must(t, m.run("balancer mode", "mode", "none"))
	if r := m.commit(m.bal, p); r.Code != moncmd.EAGAIN {
		t.Fatalf("stale proposal: %+v", r)
	}
}

func TestOptionNames(t *testing.T) {
	for name, typ := range OptionNames() {
		o, ok := configmon.Lookup(name)
		if !ok || o.Type.String() != typ {
			t.Errorf("%s: schema has %v %v, service reads %s", name, ok, o.Type, typ)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	st := state{version: 7, active: true, mode: ModeUpmap, plans: []plan{
		{name: "a", epoch: 3, pools: []int64{1, 2}, items: "1.0 1 2", rm: "1.3",
			moves: []balancer.Move{{PG: osdmap.PG{Pool: 1, Seed: 0}, From: 1, To: 2}}},
		{name: "b", epoch: 4},
	}}
	got, err := decodeStateBytes(encodeState(st))
	if err != nil {
		t.Fatal(err)
	}
	if got.version != 7 || !got.active || len(got.plans) != 2 || got.plans[0].items != "1.0 1 2" ||
		got.plans[0].moves[0] != st.plans[0].moves[0] || got.plans[1].name != "b" {
		t.Fatalf("%+v", got)
	}
}

func FuzzDecode(f *testing.F) {
	st := state{version: 1, mode: ModeUpmap, plans: []plan{{name: "a", epoch: 2, items: "1.0 1 2",
		moves: []balancer.Move{{PG: osdmap.PG{Pool: 1}, From: 1, To: 2}}}}}
	f.Add(encodeState(st))
	f.Add(proposal{base: 1, next: st, status: "ok"}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := decodeStateBytes(b); err == nil {
			if again, err := decodeStateBytes(encodeState(s)); err != nil || again.version != s.version || len(again.plans) != len(s.plans) {
				t.Fatalf("re-decode: %v", err)
			}
		}
		if p, err := decodeProposal(b); err == nil {
			if _, err := decodeProposal(p.encode()); err != nil {
				t.Fatal(err)
			}
		}
		d := encoding.NewDecoder(b)
		_ = decodeState(d)
	})
}

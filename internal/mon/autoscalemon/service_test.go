package autoscalemon

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

const gib = 1 << 30

// "osd pool autoscale-status" prints Ceph's columns: on 3 OSDs of 1 GiB
// (300 PG copies at 100 per OSD), an empty pool of 8 PGs should have 32
// (the floor), a pool with a lone target ratio takes the whole root (300
// / size 3 = 100, to 128), and a pool holding 512 MiB takes half the raw
// space (50, times its bias 1.5: 75, to 64) but is within the threshold
// of its 32.
func TestAutoscaleStatus(t *testing.T) {
	m := newCluster(t, 3, gib)
	if r := m.run("osd pool autoscale-status"); r.Code != moncmd.OK || r.Text != "" || string(r.Data) != "[]" {
		t.Fatalf("no pools: %+v", r)
	}
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "8"))
	must(t, m.run("osd pool create", "pool", "data", "pg_num", "32", "autoscale_mode", "off"))
	must(t, m.run("osd pool set", "pool", "data", "var", "target_size_ratio", "val", "0.5"))
	must(t, m.run("osd pool create", "pool", "half", "pg_num", "32", "autoscale_mode", "on"))
	must(t, m.run("osd pool set", "pool", "half", "var", "pg_autoscale_bias", "val", "1.5"))
	m.stored[3] = gib / 2
	r := must(t, m.run("osd pool autoscale-status"))
	want := "" +
		"POOL  SIZE  TARGET SIZE  RATE  RAW CAPACITY   RATIO  TARGET RATIO  EFFECTIVE RATIO  BIAS  PG_NUM  NEW PG_NUM  AUTOSCALE\n" +
		"rbd      0                3.0          3.0G  0.0000                                  1.0       8          32  warn\n" +
		"data     0                3.0          3.0G  0.0000        0.5000           1.0000   1.0      32         128  off\n" +
		"half  512M                3.0          3.0G  0.5000                                  1.5      32              on\n"
	if r.Text != want {
		t.Fatalf("autoscale-status:\n%s\nwant\n%s", r.Text, want)
	}
	var views []PoolView
	if err := json.Unmarshal(r.Data, &views); err != nil {
		t.Fatal(err)
	}
	if len(views) != 3 || views[1].Name != "data" || views[1].Ideal != 128 || !views[1].Adjust || views[1].Mode != "off" ||
		views[2].Ideal != 64 || views[2].Raw != 75 || views[2].Adjust || views[2].Root != "default" || views[2].OSDs != 3 {
		t.Fatalf("JSON %s", r.Data)
	}
	for _, key := range []string{`"pool_name":"half"`, `"logical_used":536870912`, `"subtree_capacity":3221225472`,
		`"capacity_ratio":0.5`, `"bias":1.5`, `"pg_num_target":32`, `"pg_num_final":64`, `"would_adjust":false`,
		`"pg_autoscale_mode":"on"`, `"raw_used_rate":3`, `"effective_target_ratio":1`} {
		if !strings.Contains(string(r.Data), key) {
			t.Errorf("JSON lacks %s: %s", key, r.Data)
		}
	}
}

// checks returns the autoscaler's health checks, by code.
func checks(m *testMon) map[string]health.Check {
	out := map[string]health.Check{}
	for _, c := range m.scaler.HealthChecks(m.now) {
		out[c.Code] = c
	}
	return out
}

// Pools in mode warn far from their ideal raise POOL_TOO_FEW_PGS or
// POOL_TOO_MANY_PGS; in mode on, too few raises nothing (the leader
// acts) but too many does, since pg_num cannot shrink; mode off raises
// nothing. Fixing the pool clears the check.
func TestHealth(t *testing.T) {
	m := newCluster(t, 4, gib)
	if c := checks(m); len(c) != 0 {
		t.Fatalf("no pools: %v", c)
	}
	must(t, m.run("osd pool create", "pool", "few", "pg_num", "8"))
	must(t, m.run("osd pool create", "pool", "many", "pg_num", "128"))
	must(t, m.run("osd pool create", "pool", "onmany", "pg_num", "128", "autoscale_mode", "on"))
	must(t, m.run("osd pool create", "pool", "onfew", "pg_num", "4", "autoscale_mode", "on"))
	must(t, m.run("osd pool create", "pool", "offfew", "pg_num", "4", "autoscale_mode", "off"))
	c := checks(m)
	if len(c) != 2 {
		t.Fatalf("checks %v", c)
	}
	few, many := c["POOL_TOO_FEW_PGS"], c["POOL_TOO_MANY_PGS"]
	if few.Severity != health.Warn || few.Summary != "1 pools have too few placement groups" ||
		!slices.Equal(few.Detail, []string{"pool few has 8 placement groups, should have 32 (cuttle osd pool set few pg_num 32, or pg_autoscale_mode on)"}) {
		t.Errorf("POOL_TOO_FEW_PGS: %+v", few)
	}
	if many.Severity != health.Warn || many.Summary != "2 pools have too many placement groups" || !slices.Equal(many.Detail, []string{
		"pool many has 128 placement groups, should have 32 (pg_num cannot shrink until the OSDs merge PGs; cuttle osd pool set many pg_autoscale_mode off silences this)",
		"pool onmany has 128 placement groups, should have 32 (pg_autoscale_mode on, but pg_num cannot shrink until the OSDs merge PGs; cuttle osd pool set onmany pg_autoscale_mode off silences this)",
	}) {
		t.Errorf("POOL_TOO_MANY_PGS: %+v", many)
	}
	must(t, m.run("osd pool set", "pool", "few", "var", "pg_num", "val", "32"))
	must(t, m.run("osd pool set", "pool", "many", "var", "pg_autoscale_mode", "val", "off"))
	must(t, m.run("osd pool set", "pool", "onmany", "var", "pg_autoscale_mode", "val", "off"))
	if c := checks(m); len(c) != 0 {
		t.Fatalf("after fixing: %v", c)
	}
	// A threshold of 5 tolerates 8 PGs where 32 are ideal.
	must(t, m.run("osd pool set", "pool", "many", "var", "pg_autoscale_mode", "val", "warn"))
	must(t, m.run("config set", "who", "mon", "name", "pg_autoscaler_threshold", "value", "5"))
	if c := checks(m); len(c) != 0 {
		t.Fatalf("threshold 5: %v", c)
	}
}

// The leader raises pg_num of a pool in mode on once its data calls for
// 3 times as many PGs, then its pgp_num target; it waits out
// pg_autoscaler_sleep_interval between rounds, and changes nothing in a
// pool still moving from an earlier change, in a pool in another mode,
// nor a pool with too many PGs.
func TestTickRaisesPGNum(t *testing.T) {
	m := newCluster(t, 4, gib) // 400 PG copies
	must(t, m.run("osd pool create", "pool", "grow", "pg_num", "32", "autoscale_mode", "on"))
	must(t, m.run("osd pool create", "pool", "warned", "pg_num", "8"))
	must(t, m.run("osd pool create", "pool", "big", "pg_num", "128", "autoscale_mode", "on"))
	if got := m.tick(); len(got) != 0 {
		t.Fatalf("empty pools: %v", got)
	}
	// 1 GiB stored in 3 copies takes 0.75 of 4 GiB: 0.75 x 400 / 3 = 100
	// PGs, to 128, more than 3 x 32.
	m.stored[1] = gib
	if got := m.tick(); len(got) != 0 {
		t.Fatalf("within the interval: %v", got)
	}
	m.now = m.now.Add(time.Minute)
	if got := m.tick(); !slices.Equal(got, []string{"osd pool set pg_num=128"}) {
		t.Fatalf("round: %v", got)
	}
	p := m.osd.Map().PoolByName("grow")
	if p.PGNum != 128 || p.PGPNum != 32 {
		t.Fatalf("after the round: pg_num %d pgp_num %d", p.PGNum, p.PGPNum)
	}
	if got := m.tick(); !slices.Equal(got, []string{"osd pool set pgp_num=128"}) {
		t.Fatalf("after pg_num: %v", got)
	}
	if _, pgp := m.osd.Map().PoolByName("grow").Targets(); pgp != 128 {
		t.Fatalf("pgp_num_target %d", pgp)
	}
	// Twice as much data would call for 256, but the pool is still
	// moving (pgp_num 32, stepped by the OSD-map service toward 128).
	m.stored[1] = 2 * gib
	must(t, m.run("config set", "who", "mon", "name", "pg_autoscaler_sleep_interval", "value", "10s"))
	m.now = m.now.Add(10 * time.Second)
	if got := m.tick(); len(got) != 0 {
		t.Fatalf("pool still moving: %v", got)
	}
	must(t, m.run("osd pool set", "pool", "grow", "var", "pgp_num_actual", "val", "128"))
	if st := statusOf(t, m, "grow"); st.Ideal != 256 || st.Adjust {
		t.Fatalf("grow: ideal %d adjust %v (256 is within 3 x 128)", st.Ideal, st.Adjust)
	}
	if st := statusOf(t, m, "big"); !st.TooMany() {
		t.Fatalf("big: %+v", st)
	}
	m.now = m.now.Add(10 * time.Second)
	if got := m.tick(); len(got) != 0 {
		t.Fatalf("nothing to do: %v", got)
	}
	if p := m.osd.Map().PoolByName("warned"); p.PGNum != 8 {
		t.Fatalf("a pool in mode warn changed: pg_num %d", p.PGNum)
	}
}

func statusOf(t *testing.T, m *testMon, name string) PoolView {
	t.Helper()
	var views []PoolView
	if err := json.Unmarshal(must(t, m.run("osd pool autoscale-status")).Data, &views); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no pool %s", name)
	return PoolView{}
}

func TestOptionNames(t *testing.T) {
	for name, typ := range OptionNames() {
		o, ok := configmon.Lookup(name)
		if !ok || o.Type.String() != typ {
			t.Errorf("%s: schema has %v %v, service reads %s", name, ok, o.Type, typ)
		}
	}
}

// The service stores nothing and proposes nothing.
func TestNoWrites(t *testing.T) {
	m := newCluster(t, 3, gib)
	if ok, write := m.scaler.Handles("osd pool autoscale-status"); !ok || write {
		t.Fatalf("Handles: %v %v", ok, write)
	}
	if p, r := m.scaler.Prepare(moncmd.New("osd pool autoscale-status"), m.now); p != nil || r.Code != moncmd.EINVAL {
		t.Fatalf("Prepare: %v %+v", p, r)
	}
	if r, err := m.scaler.Apply(m.st.NewBatch(), []byte{1}, m.now); err != nil || r.Code != moncmd.EINVAL {
		t.Fatalf("Apply: %+v %v", r, err)
	}
}

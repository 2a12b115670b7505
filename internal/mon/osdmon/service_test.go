package osdmon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// script is a sequence of commands that exercises every kind of change.
func script() []moncmd.Command {
	c := moncmd.New
	return []moncmd.Command{
		c("osdmap create", "fsid", testFSID),
		c("osd create", "uuid", uuidA), c("osd create"), c("osd create"),
		c("osd boot", "id", "0", "addr", "a:0", "host", "h0", "class", "ssd"),
		c("osd boot", "id", "1", "addr", "a:1", "host", "h1", "weight", "0.25"),
		c("osd boot", "id", "2", "addr", "a:2", "host", "h1"),
		c("osd pool create", "pool", "rbd", "pg_num", "16"),
		c("osd pool set", "pool", "rbd", "var", "size", "val", "2"),
		c("osd crush add-bucket", "name", "r1", "type", "rack"),
		c("osd crush move", "name", "h1", "rack", "r1", "root", "default"),
		c("osd crush reweight", "name", "osd.2", "weight", "1.5"),
		c("osd crush rule create-replicated", "name", "fast", "root", "default", "type", "host", "class", "ssd"),
		c("osd set", "key", "noout"),
		c("osd down", "ids", "2"),
		c("osd unset", "key", "noout"),
		c("osd out", "ids", "1"),
		c("osd reweight", "id", "0", "weight", "0.8"),
		c("osd pool rename", "srcpool", "rbd", "destpool", "block"),
	}
}

// runScript prepares each command on m and commits the proposal on m and
// on the followers, as Raft would; it returns the proposals.
func runScript(t *testing.T, m *testMon, followers ...*testMon) [][]byte {
	var props [][]byte
	for _, c := range script() {
		m.now = m.now.Add(time.Second)
		p, r := m.svc.Prepare(c, m.now)
		if p == nil {
			t.Fatalf("%s: no proposal: %d %s", c, r.Code, r.Status)
		}
		props = append(props, p)
		want := must(t, m.commit(m.svc, p))
		for _, f := range followers {
			f.now = m.now.Add(time.Hour) // a follower's clock does not matter
			if got := f.commit(f.svc, p); got.Code != want.Code || got.Status != want.Status || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("%s: follower replied %+v, leader %+v", c, got, want)
			}
		}
	}
	return props
}

// TestDeterminism applies the same proposals on three monitors' stores
// and requires byte-identical service key spaces.
func TestDeterminism(t *testing.T) {
	a, b, c := newTestMon(t), newTestMon(t), newTestMon(t)
	runScript(t, a, b, c)
	da := a.dumpStore()
	if db, dc := b.dumpStore(), c.dumpStore(); da != db || da != dc {
		t.Fatalf("stores differ:\n%s\n---\n%s", da, db)
	}
	if !strings.Contains(da, "full/") || !strings.Contains(da, "inc/") || !strings.Contains(da, "meta=") {
		t.Errorf("store lacks history or meta:\n%s", da)
	}
}

// TestStaleProposal checks that a proposal prepared at epoch E is refused
// with EAGAIN, changing nothing, once another proposal made E+1.
func TestStaleProposal(t *testing.T) {
	m := newCluster(t)
	p1, _ := m.svc.Prepare(moncmd.New("osd create"), m.now)
	p2, _ := m.svc.Prepare(moncmd.New("osd set", "key", "noout"), m.now)
	must(t, m.commit(m.svc, p1))
	before := m.dumpStore()
	r := m.commit(m.svc, p2)
	if r.Code != moncmd.EAGAIN || !strings.Contains(r.Status, "prepared at epoch 1, map is at 2") {
		t.Fatalf("stale proposal: %d %s", r.Code, r.Status)
	}
	if after := m.dumpStore(); after != before || m.svc.Map().Flags() != 0 {
		t.Fatal("stale proposal changed the state")
	}
	// Prepared again, it applies.
	p2, _ = m.svc.Prepare(moncmd.New("osd set", "key", "noout"), m.now)
	must(t, m.commit(m.svc, p2))
}

// TestApplyRefusesGarbage checks that a proposal that does not decode or
// does not apply is a reply, not a store error, and changes nothing.
func TestApplyRefusesGarbage(t *testing.T) {
	m := newCluster(t)
	before := m.dumpStore()
	bad := proposal{kind: kindInc, base: 1, body: []byte("not an incremental")}
	for _, p := range [][]byte{nil, {1, 2, 3}, bad.encode()} {
		if r := m.commit(m.svc, p); r.Code != moncmd.EINVAL {
			t.Errorf("%x: code %d %s", p, r.Code, r.Status)
		}
	}
	if m.dumpStore() != before {
		t.Error("garbage changed the store")
	}
}

// TestHistoryTrim checks that the history keeps mon_min_osdmap_epochs
// epochs, and that old epochs can be read until trimmed.
func TestHistoryTrim(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("config set", "who", "mon", "name", "mon_min_osdmap_epochs", "value", "3"))
	for range 5 {
		must(t, m.run("osd create"))
	}
	first, last, err := m.st.Epochs(ServiceName)
	if err != nil || first != 4 || last != 6 {
		t.Fatalf("history %d..%d %v, want 4..6", first, last, err)
	}
	if r := m.run("osd getmap", "epoch", "3"); r.Code != moncmd.ENOENT || !strings.Contains(r.Status, "trimmed") {
		t.Errorf("trimmed epoch: %d %s", r.Code, r.Status)
	}
	r := must(t, m.run("osd getmap", "epoch", "4"))
	old, err := osdmap.UnmarshalMap(r.Data)
	if err != nil || old.Epoch() != 4 {
		t.Fatalf("getmap 4: %v", err)
	}
	if n, _, _ := old.NumOSDs(); n != 3 {
		t.Errorf("epoch 4 has %d osds", n)
	}
	if r := m.run("osd dump", "epoch", "4"); !strings.HasPrefix(r.Text, "epoch 4\n") {
		t.Errorf("dump epoch 4:\n%s", r.Text)
	}
	for _, e := range []string{"0", "7", "x"} {
		if r := m.run("osd getmap", "epoch", e); r.Code != moncmd.ENOENT {
			t.Errorf("getmap %s: %d %s", e, r.Code, r.Status)
		}
	}
	inc, err := m.st.Inc(ServiceName, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := osdmap.UnmarshalIncremental(inc); err != nil {
		t.Errorf("stored incremental: %v", err)
	}
}

// TestReload checks that a restarted monitor loads the state it applied.
func TestReload(t *testing.T) {
	m := newTestMon(t)
	runScript(t, m)
	again, err := New(Config{Options: m.cfg.View("mon")})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Load(m.st); err != nil {
		t.Fatal(err)
	}
	if !again.Map().Equal(m.svc.Map()) || fmt.Sprint(again.meta) != fmt.Sprint(m.svc.meta) {
		t.Fatal("reloaded state differs")
	}
	for _, prefix := range []string{"osd dump", "osd tree", "osd stat"} {
		if a, b := again.Query(moncmd.New(prefix)), m.svc.Query(moncmd.New(prefix)); a.Text != b.Text || !bytes.Equal(a.Data, b.Data) {
			t.Errorf("%s differs after reload", prefix)
		}
	}
}

func TestNew(t *testing.T) {
	if _, err := New(Config{}); err != ErrNoOptions {
		t.Fatalf("New without options: %v", err)
	}
}

// TestOptionNames checks that every option the service reads is in the
// configuration schema with the type the service reads it as.
func TestOptionNames(t *testing.T) {
	for name, typ := range OptionNames() {
		o, ok := configmon.Lookup(name)
		if !ok || o.Type.String() != typ {
			t.Errorf("%s: schema has %v %v, service reads %s", name, ok, o.Type, typ)
		}
	}
}

func TestDump(t *testing.T) {
	m := newBootedCluster(t, 2, 1)
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "2"))
	m.now = m.now.Add(time.Minute)
	must(t, m.run("osd down", "ids", "1"))
	r := must(t, m.run("osd dump"))
	want := "epoch 7\nfsid " + testFSID + "\ncreated 2026-01-02T03:04:05Z\nmodified 2026-01-02T03:05:05Z\nflags \n" +
		"full_ratio 0.95\nbackfillfull_ratio 0.9\nnearfull_ratio 0.85\n\n" +
		"pool 1 'rbd' replicated size 2 min_size 1 crush_rule 0 object_hash rjenkins pg_num 8 pgp_num 8 last_change 6 flags hashpspool\n\n" +
		"max_osd 2\n" +
		"osd.0 up   in  weight 1 up_from 3 down_at 0 10.0.0.0:6800 exists,up\n" +
		"osd.1 down in  weight 1 up_from 5 down_at 7 10.0.0.1:6800 exists\n"
	if r.Text != want {
		t.Errorf("dump text:\n%s\nwant\n%s", r.Text, want)
	}
	var v DumpView
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatal(err)
	}
	if v.Epoch != 7 || len(v.OSDs) != 2 || v.OSDs[1].Up || !v.OSDs[1].DownSince.Equal(m.now) || len(v.Pools) != 1 {
		t.Errorf("dump data %+v", v)
	}
}

func TestHealth(t *testing.T) {
	m := newBootedCluster(t, 4, 2)
	if checks := m.svc.Health(m.now); len(checks) != 0 {
		t.Fatalf("healthy cluster: %+v", checks)
	}
	must(t, m.run("osd pool create", "pool", "big", "size", "5", "min_size", "3"))
	must(t, m.run("osd pool create", "pool", "single", "size", "1", "yes_i_really_mean_it", "true"))
	must(t, m.run("osd set", "key", "noout"))
	must(t, m.run("osd down", "ids", "2,3"))
	must(t, m.run("osd down", "ids", "0"))
	m.now = m.now.Add(90 * time.Second)
	got := health.Summarize(m.svc.HealthChecks(m.now)).Text(true)
	want := "HEALTH_WARN noout flag(s) set; 3 osds down; 1 host (2 osds) down; 1 pool(s) have no replicas configured; OSD count 4 < largest pool size 5\n" +
		"[WRN] OSDMAP_FLAGS: noout flag(s) set\n" +
		"[WRN] OSD_DOWN: 3 osds down\n" +
		"    osd.0 (root=default,host=h0) is down (for 1m30s)\n" +
		"    osd.2 (root=default,host=h1) is down (for 1m30s)\n" +
		"    osd.3 (root=default,host=h1) is down (for 1m30s)\n" +
		"[WRN] OSD_HOST_DOWN: 1 host (2 osds) down\n" +
		"    host h1 (root=default) (2 osds) is down\n" +
		"[WRN] POOL_NO_REDUNDANCY: 1 pool(s) have no replicas configured\n" +
		"    pool 'single' has no replicas configured\n" +
		"[WRN] TOO_FEW_OSDS: OSD count 4 < largest pool size 5\n"
	if got != want {
		t.Errorf("health:\n%s\nwant\n%s", got, want)
	}
	// Out OSDs are not "down" problems.
	must(t, m.run("osd out", "ids", "0,2,3"))
	for _, c := range m.svc.Health(m.now) {
		if c.Code == "OSD_DOWN" {
			t.Errorf("out osds reported down: %+v", c)
		}
	}
	if newTestMon(t).svc.Health(m.now) != nil {
		t.Error("health without a map")
	}
}

func FuzzDecodeProposal(f *testing.F) {
	m := newTestMon(f)
	for _, c := range script() {
		p, r := m.svc.Prepare(c, m.now)
		if p == nil {
			f.Fatalf("%s: %s", c, r.Status)
		}
		f.Add(p)
		m.commit(m.svc, p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProposal(b)
		if err != nil {
			return
		}
		q, err := decodeProposal(p.encode())
		if err != nil || fmt.Sprint(q) != fmt.Sprint(p) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, p, q)
		}
	})
}

func FuzzDecodeMeta(f *testing.F) {
	f.Add(metaTable{0: {UUID: uuidA, DownSince: t0}, 3: {}}.encode())
	f.Add(metaTable{}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		mt, err := decodeMeta(b)
		if err != nil {
			return
		}
		again, err := decodeMeta(mt.encode())
		if err != nil || fmt.Sprint(again) != fmt.Sprint(mt) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzApply checks that Apply of any bytes on a live cluster either
// applies a whole epoch or changes nothing, and never fails the store.
func FuzzApply(f *testing.F) {
	seed := newTestMon(f)
	for _, c := range script() {
		p, _ := seed.svc.Prepare(c, seed.now)
		f.Add(p)
		seed.commit(seed.svc, p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := newCluster(t)
		before := m.svc.Map().Epoch()
		r := m.commit(m.svc, b)
		after := m.svc.Map().Epoch()
		if (r.Code == moncmd.OK) != (after == before+1) || (r.Code != moncmd.OK && after != before) {
			t.Fatalf("code %d, epoch %d -> %d", r.Code, before, after)
		}
	})
}

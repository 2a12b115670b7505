package mdsmon

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestFSCommands(t *testing.T) {
	type step struct {
		prefix string
		args   []string
		code   int32
		status string // substring of Status
		text   string // substring of Text
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"new, ls, idempotent", []step{
			{prefix: "fs ls", text: "No filesystems enabled"},
			{prefix: "fs new", args: []string{"fs_name", "cephfs", "metadata", "meta", "data", "data"}, status: "new fs with metadata pool 1 and data pool 2"},
			{prefix: "fs ls", text: "name: cephfs, metadata pool: meta, data pools: [data ]"},
			{prefix: "fs new", args: []string{"fs_name", "cephfs", "metadata", "meta", "data", "data"}, status: "already exists"},
			{prefix: "fs new", args: []string{"fs_name", "cephfs", "metadata", "other", "data", "data2"}, code: moncmd.EEXIST},
			{prefix: "fs new", args: []string{"fs_name", "fs2", "metadata", "other", "data", "data"}, code: moncmd.EINVAL, status: "already used by file system 'cephfs'"},
			{prefix: "fs new", args: []string{"fs_name", "fs2", "metadata", "meta", "data", "data2"}, code: moncmd.EINVAL, status: "already used"},
			{prefix: "fs new", args: []string{"fs_name", "fs2", "metadata", "other", "data", "other"}, code: moncmd.EINVAL, status: "must differ"},
			{prefix: "fs new", args: []string{"fs_name", "fs2", "metadata", "nope", "data", "data2"}, code: moncmd.ENOENT, status: "pool 'nope' does not exist"},
			{prefix: "fs new", args: []string{"fs_name", "bad name", "metadata", "other", "data", "data2"}, code: moncmd.EINVAL, status: "letters, digits"},
			{prefix: "fs new", args: []string{"fs_name", "fs2", "metadata", "other", "data", "data2"}},
			{prefix: "mds stat", text: "cephfs:0 fs2:0\n"},
		}},
		{"set and get", []step{
			{prefix: "fs new", args: []string{"fs_name", "cephfs", "metadata", "meta", "data", "data"}},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "max_mds", "val", "2"}, status: "max_mds = 2"},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "max_mds", "val", "2"}, status: "already 2"},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "max_mds", "val", "0"}, code: moncmd.EINVAL, status: "from 1 to 256"},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "standby_count_wanted", "val", "2"}},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "session_timeout", "val", "30"}},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "session_autoclose", "val", "90"}},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "allow_standby_replay", "val", "true"}},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "joinable", "val", "maybe"}, code: moncmd.EINVAL, status: "not true or false"},
			{prefix: "fs set", args: []string{"fs_name", "cephfs", "var", "colour", "val", "red"}, code: moncmd.EINVAL, status: "unknown variable"},
			{prefix: "fs set", args: []string{"fs_name", "nofs", "var", "max_mds", "val", "1"}, code: moncmd.ENOENT},
			{prefix: "fs get", args: []string{"fs_name", "cephfs"}, text: "cephfs - id 1, max_mds 2, standby_count_wanted 2, joinable, allow_standby_replay"},
		}},
		{"data pools", []step{
			{prefix: "fs new", args: []string{"fs_name", "cephfs", "metadata", "meta", "data", "data"}},
			{prefix: "fs add_data_pool", args: []string{"fs_name", "cephfs", "pool", "data2"}, status: "added data pool 3"},
			{prefix: "fs add_data_pool", args: []string{"fs_name", "cephfs", "pool", "data2"}, status: "already a data pool"},
			{prefix: "fs add_data_pool", args: []string{"fs_name", "cephfs", "pool", "meta"}, code: moncmd.EINVAL, status: "metadata pool"},
			{prefix: "fs rm_data_pool", args: []string{"fs_name", "cephfs", "pool", "data"}, code: moncmd.EINVAL, status: "default data pool"},
			{prefix: "fs rm_data_pool", args: []string{"fs_name", "cephfs", "pool", "data2"}, status: "removed data pool 3"},
			{prefix: "fs ls", text: "data pools: [data ]"},
		}},
		{"rm guard", []step{
			{prefix: "fs new", args: []string{"fs_name", "cephfs", "metadata", "meta", "data", "data"}},
			{prefix: "fs rm", args: []string{"fs_name", "cephfs"}, code: moncmd.EPERM, status: "--yes-i-really-mean-it"},
			{prefix: "fs rm", args: []string{"fs_name", "cephfs", "yes_i_really_mean_it", "true"}, code: moncmd.EINVAL, status: "fs fail cephfs"},
			{prefix: "fs fail", args: []string{"fs_name", "cephfs"}, status: "not joinable"},
			{prefix: "fs rm", args: []string{"fs_name", "cephfs", "yes_i_really_mean_it", "true"}, status: "removed file system 'cephfs'"},
			{prefix: "fs rm", args: []string{"fs_name", "cephfs", "yes_i_really_mean_it", "true"}, status: "does not exist"},
			// Its pools are free again.
			{prefix: "fs new", args: []string{"fs_name", "again", "metadata", "meta", "data", "data"}},
			{prefix: "fs set", args: []string{"fs_name", "again", "var", "down", "val", "true"}},
			{prefix: "fs rm", args: []string{"fs_name", "again", "yes_i_really_mean_it", "true"}, status: "removed file system 'again'"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newCluster(t)
			for i, s := range tc.steps {
				r := m.run(s.prefix, s.args...)
				if r.Code != s.code || !strings.Contains(r.Status, s.status) || !strings.Contains(r.Text, s.text) {
					t.Fatalf("step %d %s %v: code %d status %q text %q; want code %d, status ~%q, text ~%q",
						i, s.prefix, s.args, r.Code, r.Status, r.Text, s.code, s.status, s.text)
				}
			}
		})
	}
}

// A metadata pool with objects is refused unless forced (Ceph's check),
// counted by the real PG statistics.
func TestNewRefusesMetadataPoolWithObjects(t *testing.T) {
	m := newCluster(t)
	pool := m.osd.Map().PoolByName("meta").ID
	st := wire.PGStat{PG: osdmap.PG{Pool: pool, Seed: 0}, State: "active+clean", Up: []int32{0, 1, 2}, Acting: []int32{0, 1, 2}, Objects: 3}
	must(t, m.run("pg report", "report", string(wire.PGStatsReport{OSD: 0, Epoch: uint64(m.osd.Map().Epoch()), PGs: []wire.PGStat{st}}.Encode())))
	r := m.run("fs new", "fs_name", "cephfs", "metadata", "meta", "data", "data")
	if r.Code != moncmd.EINVAL || !strings.Contains(r.Status, "already contains 3 objects") {
		t.Fatalf("fs new on a used pool: %d %s", r.Code, r.Status)
	}
	must(t, m.run("fs new", "fs_name", "cephfs", "metadata", "meta", "data", "data", "force", "true"))
}

// Beacons through the service: a rank is assigned, its beacons stop, and
// after mds_beacon_grace the leader's tick gives it to the standby.
func TestBeaconsAndFailover(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("fs new", "fs_name", "cephfs", "metadata", "meta", "data", "data"))
	a, b := newMDS("a", 1), newMDS("b", 2)
	second := func() {
		m.now = m.now.Add(time.Second)
		for _, d := range []*mdsd{a, b} {
			if d != nil {
				d.send(m)
			}
		}
		m.tick()
	}
	second()
	second()
	if got := m.mds.Map().Summary(); got != "cephfs:1 {0=a=up:active} 1 up:standby" {
		t.Fatalf("after two seconds: %s", got)
	}
	epoch := m.mds.Map().Epoch
	second()
	if m.mds.Map().Epoch != epoch {
		t.Fatalf("steady beacons changed the map: epoch %d -> %d", epoch, m.mds.Map().Epoch)
	}
	a = nil
	for i := 1; i <= 10; i++ {
		second()
		if h := m.mds.Map().Holder(1, 0); h.Name == "b" {
			if i != 5 {
				t.Errorf("b took rank 0 %d s after a's last beacon, want 5 (grace 4 s)", i)
			}
			break
		}
	}
	for range 4 {
		second()
	}
	// The failed holder's incarnation is blocklisted in the OSD map.
	if bl := m.osd.Map().BlocklistAddrs(); len(bl) != 1 || bl[0] != "10.1.0.1:68a/1" ||
		!m.osd.Map().IsBlocklisted("10.1.0.1:68a/1", m.now) || m.osd.Map().IsBlocklisted("10.1.0.1:68a/2", m.now) {
		t.Fatalf("blocklist %v", bl)
	}
	if got := m.mds.Map().Summary(); got != "cephfs:1 {0=b=up:active}" {
		t.Fatalf("after failover: %s", got)
	}
	checks := codes(m.mds.HealthChecks(m.now))
	if checks != "MDS_INSUFFICIENT_STANDBY" {
		t.Fatalf("health %s", checks)
	}
	// The stored map is the applied one.
	again := newTestMon(t, m.st)
	if again.mds.Map().Summary() != m.mds.Map().Summary() {
		t.Fatalf("reloaded: %s", again.mds.Map().Summary())
	}
}

// Beacons are the leader's: the monitor asks the service.
func TestBeaconIsLeaderOnly(t *testing.T) {
	s := New(Config{})
	if !s.LeaderOnly("mds beacon") || s.LeaderOnly("fs ls") || s.LeaderOnly("mds failover") {
		t.Fatal("LeaderOnly")
	}
}

// A new leader gives every daemon a fresh grace.
func TestNewLeaderResetsLiveness(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("fs new", "fs_name", "cephfs", "metadata", "meta", "data", "data"))
	a, b := newMDS("a", 1), newMDS("b", 2)
	a.send(m)
	b.send(m)
	a.send(m)
	m.tick()
	// Silence for a minute, as while another monitor led; this one
	// leads again: nobody is failed at its first tick.
	m.now = m.now.Add(time.Minute)
	m.tick()
	if h := m.mds.Map().Holder(1, 0); h == nil || h.Name != "a" {
		t.Fatalf("rank 0 after a new leadership: %+v", h)
	}
}

func TestHealth(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("fs new", "fs_name", "cephfs", "metadata", "meta", "data", "data"))
	if got := codes(m.mds.HealthChecks(m.now)); got != "MDS_ALL_DOWN MDS_INSUFFICIENT_STANDBY" {
		t.Fatalf("no daemons: %s", got)
	}
	a := newMDS("a", 1)
	a.send(m)
	if got := codes(m.mds.HealthChecks(m.now)); got != "FS_DEGRADED MDS_INSUFFICIENT_STANDBY" {
		t.Fatalf("rank creating: %s", got)
	}
	must(t, m.run("fs set", "fs_name", "cephfs", "var", "standby_count_wanted", "val", "0"))
	a.send(m)
	if got := codes(m.mds.HealthChecks(m.now)); got != "" {
		t.Fatalf("active: %s", got)
	}
	must(t, m.run("mds fail", "role_or_gid", "cephfs:0"))
	if got := codes(m.mds.HealthChecks(m.now)); got != "MDS_ALL_DOWN FS_WITH_FAILED_MDS FS_DEGRADED" {
		t.Fatalf("failed: %s", got)
	}
	// The failed daemon is told so and restarts as a new incarnation,
	// which replays the rank.
	if r := a.send(m); r.State != mdsmap.StateNone {
		t.Fatalf("failed daemon's reply: %v", r.State)
	}
	a = newMDS("a", 2)
	if r := a.send(m); r.State != mdsmap.StateReplay {
		t.Fatalf("new incarnation: %v", r.State)
	}
	// Damage.
	a.b.Seq++
	a.b.State = mdsmap.StateDamaged
	m.beacon(a.b)
	if got := codes(m.mds.HealthChecks(m.now)); !strings.Contains(got, "MDS_DAMAGE") {
		t.Fatalf("damaged: %s", got)
	}
	must(t, m.run("mds repaired", "role", "0"))
	if f := m.mds.Map().FS[1]; len(f.Damaged) != 0 {
		t.Fatalf("still damaged: %v", f.Damaged)
	}
}

func codes(cs []health.Check) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Code)
	}
	return strings.Join(out, " ")
}

// fs status's JSON names ranks and standbys.
func TestStatusJSON(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("fs new", "fs_name", "cephfs", "metadata", "meta", "data", "data"))
	newMDS("a", 1).send(m)
	newMDS("b", 2).send(m)
	r := must(t, m.run("fs status", "fs_name", "cephfs"))
	var v MapView
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.FileSystems) != 1 || v.FileSystems[0].Ranks[0].Holder.Name != "a" || v.FileSystems[0].Ranks[0].State != "creating" ||
		len(v.Standbys) != 1 || v.Standbys[0].Name != "b" || v.FileSystems[0].MetadataPool != "meta" {
		t.Fatalf("fs status: %s", r.Data)
	}
	for _, want := range []string{"RANK  STATE     MDS  GID  ADDR", "0     creating  a    1", "STANDBY MDS  GID  ADDR", "meta  metadata"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("fs status text lacks %q:\n%s", want, r.Text)
		}
	}
}

func FuzzProposal(f *testing.F) {
	mb, _ := mdsmap.New().MarshalBinary()
	b := wire.MDSBeacon{Name: "a", State: mdsmap.StateBoot, WantRank: mdsmap.NoRank}
	f.Add(proposal{base: 1, next: mb, status: "x", events: []string{"e"}, fence: []string{"1.2.3.4:5"}, beacon: &b}.encode())
	f.Add(proposal{base: 3, next: mb}.encode())
	f.Add(proposal{base: 3, status: "fenced", fenced: []string{"1.2.3.4:5/6"}}.encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeProposal(data)
		if err != nil {
			return
		}
		if _, err := decodeProposal(p.encode()); err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
	})
}

func FuzzFences(f *testing.F) {
	f.Add(encodeFences(nil))
	f.Add(encodeFences([]string{"1.2.3.4:5/6", "h:1"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs, err := decodeFences(data)
		if err != nil {
			return
		}
		again, err := decodeFences(encodeFences(fs))
		if err != nil || !slices.Equal(again, fs) {
			t.Fatalf("fences %q do not round-trip: %q, %v", fs, again, err)
		}
	})
}

// A fence survives a leader change: the failover that fails a holder is
// applied (every monitor has the fence in its store), the leader dies
// before its tick sends the blocklist, and the next leader — a service
// loaded from the same store — sends it; once the OSD map carries it,
// the fence is retired everywhere and not sent again, even after an
// operator removes the entry.
func TestFenceSurvivesLeaderChange(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("fs new", "fs_name", "cephfs", "metadata", "meta", "data", "data"))
	a, b := newMDS("a", 1), newMDS("b", 2)
	for range 3 {
		m.now = m.now.Add(time.Second)
		a.send(m)
		b.send(m)
		m.tick()
	}
	if got := m.mds.Map().Holder(1, 0); got.Name != "a" {
		t.Fatalf("rank 0 held by %q, want a", got.Name)
	}
	// a falls silent; the leader fails it, but only proposes and applies
	// the failover: it dies before its next tick.
	for m.mds.Map().Holder(1, 0).Name == "a" {
		m.now = m.now.Add(time.Second)
		b.send(m)
		for _, c := range m.mds.Tick(m.now) {
			if c.Prefix == "osd blocklist add" {
				t.Fatalf("blocklist sent in the failover's own tick: %v", c)
			}
			var kv []string
			for k, v := range c.Args {
				kv = append(kv, k, v)
			}
			must(t, m.run(c.Prefix, kv...))
		}
	}
	if bl := m.osd.Map().BlocklistAddrs(); len(bl) != 0 {
		t.Fatalf("blocklist before any tick sent it: %v", bl)
	}
	// The new leader: the same replicated state, loaded afresh.
	m2 := newTestMon(t, m.st)
	m2.log = m.log
	m2.now = m.now.Add(10 * time.Second)
	if got := m2.mds.fences; len(got) != 1 || got[0] != "10.1.0.1:68a/1" {
		t.Fatalf("fences loaded by the new leader: %v", got)
	}
	var sent []string
	for range 3 {
		for _, c := range m2.mds.Tick(m2.now) {
			sent = append(sent, c.Prefix+" "+c.Args["addr"]+c.Args["addrs"])
			var kv []string
			for k, v := range c.Args {
				kv = append(kv, k, v)
			}
			must(t, m2.run(c.Prefix, kv...))
		}
		m2.now = m2.now.Add(time.Second)
	}
	want := []string{"osd blocklist add 10.1.0.1:68a/1", "mds fenced 10.1.0.1:68a/1"}
	if !slices.Equal(sent, want) {
		t.Fatalf("the new leader's ticks sent %q, want %q", sent, want)
	}
	if !m2.osd.Map().IsBlocklisted("10.1.0.1:68a/1", m2.now) || len(m2.mds.fences) != 0 {
		t.Fatalf("blocklist %v, fences still pending %v", m2.osd.Map().BlocklistAddrs(), m2.mds.fences)
	}
	// Retired: an operator's rm is not undone, and a restart finds no
	// fence.
	must(t, m2.run("osd blocklist rm", "addr", "10.1.0.1:68a/1"))
	if cmds := m2.mds.Tick(m2.now); len(cmds) != 0 {
		t.Fatalf("tick after the fence was retired: %v", cmds)
	}
	if m3 := newTestMon(t, m.st); len(m3.mds.fences) != 0 {
		t.Fatalf("fences after a restart: %v", m3.mds.fences)
	}
}

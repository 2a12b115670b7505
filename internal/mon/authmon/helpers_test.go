package authmon

import (
	"bytes"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	pb "go.etcd.io/raft/v3/raftpb"
)

// t0 is the tests' start of time.
var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// testMon is one monitor without Raft: each write is prepared, appended
// to the store's log as the next entry, applied and committed, the path a
// single-monitor cluster takes. It has its own Authority, as a monitor
// daemon does.
type testMon struct {
	t         testing.TB
	st        *monstore.Store
	svc       *Service
	authority *auth.Authority
	index     uint64
	now       time.Time
}

// newTestMon returns a monitor whose KeyServer falls back to seed until
// seeded, and whose Tick seeds from it (nil: no bootstrap).
func newTestMon(t testing.TB, seed auth.Keyring) *testMon {
	t.Helper()
	st, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "mon"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := &testMon{t: t, st: st, now: t0}
	var fallback auth.KeyServer
	if seed != nil {
		fallback = seed
	}
	m.start(NewKeyServer(fallback), seed)
	return m
}

// start builds the service and its Authority as the daemon does and
// loads the store.
func (m *testMon) start(keys *KeyServer, seed auth.Keyring) {
	m.t.Helper()
	a, err := auth.NewAuthority(auth.AuthorityConfig{Keys: keys, Now: func() time.Time { return m.now }})
	if err != nil {
		m.t.Fatal(err)
	}
	svc, err := New(Config{Keys: keys, Authority: a, Seed: seed})
	if err != nil {
		m.t.Fatal(err)
	}
	if err := svc.Load(m.st); err != nil {
		m.t.Fatal(err)
	}
	m.svc, m.authority = svc, a
}

// run sends a command as the driver does: a read is answered by Query, a
// write is prepared and, if there is a proposal, committed.
func (m *testMon) run(prefix string, kv ...string) moncmd.Reply {
	m.t.Helper()
	return m.runCmd(moncmd.New(prefix, kv...))
}

func (m *testMon) runCmd(c moncmd.Command) moncmd.Reply {
	m.t.Helper()
	ok, write := m.svc.Handles(c.Prefix)
	if !ok {
		m.t.Fatalf("%s: not handled", c.Prefix)
	}
	if !write {
		return m.svc.Query(c)
	}
	p, r := m.svc.Prepare(c, m.now)
	if p == nil {
		return r
	}
	return m.commit(p)
}

// commit appends the proposal as the next log entry and applies it.
func (m *testMon) commit(p []byte) moncmd.Reply {
	m.t.Helper()
	m.index++
	i := m.index
	if err := m.st.Append(&pb.HardState{Term: new(uint64(1)), Commit: new(i)},
		[]*pb.Entry{{Index: new(i), Term: new(uint64(1)), Type: pb.EntryNormal.Enum(), Data: p}}, nil); err != nil {
		m.t.Fatal(err)
	}
	b := m.st.NewBatch()
	r, err := m.svc.Apply(b, p, m.now)
	if err != nil {
		m.t.Fatal(err)
	}
	if err := m.st.Commit(i, b); err != nil {
		m.t.Fatal(err)
	}
	return r
}

// tick runs the service's Tick commands as the leader's driver does.
func (m *testMon) tick() []moncmd.Reply {
	m.t.Helper()
	var out []moncmd.Reply
	for _, c := range m.svc.Tick(m.now) {
		out = append(out, m.runCmd(c))
	}
	return out
}

// dump returns the service's key space.
func (m *testMon) dump() map[string][]byte {
	m.t.Helper()
	out := map[string][]byte{}
	if err := m.st.Scan(ServiceName, nil, func(k, v []byte) error {
		out[string(k)] = bytes.Clone(v)
		return nil
	}); err != nil {
		m.t.Fatal(err)
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

func name(s string) auth.EntityName {
	n, err := auth.ParseEntityName(s)
	if err != nil {
		panic(err)
	}
	return n
}

// seedKeyring is what mkfs writes: client.admin and the monitors' key.
func seedKeyring() auth.Keyring {
	return auth.Keyring{
		name("client.admin"): {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *", "osd": "allow *"}},
		name("mon.*"):        {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *"}},
	}
}

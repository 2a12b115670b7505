package configmon

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	pb "go.etcd.io/raft/v3/raftpb"
)

// testMon is one monitor without Raft: each write is prepared, appended
// to the store's log as the next entry, applied and committed, the path a
// single-monitor cluster takes.
type testMon struct {
	t     testing.TB
	st    *monstore.Store
	svc   *Service
	index uint64
}

func newTestMon(t testing.TB) *testMon {
	t.Helper()
	st, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "mon"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := New(nil)
	if err := svc.Load(st); err != nil {
		t.Fatal(err)
	}
	return &testMon{t: t, st: st, svc: svc}
}

// run sends a command as the driver does: a read is answered by Query, a
// write is prepared and, if there is a proposal, committed.
func (m *testMon) run(prefix string, kv ...string) moncmd.Reply {
	m.t.Helper()
	c := moncmd.New(prefix, kv...)
	ok, write := m.svc.Handles(c.Prefix)
	if !ok {
		m.t.Fatalf("%s: not handled", c.Prefix)
	}
	if !write {
		return m.svc.Query(c)
	}
	p, r := m.svc.Prepare(c, time.Unix(1000, 0))
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
	r, err := m.svc.Apply(b, p, time.Unix(1000, 0))
	if err != nil {
		m.t.Fatal(err)
	}
	if err := m.st.Commit(i, b); err != nil {
		m.t.Fatal(err)
	}
	return r
}

func must(t testing.TB, r moncmd.Reply) moncmd.Reply {
	t.Helper()
	if r.Code != moncmd.OK {
		t.Fatalf("code %d: %s", r.Code, r.Status)
	}
	return r
}

// Package montest drives monitor services without Raft, for their tests:
// a Log over a real store in memory, where each write is prepared,
// appended to the log, applied and committed, as a single-monitor
// cluster does. Imported only by _test.go files.
package montest

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Log is a monitor's store and the index of its last entry.
type Log struct {
	t     testing.TB
	Store *monstore.Store
	index uint64
}

// Open returns a Log over a store in memory, closed when the test ends.
func Open(t testing.TB) *Log {
	t.Helper()
	st, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "mon"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return On(t, st)
}

// On returns a Log over st, whose next entry is index 1 (a test that
// reopens a store starts its log over it).
func On(t testing.TB, st *monstore.Store) *Log { return &Log{t: t, Store: st} }

// Run gives the command to the first of services that handles it: a
// query is answered, a write prepared and, if it makes a proposal,
// committed at now.
func (l *Log) Run(services []moncmd.Service, now time.Time, prefix string, kv ...string) moncmd.Reply {
	l.t.Helper()
	c := moncmd.New(prefix, kv...)
	for _, s := range services {
		ok, write := s.Handles(prefix)
		if !ok {
			continue
		}
		if !write {
			return s.Query(c)
		}
		p, r := s.Prepare(c, now)
		if p == nil {
			return r
		}
		return l.Commit(s, p, now)
	}
	l.t.Fatalf("%s: no service handles it", prefix)
	return moncmd.Reply{}
}

// Commit appends proposal p to the log, has s apply it at now and
// commits the result.
func (l *Log) Commit(s moncmd.Service, p []byte, now time.Time) moncmd.Reply {
	l.t.Helper()
	l.index++
	i := l.index
	if err := l.Store.Append(&pb.HardState{Term: new(uint64(1)), Commit: new(i)},
		[]*pb.Entry{{Index: new(i), Term: new(uint64(1)), Type: pb.EntryNormal.Enum(), Data: p}}, nil); err != nil {
		l.t.Fatal(err)
	}
	b := l.Store.NewBatch()
	r, err := s.Apply(b, p, now)
	if err != nil {
		l.t.Fatal(err)
	}
	if err := l.Store.Commit(i, b); err != nil {
		l.t.Fatal(err)
	}
	return r
}

package mon

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	pb "go.etcd.io/raft/v3/raftpb"
)

// A command sent to a second monitor after later commands of the same
// client were applied is answered from the command log, not applied
// again; once the client no longer awaits it, its copies are dropped;
// and the log survives a restart of every monitor.
func TestResentCommandAppliesOnce(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 3)
		names := []string{"a", "b", "c"}
		for _, n := range names {
			c.start(n)
		}
		defer c.stopAll()
		tc, reader := c.client("x"), c.client("reader")
		send := func(mon string, seq, oldest uint64, v string) moncmd.Reply {
			t.Helper()
			r, err := tc.runNumbered(mon, time.Minute, seq, oldest, moncmd.New("kv set", "key", "k", "value", v))
			if err != nil {
				t.Fatalf("command %d on mon.%s: %v", seq, mon, err)
			}
			return r
		}
		first := send("a", 1, 1, "1")
		send("a", 2, 1, "2") // command 1 may still be resent
		if again := send("b", 1, 1, "1"); !reflect.DeepEqual(again, first) {
			t.Fatalf("second copy of command 1 answered %+v, want the first answer %+v", again, first)
		}
		if got := get(t, reader, "c", "k"); got != "2" {
			t.Fatalf("k = %q after a second copy of an earlier command, want 2", got)
		}
		send("a", 3, 3, "3") // the client awaits nothing below 3 now
		if late := send("c", 1, 1, "1"); late.Code != moncmd.ETIMEDOUT {
			t.Fatalf("copy of a command no longer awaited: %+v, want ETIMEDOUT", late)
		}
		for _, n := range names {
			c.stop(n)
		}
		for _, n := range names {
			c.start(n)
		}
		if late := send("b", 2, 2, "2"); late.Code != moncmd.ETIMEDOUT {
			t.Fatalf("after a restart, copy of a command no longer awaited: %+v, want ETIMEDOUT", late)
		}
		if got := get(t, reader, "a", "k"); got != "3" {
			t.Fatalf("k = %q, want 3", got)
		}
	})
}

func openTestStore(t *testing.T) *monstore.Store {
	t.Helper()
	st, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "/mon"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// commit applies fn's changes to the log in one batch, as entry index.
func commit(t *testing.T, st *monstore.Store, index uint64, fn func(b *monstore.Batch) error) {
	t.Helper()
	if err := st.Append(nil, []*pb.Entry{{Index: new(index), Term: new(uint64(1))}}, nil); err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	defer b.Close()
	if err := fn(b); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(index, b); err != nil {
		t.Fatal(err)
	}
}

func TestCommandLogOutcomes(t *testing.T) {
	st := openTestStore(t)
	var l commandLog
	if err := l.load(st); err != nil {
		t.Fatal(err)
	}
	id := commandID{Client: clientKey("client.admin", 7), Seq: 1, Oldest: 1}
	ok := moncmd.Reply{Status: "done", Data: []byte(`{"x":1}`)}
	commit(t, st, 1, func(b *monstore.Batch) error {
		if _, seen, err := l.seen(b, id, 100); seen || err != nil {
			return fmt.Errorf("new command seen: %v %v", seen, err)
		}
		// Refused as stale: not an outcome, so the next proposal applies.
		if err := l.record(b, id, moncmd.Errorf(moncmd.EAGAIN, "stale")); err != nil {
			return err
		}
		if _, seen, err := l.seen(b, id, 101); seen || err != nil {
			return fmt.Errorf("command refused with EAGAIN seen: %v %v", seen, err)
		}
		return l.record(b, id, ok)
	})
	var reloaded commandLog
	if err := reloaded.load(st); err != nil {
		t.Fatal(err)
	}
	commit(t, st, 2, func(b *monstore.Batch) error {
		r, seen, err := reloaded.seen(b, id, 102)
		if !seen || err != nil || !reflect.DeepEqual(r, ok) {
			return fmt.Errorf("reloaded log: %+v %v %v, want %+v", r, seen, err, ok)
		}
		// Another client's command 1 is its own.
		other := commandID{Client: clientKey("client.admin", 8), Seq: 1, Oldest: 1}
		if _, seen, err := reloaded.seen(b, other, 102); seen || err != nil {
			return fmt.Errorf("another client's command seen: %v %v", seen, err)
		}
		return nil
	})
	// Clients silent since before the cutoff are forgotten.
	commit(t, st, 3, func(b *monstore.Batch) error {
		if err := reloaded.expire(b, 103); err != nil {
			return err
		}
		if len(reloaded.clients) != 0 {
			return fmt.Errorf("%d clients left after expiry", len(reloaded.clients))
		}
		return nil
	})
	if err := reloaded.load(st); err != nil || len(reloaded.clients) != 0 {
		t.Fatalf("after expiry the store holds %d clients (%v)", len(reloaded.clients), err)
	}
}

// A client that never lets go of its oldest command keeps at most
// maxClientOutcomes outcomes; copies of the forgotten ones are dropped.
func TestCommandLogBound(t *testing.T) {
	st := openTestStore(t)
	var l commandLog
	if err := l.load(st); err != nil {
		t.Fatal(err)
	}
	key := clientKey("client.greedy", 1)
	n := uint64(maxClientOutcomes + 10)
	commit(t, st, 1, func(b *monstore.Batch) error {
		for seq := uint64(1); seq <= n; seq++ {
			id := commandID{Client: key, Seq: seq, Oldest: 1}
			if _, seen, err := l.seen(b, id, 1); seen || err != nil {
				return fmt.Errorf("command %d seen: %v %v", seq, seen, err)
			}
			if err := l.record(b, id, moncmd.Reply{Status: fmt.Sprint(seq)}); err != nil {
				return err
			}
		}
		return nil
	})
	cc := l.clients[key]
	if len(cc.outcomes) != maxClientOutcomes || cc.floor != n-maxClientOutcomes+1 {
		t.Fatalf("%d outcomes, floor %d", len(cc.outcomes), cc.floor)
	}
	commit(t, st, 2, func(b *monstore.Batch) error {
		r, seen, err := l.seen(b, commandID{Client: key, Seq: 1, Oldest: 1}, 2)
		if !seen || err != nil || r.Code != moncmd.ETIMEDOUT {
			return fmt.Errorf("copy of a forgotten command: %+v %v %v", r, seen, err)
		}
		return nil
	})
}

func TestClientCommandsEncoding(t *testing.T) {
	cc := &clientCommands{floor: 4, last: -5, outcomes: map[uint64]moncmd.Reply{
		4: {Status: "ok"}, 9: {Code: moncmd.EEXIST, Status: "exists", Data: []byte("{}"), Text: "t"}}}
	got, err := decodeClientCommands(cc.encode())
	if err != nil || !reflect.DeepEqual(got, cc) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	below := &clientCommands{floor: 4, outcomes: map[uint64]moncmd.Reply{3: {}}}
	if _, err := decodeClientCommands(below.encode()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("outcome below the floor: %v, want ErrCorrupt", err)
	}
	b := cc.encode()
	if _, err := decodeClientCommands(b[:len(b)-1]); err == nil {
		t.Fatal("truncated record decoded")
	}
}

func FuzzDecodeClientCommands(f *testing.F) {
	f.Add((&clientCommands{floor: 1, outcomes: map[uint64]moncmd.Reply{1: {Status: "x"}}}).encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		cc, err := decodeClientCommands(b)
		if err != nil {
			return
		}
		again, err := decodeClientCommands(cc.encode())
		if err != nil || !reflect.DeepEqual(again, cc) {
			t.Fatalf("re-encoding changed %+v into %+v (%v)", cc, again, err)
		}
	})
}

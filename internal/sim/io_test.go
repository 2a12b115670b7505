package sim

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/cls/lock"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// threeOSDs starts a monitor and three OSDs on three hosts, and a pool of
// size 3 with 8 PGs; it returns the map epoch after the pool exists.
func threeOSDs(t *testing.T) (*Cluster, uint64) { return threeOSDsWith(t, Options{}) }

// threeOSDsWith is threeOSDs with options.
func threeOSDsWith(t *testing.T, opts Options) (*Cluster, uint64) {
	c := New(t, opts)
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	synctest.Wait() // the PGs peer and go active (their primaries' up_thru makes new epochs)
	epoch := c.Epoch()
	c.WaitForEpoch(epoch)
	return c, epoch
}

// place returns where object name of pool 1 goes in the newest map.
func place(t *testing.T, c *Cluster, name string) (objid.ID, osdmap.PG, osdmap.Mapping) {
	t.Helper()
	m := c.Map()
	id := objid.Object(1, "", name)
	pg, err := m.ObjectIDToPG(id)
	if err != nil {
		t.Fatal(err)
	}
	mp, err := m.PGToUpActing(pg, &osdmap.Scratch{})
	if err != nil {
		t.Fatal(err)
	}
	return id, pg, mp
}

func TestReplicatedWriteAndRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "greeting")
		if len(mp.Acting) != 3 {
			t.Fatalf("acting %v", mp.Acting)
		}
		primary := c.OSDs[mp.ActingPrimary]
		_, ch := rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg, Flags: wire.FlagWantApplied,
			Ops: []wire.ObjectOp{{Code: wire.OpWriteFull, Data: []byte("hello")}, {Code: wire.OpSetXattr, Name: "lang", Data: []byte("en")}}})
		applied := rc.Wait(ch)
		if applied.Result != 0 || applied.Flags != wire.ReplyApplied {
			t.Fatalf("first reply %+v, want applied only", applied)
		}
		committed := rc.Wait(ch)
		if committed.Result != 0 || committed.Flags&wire.ReplyCommitted == 0 || committed.Version != applied.Version {
			t.Fatalf("second reply %+v", committed)
		}
		// Every replica has the object, and the same log entry.
		for _, osd := range mp.Acting {
			s := c.OSDs[osd].Store
			b, err := s.Read(context.Background(), objectstore.PGCollection(pg.Pool, pg.Seed), id, 0, 0)
			if err != nil || string(b) != "hello" {
				t.Fatalf("osd.%d holds %q, %v", osd, b, err)
			}
			_, log, err := pglog.Load(context.Background(), s, pg)
			if err != nil || log.Head() != committed.Version {
				t.Fatalf("osd.%d log head %v (want %v): %v", osd, log.Head(), committed.Version, err)
			}
		}
		_, ch = rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg,
			Ops: []wire.ObjectOp{{Code: wire.OpRead}, {Code: wire.OpGetXattr, Name: "lang"}, {Code: wire.OpStat}}})
		r := rc.Wait(ch)
		if r.Result != 0 || string(r.Ops[0].Data) != "hello" || string(r.Ops[1].Data) != "en" || r.Ops[2].Size != 5 || r.Version != committed.Version {
			t.Fatalf("read %+v", r)
		}
	})
}

func TestNotPrimaryIsStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "obj")
		replica := c.OSDs[mp.Acting[1]]
		_, ch := rc.Send(replica, Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpWrite, Data: []byte("x")}}})
		if r := rc.Wait(ch); r.Result != -wire.ESTALE || r.Epoch < epoch {
			t.Fatalf("replica answered %+v", r)
		}
		// Nothing was applied anywhere.
		for _, osd := range mp.Acting {
			if _, err := c.OSDs[osd].Store.Stat(context.Background(), objectstore.PGCollection(pg.Pool, pg.Seed), id); err == nil {
				t.Fatalf("osd.%d applied a write sent to a replica", osd)
			}
		}
		// An object that is not in the PG named is refused too.
		other, otherPG, omp := place(t, c, "elsewhere")
		for otherPG == pg {
			other, otherPG, omp = place(t, c, other.Name+"x")
		}
		_, ch = rc.Send(c.OSDs[omp.ActingPrimary], Op{Epoch: epoch, Object: other, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpRead}}})
		if r := rc.Wait(ch); r.Result == 0 {
			t.Fatalf("op naming the wrong PG answered %+v", r)
		}
	})
}

func TestResentWriteAppliesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "counter")
		primary := c.OSDs[mp.ActingPrimary]
		op := Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpAppend, Data: []byte("+")}}}
		tid, ch := rc.Send(primary, op)
		first := rc.WaitCommitted(ch)
		op.Tid = tid
		_, ch = rc.Send(primary, op) // the same request id again
		again := rc.WaitCommitted(ch)
		if again.Result != 0 || again.Version != first.Version {
			t.Fatalf("resend answered %+v, first %+v", again, first)
		}
		_, ch = rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpRead}}})
		if r := rc.Wait(ch); string(r.Ops[0].Data) != "+" {
			t.Fatalf("object holds %q after a resend", r.Ops[0].Data)
		}
	})
}

func TestWritesToOneObjectApplyInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "log")
		primary := c.OSDs[mp.ActingPrimary]
		var chans []<-chan wire.OSDOpReply
		for i := range 50 {
			_, ch := rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpAppend, Data: []byte{byte('a' + i%26)}}}})
			chans = append(chans, ch)
		}
		var versions []wire.Version
		for _, ch := range chans {
			r := rc.WaitCommitted(ch)
			if r.Result != 0 {
				t.Fatalf("append: %+v", r)
			}
			versions = append(versions, r.Version)
		}
		if !slices.IsSortedFunc(versions, func(a, b wire.Version) int {
			if a.Less(b) {
				return -1
			}
			return 1
		}) {
			t.Fatalf("versions out of order: %v", versions)
		}
		want := make([]byte, 50)
		for i := range want {
			want[i] = byte('a' + i%26)
		}
		for _, osd := range mp.Acting {
			b, err := c.OSDs[osd].Store.Read(context.Background(), objectstore.PGCollection(pg.Pool, pg.Seed), id, 0, 0)
			if err != nil || string(b) != string(want) {
				t.Fatalf("osd.%d holds %q: %v", osd, b, err)
			}
		}
	})
}

// An OSD's traffic counts the messages it received and their bytes, and
// the data its replies returned: the primary of a 64 KiB write and read
// sees both copies of the data, a replica the write's.
func TestTrafficCountsMessagesAndData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "traffic")
		primary, replica := c.OSDs[mp.ActingPrimary], c.OSDs[mp.Acting[1]]
		pm0, pb0 := primary.D.Traffic()
		rm0, rb0 := replica.D.Traffic()
		data := make([]byte, 64<<10)
		_, ch := rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpWriteFull, Data: data}}})
		if r := rc.Wait(ch); r.Result != 0 {
			t.Fatalf("write: %+v", r)
		}
		_, ch = rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpRead}}})
		if r := rc.Wait(ch); r.Result != 0 || len(r.Ops[0].Data) != len(data) {
			t.Fatalf("read: %+v", r)
		}
		synctest.Wait()
		pm, pb := primary.D.Traffic()
		rm, rb := replica.D.Traffic()
		if pm-pm0 < 2 || pb-pb0 < 2*uint64(len(data)) {
			t.Errorf("primary: %d messages, %d bytes; want at least 2 and %d", pm-pm0, pb-pb0, 2*len(data))
		}
		if rm-rm0 < 1 || rb-rb0 < uint64(len(data)) || rb-rb0 >= 2*uint64(len(data)) {
			t.Errorf("replica: %d messages, %d bytes; want at least 1 and one copy of %d", rm-rm0, rb-rb0, len(data))
		}
	})
}

// Class methods see who called them through the OSD: a lock taken by one
// client names it as the holder and refuses another.
func TestClassMethodsSeeTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		alice, bob := c.NewRawClient("client.alice"), c.NewRawClient("client.bob")
		id, pg, mp := place(t, c, "locked")
		primary := c.OSDs[mp.ActingPrimary]
		call := func(rc *RawClient, method string) wire.OSDOpReply {
			req := lock.Request{Name: "l", Type: lock.Exclusive, Cookie: "c"}
			_, ch := rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg,
				Ops: []wire.ObjectOp{{Code: wire.OpCall, Name: "lock." + method, Data: req.Encode()}}})
			return rc.Wait(ch)
		}
		if r := call(alice, "lock"); r.Result != 0 {
			t.Fatalf("alice's lock: %d", r.Result)
		}
		if r := call(bob, "lock"); r.Result != -wire.EBUSY {
			t.Fatalf("bob's lock of alice's: %d, want EBUSY", r.Result)
		}
		r := call(bob, "info")
		st, err := lock.DecodeState(r.Ops[0].Data)
		if r.Result != 0 || err != nil || len(st.Holders) != 1 || st.Holders[0].Entity != "client.alice" {
			t.Fatalf("lock info: %d, %+v, %v; want held by client.alice", r.Result, st, err)
		}
	})
}

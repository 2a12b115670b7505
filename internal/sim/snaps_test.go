package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/rados"
)

// Pool snapshots and self-managed snap ids through the client library
// against real monitors: each call returns once the client's map has the
// change, and the modes never mix (docs/SNAPSHOTS.md).
func TestClientPoolSnaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		a, err := io.CreatePoolSnap(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.CreatePoolSnap(ctx, "b")
		if err != nil || b <= a {
			t.Fatalf("second snap id %d after %d: %v", b, a, err)
		}
		if id, err := io.LookupPoolSnap("b"); err != nil || id != b {
			t.Fatalf("LookupPoolSnap(b) = %d %v, want %d", id, err, b)
		}
		if _, err := io.CreatePoolSnap(ctx, "a"); !errors.Is(err, rados.ErrExists) {
			t.Fatalf("duplicate snap name: %v", err)
		}
		if err := io.RemovePoolSnap(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := io.RemovePoolSnap(ctx, "a"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("removing a removed snap: %v", err)
		}
		if _, err := io.LookupPoolSnap("a"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("LookupPoolSnap of a removed snap: %v", err)
		}
		snaps, err := io.PoolSnaps()
		if err != nil || len(snaps) != 1 || snaps[0].Name != "b" || snaps[0].ID != b {
			t.Fatalf("PoolSnaps = %+v %v", snaps, err)
		}
		if _, err := io.SelfManagedSnapCreate(ctx); !errors.Is(err, rados.ErrInvalid) {
			t.Fatalf("self-managed snap on a pool-snaps pool: %v", err)
		}

		if err := conn.CreatePool(ctx, "img", &rados.PoolOptions{PGNum: 8}); err != nil {
			t.Fatal(err)
		}
		img, err := conn.OpenIOContext("img")
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for range 3 {
			id, err := img.SelfManagedSnapCreate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if !slices.IsSorted(ids) || ids[0] == ids[2] {
			t.Fatalf("self-managed ids %v not increasing", ids)
		}
		if err := img.SelfManagedSnapRemove(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		if err := img.SelfManagedSnapRemove(ctx, ids[1]); err != nil {
			t.Fatalf("removing an id twice: %v", err)
		}
		if err := img.SelfManagedSnapRemove(ctx, 1000); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("removing an id never given out: %v", err)
		}
		if _, err := img.CreatePoolSnap(ctx, "x"); !errors.Is(err, rados.ErrInvalid) {
			t.Fatalf("pool snap on a self-managed pool: %v", err)
		}
		// The client's map has the removal as soon as the call returns.
		p := c.Map().PoolByName("img")
		if !p.RemovedSnaps.Contains(ids[1]) || p.RemovedSnaps.Contains(ids[2]) {
			t.Fatalf("removed snaps %s, want %d in and %d out", p.RemovedSnaps, ids[1], ids[2])
		}
	})
}

// readAt reads name at snap (rados.SnapHead: the head) through io.
func readAt(t *testing.T, io *rados.IOContext, name string, snap uint64) (string, error) {
	t.Helper()
	io.SetReadSnap(snap)
	defer io.SetReadSnap(rados.SnapHead)
	b, err := io.Read(context.Background(), name, 0, 0)
	return string(b), err
}

// expectAt checks what a read of name at each snapshot returns: the
// contents, or "" for ErrNotFound.
func expectAt(t *testing.T, io *rados.IOContext, name string, want map[uint64]string) {
	t.Helper()
	for snap, w := range want {
		got, err := readAt(t, io, name, snap)
		switch {
		case w == "" && !errors.Is(err, rados.ErrNotFound):
			t.Fatalf("%s at snap %#x: %q %v, want not found", name, snap, got, err)
		case w != "" && (err != nil || got != w):
			t.Fatalf("%s at snap %#x: %q %v, want %q", name, snap, got, err, w)
		}
	}
}

// Copy-on-write with pool snapshots: each read at a snapshot returns the
// object as it was when the snapshot was taken, through overwrites,
// partial writes, a delete and a re-creation; an object created after a
// snapshot is not found at it (docs/SNAPSHOTS.md).
func TestPoolSnapshotCopyOnWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(io.WriteFull(ctx, "obj", []byte("version one")))
		s1, err := io.CreatePoolSnap(ctx, "s1")
		must(err)
		must(io.WriteFull(ctx, "obj", []byte("version two")))
		must(io.Write(ctx, "obj", []byte("TWO"), 8))
		must(io.WriteFull(ctx, "late", []byte("born after s1")))
		s2, err := io.CreatePoolSnap(ctx, "s2")
		must(err)
		must(io.Write(ctx, "obj", []byte("3"), 0))
		expectAt(t, io, "obj", map[uint64]string{s1: "version one", s2: "version TWO", rados.SnapHead: "3ersion TWO"})
		expectAt(t, io, "late", map[uint64]string{s1: "", s2: "born after s1", rados.SnapHead: "born after s1"})

		// A delete keeps the clones the snapshots need; the head is gone.
		must(io.Delete(ctx, "obj"))
		expectAt(t, io, "obj", map[uint64]string{s1: "version one", s2: "version TWO", rados.SnapHead: ""})
		s3, err := io.CreatePoolSnap(ctx, "s3")
		must(err)
		must(io.WriteFull(ctx, "obj", []byte("reborn")))
		expectAt(t, io, "obj", map[uint64]string{s1: "version one", s2: "version TWO", s3: "", rados.SnapHead: "reborn"})

		// Writes to a snapshot are refused.
		io.SetReadSnap(s1)
		if _, err := io.Read(ctx, "obj", 0, 0); err != nil {
			t.Fatal(err)
		}
		io.SetReadSnap(rados.SnapHead)

		// Every OSD of the PG holds the clones (they were part of the
		// replicated writes).
		_, pg, mp := place(t, c, "obj")
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		for _, osd := range mp.Acting {
			b, err := c.OSDs[osd].Store.Read(ctx, coll, objid.Object(pg.Pool, "", "obj").WithSnap(s1), 0, 0)
			if err != nil || string(b) != "version one" {
				t.Fatalf("osd.%d clone for s1: %q %v", osd, b, err)
			}
		}
	})
}

// Self-managed snapshots: the client allocates ids and sends its snap
// context; malformed contexts and writes to a snapshot are refused.
func TestSelfManagedSnapshotCopyOnWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "img", []byte("aaaa")); err != nil {
			t.Fatal(err)
		}
		a, err := io.SelfManagedSnapCreate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Without the new snapshot in the context, nothing is preserved
		// for it yet; with it, the next write clones.
		if err := io.SetSnapWriteContext(a, []uint64{a}); err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "img", []byte("bbbb")); err != nil {
			t.Fatal(err)
		}
		b, err := io.SelfManagedSnapCreate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := io.SetSnapWriteContext(b, []uint64{b, a}); err != nil {
			t.Fatal(err)
		}
		if err := io.Write(ctx, "img", []byte("c"), 1); err != nil {
			t.Fatal(err)
		}
		expectAt(t, io, "img", map[uint64]string{a: "aaaa", b: "bbbb", rados.SnapHead: "bcbb"})
		if err := io.SetSnapWriteContext(1, []uint64{2}); !errors.Is(err, rados.ErrInvalid) {
			t.Fatalf("client accepted a malformed context: %v", err)
		}

		// The OSD refuses what a client library would not send.
		rc := c.NewRawClient("client.raw")
		id, pg, mp := place(t, c, "img")
		primary := c.OSDs[mp.ActingPrimary]
		epoch := c.Epoch()
		write := []wire.ObjectOp{{Code: wire.OpWrite, Data: []byte("x")}}
		for _, tc := range []struct {
			name string
			op   Op
			want int32
		}{
			{"unsorted snaps", Op{Epoch: epoch, Object: id, PG: pg, Ops: write, SnapSeq: b, Snaps: []uint64{a, b}}, -wire.EINVAL},
			{"seq below a snap", Op{Epoch: epoch, Object: id, PG: pg, Ops: write, SnapSeq: a, Snaps: []uint64{b}}, -wire.EINVAL},
			{"write to a snapshot", Op{Epoch: epoch, Object: id.WithSnap(a), PG: pg, Ops: write}, -wire.EROFS},
			{"the snapdir", Op{Epoch: epoch, Object: id.WithSnap(objid.SnapDir), PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpRead}}}, -wire.EINVAL},
		} {
			_, ch := rc.Send(primary, tc.op)
			if r := rc.WaitCommitted(ch); r.Result != tc.want {
				t.Errorf("%s: result %d, want %d", tc.name, r.Result, tc.want)
			}
		}
		expectAt(t, io, "img", map[uint64]string{a: "aaaa", b: "bbbb", rados.SnapHead: "bcbb"})
	})
}

// Recovery brings clones to an OSD that missed the writes that made them:
// a replica is down while a snapshot is taken and the object rewritten;
// it comes back, recovers from the log, and then serves as primary the
// read at the snapshot (the other two stop).
func TestSnapshotClonesRecover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDsWith(t, Options{})
		c.Run("osd pool set", "pool", "rbd", "var", "min_size", "val", "1", "yes_i_really_mean_it", "true")
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("before")); err != nil {
			t.Fatal(err)
		}
		oid, pg, mp := place(t, c, "obj")
		behind := mp.Acting[1]
		c.KillOSD(behind)
		c.Run("osd down", "ids", fmt.Sprint(behind))
		c.WaitForEpoch(c.Epoch())
		snap, err := io.CreatePoolSnap(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("after")); err != nil {
			t.Fatal(err)
		}
		c.StartOSD(behind)
		c.WaitForEpoch(c.Epoch())
		c.waitClean(t, 0, nil)
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		if b, err := c.OSDs[behind].Store.Read(ctx, coll, oid.WithSnap(snap), 0, 0); err != nil || string(b) != "before" {
			t.Fatalf("osd.%d after recovery holds the clone %q (%v), want \"before\"", behind, b, err)
		}
		// Recovery pushed the head with its snap set: the snap index
		// there names the clone.
		if got, want := snapIndex(t, c, behind, pg), indexKeys(snaps.IndexEntry{Snap: snap, Clone: oid.WithSnap(snap)}); !slices.Equal(got, want) {
			t.Fatalf("osd.%d's snap index after recovery %q, want %q", behind, got, want)
		}
		// The others stop: the recovered OSD alone serves the snapshot.
		for _, o := range mp.Acting {
			if o != behind {
				c.KillOSD(o)
				c.Run("osd down", "ids", fmt.Sprint(o))
			}
		}
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		expectAt(t, io, "obj", map[uint64]string{snap: "before", rados.SnapHead: "after"})
	})
}

// Rollback restores the head from a snapshot (keeping what it replaces
// for the snapshots that need it), deletes it for a snapshot the object
// did not exist at, and refuses removed and unknown snapshots;
// list-snaps shows the clones, the snaps each serves, sizes and overlaps.
func TestSnapshotRollbackAndListSnaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		s0, err := io.CreatePoolSnap(ctx, "empty")
		must(err)
		must(io.WriteFull(ctx, "obj", []byte("0123456789")))
		s1, err := io.CreatePoolSnap(ctx, "s1")
		must(err)
		must(io.Write(ctx, "obj", []byte("ab"), 2))
		s2, err := io.CreatePoolSnap(ctx, "s2")
		must(err)
		must(io.WriteFull(ctx, "obj", []byte("new")))

		ls, err := io.ListSnaps(ctx, "obj")
		must(err)
		if len(ls.Clones) != 3 || ls.Clones[0].ID != s1 || !slices.Equal(ls.Clones[0].Snaps, []uint64{s1}) ||
			ls.Clones[0].Size != 10 || !slices.Equal(ls.Clones[0].Overlap, []rados.Extent{{Offset: 0, Length: 2}, {Offset: 4, Length: 6}}) ||
			ls.Clones[1].ID != s2 || len(ls.Clones[1].Overlap) != 0 ||
			ls.Clones[2].ID != rados.SnapHead || ls.Clones[2].Size != 3 || ls.Seq != s2 {
			t.Fatalf("list-snaps: %+v", ls)
		}

		must(io.Rollback(ctx, "obj", s1))
		expectAt(t, io, "obj", map[uint64]string{s1: "0123456789", s2: "01ab456789", rados.SnapHead: "0123456789"})
		must(io.Rollback(ctx, "obj", s2))
		expectAt(t, io, "obj", map[uint64]string{rados.SnapHead: "01ab456789"})
		// At "empty" the object did not exist: a rollback deletes it.
		must(io.Rollback(ctx, "obj", s0))
		expectAt(t, io, "obj", map[uint64]string{s0: "", s1: "0123456789", s2: "01ab456789", rados.SnapHead: ""})
		ls, err = io.ListSnaps(ctx, "obj")
		if err != nil || len(ls.Clones) != 2 || ls.Clones[1].ID != s2 {
			t.Fatalf("list-snaps of a deleted head with clones: %+v %v", ls, err)
		}
		// And back from the deleted state.
		must(io.Rollback(ctx, "obj", s2))
		expectAt(t, io, "obj", map[uint64]string{rados.SnapHead: "01ab456789"})

		must(io.RemovePoolSnap(ctx, "s1"))
		if err := io.Rollback(ctx, "obj", s1); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("rollback to a removed snap: %v", err)
		}
		if err := io.Rollback(ctx, "obj", 999); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("rollback to a snap never made: %v", err)
		}
		if _, err := io.ListSnaps(ctx, "never"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("list-snaps of a missing object: %v", err)
		}
		expectAt(t, io, "obj", map[uint64]string{s2: "01ab456789", rados.SnapHead: "01ab456789"})
	})
}

// poolUsage is what "df" reports of pool: its stored bytes (one copy)
// and objects.
func poolUsage(t *testing.T, c *Cluster, pool string) (stored, objects int64) {
	t.Helper()
	r := c.Run("df")
	var v struct {
		Pools []struct {
			Name  string `json:"name"`
			Stats struct {
				Stored  int64 `json:"stored"`
				Objects int64 `json:"objects"`
			} `json:"stats"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(r.Data, &v); err != nil {
		t.Fatalf("df: %v (%s)", err, r.Data)
	}
	for _, p := range v.Pools {
		if p.Name == pool {
			return p.Stats.Stored, p.Stats.Objects
		}
	}
	t.Fatalf("df has no pool %s", pool)
	return 0, 0
}

// waitUsage waits (in virtual time) until df reports the pool at stored
// bytes and objects, and fails after ten minutes.
func waitUsage(t *testing.T, c *Cluster, pool string, stored, objects int64) {
	t.Helper()
	for range 60 {
		if s, o := poolUsage(t, c, pool); s == stored && o == objects {
			return
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
	}
	s, o := poolUsage(t, c, pool)
	t.Fatalf("df reports pool %s at %d bytes in %d objects after ten minutes, want %d in %d", pool, s, o, stored, objects)
}

// Removing a snapshot trims the clones only it needed, in the
// background, on every OSD, and df shows the space return; clones other
// snapshots still need stay, and so does a deleted head's snapdir until
// its last clone goes.
func TestSnapTrimReturnsSpace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		const n, size = 8, 64 << 10
		data := func(b byte) []byte { return bytes.Repeat([]byte{b}, size) }
		for i := range n {
			if err := io.WriteFull(ctx, fmt.Sprint("obj", i), data('a')); err != nil {
				t.Fatal(err)
			}
		}
		waitUsage(t, c, "rbd", n*size, n)
		a, err := io.CreatePoolSnap(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := io.WriteFull(ctx, fmt.Sprint("obj", i), data('b')); err != nil {
				t.Fatal(err)
			}
		}
		b, err := io.CreatePoolSnap(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		// obj0 gets a clone for b too; obj1's head goes (a snapdir keeps
		// its snap set).
		if err := io.WriteFull(ctx, "obj0", data('c')); err != nil {
			t.Fatal(err)
		}
		if err := io.Delete(ctx, "obj1"); err != nil {
			t.Fatal(err)
		}
		// Heads: 7 of size (obj1 gone); clones for a: 8; for b: obj0's and
		// obj1's; obj1's snapdir: 1 object of 0 bytes.
		waitUsage(t, c, "rbd", (7+8+2)*size, 7+8+2+1)
		before, _ := poolUsage(t, c, "rbd")

		if err := io.RemovePoolSnap(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		waitUsage(t, c, "rbd", (7+2)*size, 7+2+1)
		after, _ := poolUsage(t, c, "rbd")
		t.Logf("df stored: %d bytes before rmsnap a, %d after the trim", before, after)
		expectAt(t, io, "obj0", map[uint64]string{a: "", b: string(data('b')), rados.SnapHead: string(data('c'))})
		expectAt(t, io, "obj1", map[uint64]string{a: "", b: string(data('b')), rados.SnapHead: ""})
		expectAt(t, io, "obj2", map[uint64]string{a: "", b: string(data('b')), rados.SnapHead: string(data('b'))})

		// Every member dropped the clones of a.
		id, pg, mp := place(t, c, "obj2")
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		for _, osd := range mp.Acting {
			if _, err := c.OSDs[osd].Store.Stat(ctx, coll, id.WithSnap(a)); !errors.Is(err, objectstore.ErrNotFound) {
				t.Fatalf("osd.%d still has obj2's clone for a: %v", osd, err)
			}
		}

		// The last snapshot goes: obj1's snapdir with it.
		if err := io.RemovePoolSnap(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		waitUsage(t, c, "rbd", 7*size, 7)
		if ls, err := io.ListSnaps(ctx, "obj1"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("list-snaps of obj1 after its last snapshot went: %+v %v", ls, err)
		}
	})
}

// Deep scrub compares clones like heads: a clone changed behind a
// replica's back is found (the PG turns inconsistent, naming the clone)
// and repair puts it right, so the read at the snapshot is right on every
// member.
func TestDeepScrubComparesClones(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, conn, io, names, pg, mp := scrubCluster(t, Options{})
		ctx := context.Background()
		snap, err := io.CreatePoolSnap(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, names[0], []byte("after the snapshot")); err != nil {
			t.Fatal(err)
		}
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		clone := objid.Object(1, "", names[0]).WithSnap(snap)
		replica := c.OSDs[mp.Acting[1]]
		var txn objectstore.Transaction
		txn.Write(coll, clone, 0, []byte("XXXX"))
		if err := objectstore.Apply(ctx, replica.Store, &txn); err != nil {
			t.Fatal(err)
		}
		tellPG(t, conn, mp, "pg deep-scrub", pg)
		st := c.pgStatus(t, mp.ActingPrimary, pg)
		if st.State != "active+clean+inconsistent" || !slices.Equal(st.Inconsistent, []string{clone.String()}) {
			t.Fatalf("after a deep scrub: %q, inconsistent %v; want the clone %v", st.State, st.Inconsistent, clone)
		}
		tellPG(t, conn, mp, "pg repair", pg)
		if st := c.pgStatus(t, mp.ActingPrimary, pg); st.State != "active+clean" {
			t.Fatalf("after repair: %q", st.State)
		}
		for _, osd := range mp.Acting {
			if b, err := c.OSDs[osd].Store.Read(ctx, coll, clone, 0, 0); err != nil || !bytes.Equal(b, content(names[0])) {
				t.Fatalf("osd.%d's clone after repair: %.20q %v", osd, b, err)
			}
		}
		expectAt(t, io, names[0], map[uint64]string{snap: string(content(names[0])), rados.SnapHead: "after the snapshot"})
	})
}

// A trim that deletes many clones of one object at once replicates: its
// rep op carries a log entry per clone (the chaos test's seed 8 found
// replicas refusing rep ops of more than 8 extra entries, leaving the
// primary alone without the clones).
func TestSnapTrimOfManyClonesReplicates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		const n = 20
		var ids []uint64
		for i := range n {
			if err := io.WriteFull(ctx, "many", []byte(fmt.Sprint("version ", i))); err != nil {
				t.Fatal(err)
			}
			id, err := io.CreatePoolSnap(ctx, fmt.Sprint("s", i))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if err := io.WriteFull(ctx, "many", []byte("head")); err != nil {
			t.Fatal(err)
		}
		c.Run("osd set", "key", "nosnaptrim")
		for i := range n - 1 {
			if err := io.RemovePoolSnap(ctx, fmt.Sprint("s", i)); err != nil {
				t.Fatal(err)
			}
		}
		c.Run("osd unset", "key", "nosnaptrim")
		waitUsage(t, c, "rbd", int64(len("head")+len(fmt.Sprint("version ", n-1))), 2)
		id, pg, mp := place(t, c, "many")
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		for _, osd := range mp.Acting {
			for _, s := range ids[:n-1] {
				if _, err := c.OSDs[osd].Store.Stat(ctx, coll, id.WithSnap(s)); !errors.Is(err, objectstore.ErrNotFound) {
					t.Fatalf("osd.%d keeps the clone for snap %d: %v", osd, s, err)
				}
			}
			if b, err := c.OSDs[osd].Store.Read(ctx, coll, id.WithSnap(ids[n-1]), 0, 0); err != nil || string(b) != fmt.Sprint("version ", n-1) {
				t.Fatalf("osd.%d clone for the last snap: %q %v", osd, b, err)
			}
		}
		expectAt(t, io, "many", map[uint64]string{ids[0]: "", ids[n-1]: fmt.Sprint("version ", n-1), rados.SnapHead: "head"})
	})
}

// A rollback while a replica still lacks the clone it copies (the
// replica missed the snapshot's write and recovery has not reached the
// clone yet): the primary pushes the clone first, as it does the head,
// so that the replica's copy of the rollback's transaction applies
// instead of failing whole while its log takes the entry (found by
// TestChaos seed 49: a replica kept a stale head at the rollback's
// version, and recovery later took it as current).
func TestRollbackWhileReplicaLacksClone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One push at a time, resting after each: the first missing
		// object is pushed, and the rollback runs during the rest.
		c, _ := threeOSDsWith(t, Options{RecoveryMaxPushes: 1, RecoverySleep: time.Minute})
		conn := c.connect(t, "client.admin")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("before")); err != nil {
			t.Fatal(err)
		}
		oid, pg, mp := place(t, c, "obj")
		// An object of the same PG that recovery pushes before obj's
		// clone (it sorts first).
		first := ""
		for i := range 1000 {
			id, p, _ := place(t, c, fmt.Sprint("first-", i))
			if p == pg && objid.Compare(id, oid.WithSnap(1)) < 0 {
				first = id.Name
				break
			}
		}
		if first == "" {
			t.Fatal("no object sorts before obj in its PG")
		}
		behind := mp.Acting[1]
		c.KillOSD(behind)
		c.Run("osd down", "ids", fmt.Sprint(behind))
		c.WaitForEpoch(c.Epoch())
		snap, err := io.CreatePoolSnap(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("after")); err != nil { // clones obj
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, first, []byte("x")); err != nil {
			t.Fatal(err)
		}
		c.StartOSD(behind)
		c.WaitForEpoch(c.Epoch())
		synctest.Wait() // active; first pushed; recovery rests
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		if _, err := c.OSDs[behind].Store.Stat(ctx, coll, oid.WithSnap(snap)); !errors.Is(err, objectstore.ErrNotFound) {
			t.Fatalf("osd.%d holds the clone before the rollback (%v): the test no longer reaches the case", behind, err)
		}
		if err := io.Rollback(ctx, "obj", snap); err != nil {
			t.Fatal(err)
		}
		c.waitClean(t, 0, nil)
		for _, o := range mp.Acting {
			if b, err := c.OSDs[o].Store.Read(ctx, coll, oid, 0, 0); err != nil || string(b) != "before" {
				t.Errorf("osd.%d holds the head %q (%v) after the rollback, want \"before\"", o, b, err)
			}
		}
		expectAt(t, io, "obj", map[uint64]string{snap: "before", rados.SnapHead: "before"})
	})
}

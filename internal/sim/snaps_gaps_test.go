package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/cls/version"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
)

// A snapshot the pool has removed is gone for reads and rollbacks at
// once, even while its clone waits for the trimmer (nosnaptrim holds it
// back here): the read is ENOENT, as Ceph's is, and so is a rollback;
// the other snapshots still read.
func TestRemovedSnapIsGoneBeforeTrim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("one")); err != nil {
			t.Fatal(err)
		}
		a, err := io.CreatePoolSnap(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("two")); err != nil {
			t.Fatal(err)
		}
		b, err := io.CreatePoolSnap(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("three")); err != nil {
			t.Fatal(err)
		}
		c.Run("osd set", "key", "nosnaptrim")
		if err := io.RemovePoolSnap(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		// The clone is still there on the primary: only the pool's
		// removed set keeps the read from it.
		id, pg, mp := place(t, c, "obj")
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		if _, err := c.OSDs[mp.ActingPrimary].Store.Stat(ctx, coll, id.WithSnap(a)); err != nil {
			t.Fatalf("the clone of a is gone before the trim: %v", err)
		}
		expectAt(t, io, "obj", map[uint64]string{a: "", b: "two", rados.SnapHead: "three"})
		if err := io.Rollback(ctx, "obj", a); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("rollback to a removed snap: %v, want not found", err)
		}
		expectAt(t, io, "obj", map[uint64]string{b: "two", rados.SnapHead: "three"})
		c.Run("osd unset", "key", "nosnaptrim")
		waitUsage(t, c, "rbd", int64(len("two")+len("three")), 2)
		expectAt(t, io, "obj", map[uint64]string{a: "", b: "two", rados.SnapHead: "three"})
	})
}

// A class method called while the IOContext reads at a snapshot runs on
// the object as it was: version.read returns the snapshot's version, and
// version.inc, which writes, is refused (ErrReadOnly) and changes
// nothing. At the head both run on the head.
func TestClassCallAtSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Exec(ctx, "obj", "version", "set", version.Encode(7)); err != nil {
			t.Fatal(err)
		}
		s, err := io.CreatePoolSnap(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Exec(ctx, "obj", "version", "inc", nil); err != nil {
			t.Fatal(err)
		}
		readVersion := func(snap uint64) (string, error) {
			io.SetReadSnap(snap)
			defer io.SetReadSnap(rados.SnapHead)
			out, err := io.Exec(ctx, "obj", "version", "read", nil)
			return string(out), err
		}
		if got, err := readVersion(s); err != nil || got != string(version.Encode(7)) {
			t.Fatalf("version.read at the snapshot: %x %v, want 7", got, err)
		}
		if got, err := readVersion(rados.SnapHead); err != nil || got != string(version.Encode(8)) {
			t.Fatalf("version.read at the head: %x %v, want 8", got, err)
		}
		// A read op's Exec runs at the snapshot too.
		io.SetReadSnap(s)
		r := rados.NewReadOp()
		st := r.Exec("version", "read", nil)
		err = io.OperateRead(ctx, "obj", r)
		if err != nil || string(st.Output) != string(version.Encode(7)) {
			t.Fatalf("ReadOp.Exec at the snapshot: %x %v, want 7", st.Output, err)
		}
		if _, err := io.Exec(ctx, "obj", "version", "inc", nil); !errors.Is(err, rados.ErrReadOnly) {
			t.Fatalf("version.inc at a snapshot: %v, want read-only", err)
		}
		io.SetReadSnap(rados.SnapHead)
		if got, err := readVersion(rados.SnapHead); err != nil || got != string(version.Encode(8)) {
			t.Fatalf("version.read at the head after the refused inc: %x %v, want 8", got, err)
		}
	})
}

// An object has at most snaps.MaxClones clones: the write that would make
// one more is refused with ErrTooManyClones (EMLINK) and changes nothing;
// once a snapshot is removed and trimmed, writes clone again.
func TestCloneLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		// Self-managed snapshots: the client's context names them, so a
		// clone per write needs no monitor round trip per snapshot.
		first, err := io.SelfManagedSnapCreate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "obj", []byte("v0")); err != nil {
			t.Fatal(err)
		}
		// Ids past the ones the monitors hand out next (removing first
		// uses up first+1), so that removing first trims one clone.
		id := func(i uint64) uint64 {
			if i == 0 {
				return first
			}
			return first + 100 + i
		}
		for i := range uint64(snaps.MaxClones) {
			if err := io.SetSnapWriteContext(id(i), []uint64{id(i)}); err != nil {
				t.Fatal(err)
			}
			if err := io.WriteFull(ctx, "obj", fmt.Appendf(nil, "v%d", i+1)); err != nil {
				t.Fatalf("write %d: %v", i+1, err)
			}
		}
		last := id(snaps.MaxClones)
		if err := io.SetSnapWriteContext(last, []uint64{last}); err != nil {
			t.Fatal(err)
		}
		err = io.WriteFull(ctx, "obj", []byte("one too many"))
		if !errors.Is(err, rados.ErrTooManyClones) || !strings.Contains(err.Error(), "EMLINK") {
			t.Fatalf("write beyond %d clones: %v, want too many clones (EMLINK)", snaps.MaxClones, err)
		}
		ls, err := io.ListSnaps(ctx, "obj")
		if err != nil || len(ls.Clones) != snaps.MaxClones+1 {
			t.Fatalf("list-snaps: %d versions %v, want %d clones and the head", len(ls.Clones), err, snaps.MaxClones)
		}
		want := fmt.Sprint("v", snaps.MaxClones)
		expectAt(t, io, "obj", map[uint64]string{rados.SnapHead: want, first: "v0", id(snaps.MaxClones - 1): fmt.Sprint("v", snaps.MaxClones-1)})
		if err := io.SelfManagedSnapRemove(ctx, first); err != nil {
			t.Fatal(err)
		}
		for tries := 0; ; tries++ {
			ls, err := io.ListSnaps(ctx, "obj")
			if err != nil {
				t.Fatal(err)
			}
			if len(ls.Clones) == snaps.MaxClones {
				break
			}
			if tries == 30 {
				t.Fatalf("%d versions after five minutes, want %d: the clone of the removed snapshot stays", len(ls.Clones), snaps.MaxClones)
			}
			time.Sleep(10 * time.Second) // virtual: the trimmer's next pass
		}
		if err := io.WriteFull(ctx, "obj", []byte("room again")); err != nil {
			t.Fatalf("write after a trim made room: %v", err)
		}
		expectAt(t, io, "obj", map[uint64]string{rados.SnapHead: "room again", last: want, first: ""})
	})
}

// Trimming is throttled as Ceph's is: a PG trims at most
// osd_pg_max_concurrent_snap_trims objects at once, and each trim slot
// rests osd_snap_trim_sleep after a trim. Six objects of a one-PG pool
// lose their clones one every 20 s with one slot, and three at a time
// with three.
func TestSnapTrimThrottle(t *testing.T) {
	for _, tc := range []struct {
		slots int
		want  []time.Duration // when each clone goes, after the first
	}{
		{1, []time.Duration{0, 20 * time.Second, 40 * time.Second, 60 * time.Second, 80 * time.Second, 100 * time.Second}},
		{3, []time.Duration{0, 0, 0, 20 * time.Second, 20 * time.Second, 20 * time.Second}},
	} {
		t.Run(fmt.Sprint(tc.slots, " slots"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, _ := threeOSDsWith(t, Options{SnapTrimSleep: 20 * time.Second, SnapTrimsPerPG: tc.slots})
				c.Run("osd pool create", "pool", "one", "pg_num", "1", "size", "3")
				c.WaitForEpoch(c.Epoch())
				synctest.Wait()
				conn := c.connect(t, "client.admin")
				ctx := context.Background()
				io, err := conn.OpenIOContext("one")
				if err != nil {
					t.Fatal(err)
				}
				const n = 6
				for i := range n {
					if err := io.WriteFull(ctx, fmt.Sprint("obj", i), []byte("before")); err != nil {
						t.Fatal(err)
					}
				}
				s, err := io.CreatePoolSnap(ctx, "s")
				if err != nil {
					t.Fatal(err)
				}
				for i := range n {
					if err := io.WriteFull(ctx, fmt.Sprint("obj", i), []byte("after")); err != nil {
						t.Fatal(err)
					}
				}
				if err := io.RemovePoolSnap(ctx, "s"); err != nil {
					t.Fatal(err)
				}
				// Watch the primary's store each (virtual) second.
				m := c.Map()
				pool := m.PoolByName("one").ID
				pg, err := m.ObjectIDToPG(objid.Object(pool, "", "obj0"))
				if err != nil {
					t.Fatal(err)
				}
				mp, err := m.PGToUpActing(pg, &osdmap.Scratch{})
				if err != nil {
					t.Fatal(err)
				}
				coll := objectstore.PGCollection(pg.Pool, pg.Seed)
				store := c.OSDs[mp.ActingPrimary].Store
				gone := map[int]time.Time{}
				for range 600 {
					for i := range n {
						id := objid.Object(pg.Pool, "", fmt.Sprint("obj", i)).WithSnap(s)
						if _, ok := gone[i]; !ok {
							if _, err := store.Stat(ctx, coll, id); errors.Is(err, objectstore.ErrNotFound) {
								gone[i] = time.Now()
							}
						}
					}
					if len(gone) == n {
						break
					}
					time.Sleep(time.Second)
					synctest.Wait()
				}
				if len(gone) != n {
					t.Fatalf("after ten minutes %d of %d clones are trimmed", len(gone), n)
				}
				times := slices.SortedFunc(maps.Values(gone), time.Time.Compare)
				var got []time.Duration
				for _, at := range times {
					got = append(got, at.Sub(times[0]).Truncate(time.Second))
				}
				t.Logf("clones trimmed at %v", got)
				if !slices.Equal(got, tc.want) {
					t.Fatalf("clones trimmed at %v, want %v", got, tc.want)
				}
			})
		})
	}
}

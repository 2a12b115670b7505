package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
)

// snapIndex returns the snap index keys osd holds for pg, sorted.
func snapIndex(t *testing.T, c *Cluster, osd int32, pg osdmap.PG) []string {
	t.Helper()
	keys, err := snapIndexKeys(c.OSDs[osd].Store, pg)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// snapIndexKeys returns the snap index keys s holds for pg, sorted.
func snapIndexKeys(s objectstore.Store, pg osdmap.PG) ([]string, error) {
	var out []string
	coll := objectstore.PGCollection(pg.Pool, pg.Seed)
	for after := ""; ; {
		kvs, more, err := s.OmapIterate(context.Background(), coll, pglog.MetaObject(pg), after, snaps.IndexPrefix, 1000)
		if err != nil {
			return nil, err
		}
		for _, kv := range kvs {
			out = append(out, kv.Key)
			after = kv.Key
		}
		if !more {
			return out, nil
		}
	}
}

// indexKeys returns the keys of entries, sorted.
func indexKeys(entries ...snaps.IndexEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Key()
	}
	slices.Sort(out)
	return out
}

// counterSum sums counter name over the running OSDs.
func counterSum(c *Cluster, name string) float64 {
	var sum float64
	for id, o := range c.OSDs {
		if o.D != nil {
			sum += c.Counter(id, name)
		}
	}
	return sum
}

// The trimmer finds its work in the snap index: in a pool of many
// objects of which few have clones, removing the snapshot trims exactly
// the objects with clones, reading one index key per clone and no
// object's snap set to find them. Every member's index follows the
// clones (made with the writes, dropped with the trims), and every
// member records the snapshot as purged in the PG info. A primary that
// restarts then takes no pass over its PGs at all: peering finds the
// snapshot purged on every member.
func TestSnapTrimReadsOnlyTheIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		const objects, cloned, size = 300, 6, 16
		for i := range objects {
			if err := io.WriteFull(ctx, fmt.Sprint("obj", i), bytes.Repeat([]byte{'a'}, size)); err != nil {
				t.Fatal(err)
			}
		}
		a, err := io.CreatePoolSnap(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		for i := range cloned {
			if err := io.WriteFull(ctx, fmt.Sprint("obj", i), bytes.Repeat([]byte{'b'}, size)); err != nil {
				t.Fatal(err)
			}
		}
		waitUsage(t, c, "rbd", (objects+cloned)*size, objects+cloned)
		// Each member of each cloned object's PG has its index entry.
		want := map[osdmap.PG][]snaps.IndexEntry{}
		acting := map[osdmap.PG]osdmap.Mapping{}
		for i := range cloned {
			id, pg, mp := place(t, c, fmt.Sprint("obj", i))
			want[pg] = append(want[pg], snaps.IndexEntry{Snap: a, Clone: id.WithSnap(a)})
			acting[pg] = mp
		}
		for pg, es := range want {
			for _, osd := range acting[pg].Acting {
				if got := snapIndex(t, c, osd, pg); !slices.Equal(got, indexKeys(es...)) {
					t.Fatalf("osd.%d pg %v index %q, want %q", osd, pg, got, indexKeys(es...))
				}
			}
		}

		if err := io.RemovePoolSnap(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		waitUsage(t, c, "rbd", objects*size, objects)
		if n := counterSum(c, "cuttle_osd_snap_trims_total"); n != cloned {
			t.Fatalf("the trimmer trimmed %v objects, want the %d with clones", n, cloned)
		}
		if n := counterSum(c, "cuttle_osd_snap_trim_index_keys_total"); n != cloned {
			t.Fatalf("the trimmer read %v index keys, want %d (one per clone)", n, cloned)
		}
		// Every PG took one pass, and every member of every PG records
		// the snapshot purged; the indexes are empty.
		m := c.Map()
		var pgs []osdmap.PG
		for seed := range m.Pool(1).PGNum {
			pgs = append(pgs, osdmap.PG{Pool: 1, Seed: seed})
		}
		if n := counterSum(c, "cuttle_osd_snap_trim_passes_total"); n != float64(len(pgs)) {
			t.Fatalf("%v trim passes, want one per PG (%d)", n, len(pgs))
		}
		purged := m.Pool(1).RemovedSnaps.String()
		waitPurged := func() {
			t.Helper()
			for range 30 {
				ok := true
				for _, pg := range pgs {
					mp, err := m.PGToUpActing(pg, &osdmap.Scratch{})
					if err != nil {
						t.Fatal(err)
					}
					for _, osd := range mp.Acting {
						if st := c.pgStatus(t, osd, pg); st.PurgedSnaps != purged || len(snapIndex(t, c, osd, pg)) != 0 {
							ok = false
						}
					}
				}
				if ok {
					return
				}
				time.Sleep(time.Second)
			}
			t.Fatalf("not every member records %s purged with an empty index", purged)
		}
		waitPurged()

		// The primary of obj0's PG restarts: peering finds the snapshot
		// purged everywhere, and the trimmer takes no pass.
		_, pg, mp := place(t, c, "obj0")
		restarted := mp.ActingPrimary
		c.StopOSD(restarted)
		c.WaitForEpoch(c.Epoch())
		c.StartOSD(restarted)
		c.WaitForEpoch(c.Epoch())
		c.waitClean(t, 0, nil)
		time.Sleep(5 * time.Minute) // five trim checks
		if st := c.pgStatus(t, restarted, pg); st.PurgedSnaps != purged || st.Primary != restarted {
			t.Fatalf("after the restart pg %v on osd.%d: primary %d, purged %s; want %s", pg, restarted, st.Primary, st.PurgedSnaps, purged)
		}
		for _, name := range []string{"cuttle_osd_snap_trim_passes_total", "cuttle_osd_snap_trim_index_keys_total", "cuttle_osd_snap_trims_total"} {
			if n := c.Counter(restarted, name); n != 0 {
				t.Fatalf("restarted osd.%d: %s = %v, want 0", restarted, name, n)
			}
		}
		expectAt(t, io, "obj0", map[uint64]string{a: "", rados.SnapHead: string(bytes.Repeat([]byte{'b'}, size))})
	})
}

// Deep scrub compares the snap index with the snap sets: on the primary
// an entry lost, an entry no clone justifies and a key that is no index
// key are reported (the PG turns inconsistent, naming the heads and the
// PG's meta object), and repair rebuilds the index from the snap sets, so
// the trim that follows finds the clone. A replica rebuilds its own index
// at the end of the deep scrub.
func TestDeepScrubFindsDamagedSnapIndex(t *testing.T) {
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
		head0, head1 := objid.Object(1, "", names[0]), objid.Object(1, "", names[1])
		good := snaps.IndexEntry{Snap: snap, Clone: head0.WithSnap(snap)}
		if got := snapIndex(t, c, mp.ActingPrimary, pg); !slices.Equal(got, indexKeys(good)) {
			t.Fatalf("index %q, want %q", got, indexKeys(good))
		}
		// Damage the primary's index: lose the entry, add one for a clone
		// names[1] does not have, and a key that does not decode.
		stale := snaps.IndexEntry{Snap: snap, Clone: head1.WithSnap(snap)}
		coll, meta := objectstore.PGCollection(pg.Pool, pg.Seed), pglog.MetaObject(pg)
		var txn objectstore.Transaction
		txn.OmapRmKeys(coll, meta, good.Key())
		txn.OmapSetKeys(coll, meta, map[string][]byte{stale.Key(): nil, snaps.IndexPrefix + "garbage": nil})
		if err := objectstore.Apply(ctx, c.OSDs[mp.ActingPrimary].Store, &txn); err != nil {
			t.Fatal(err)
		}
		// A replica loses the entry too: its deep scrub rebuilds it there,
		// as Ceph's OSDs fix their SnapMapper.
		replica := mp.Acting[1]
		var rtxn objectstore.Transaction
		rtxn.OmapRmKeys(coll, meta, good.Key())
		if err := objectstore.Apply(ctx, c.OSDs[replica].Store, &rtxn); err != nil {
			t.Fatal(err)
		}
		tellPG(t, conn, mp, "pg deep-scrub", pg)
		for range 10 {
			if slices.Equal(snapIndex(t, c, replica, pg), indexKeys(good)) {
				break
			}
			time.Sleep(time.Second)
		}
		if got := snapIndex(t, c, replica, pg); !slices.Equal(got, indexKeys(good)) {
			t.Fatalf("osd.%d's index after the deep scrub: %q, want %q", replica, got, indexKeys(good))
		}
		if n := c.Counter(replica, "cuttle_osd_snap_index_repairs_total"); n != 1 {
			t.Fatalf("osd.%d counts %v snap index repairs, want 1", replica, n)
		}
		st := c.pgStatus(t, mp.ActingPrimary, pg)
		wantBad := []string{head0.String(), head1.String(), meta.String()}
		slices.Sort(wantBad)
		gotBad := slices.Clone(st.Inconsistent)
		slices.Sort(gotBad)
		if st.State != "active+clean+inconsistent" || !slices.Equal(gotBad, wantBad) {
			t.Fatalf("after a deep scrub: %q, inconsistent %v; want %v", st.State, st.Inconsistent, wantBad)
		}
		tellPG(t, conn, mp, "pg repair", pg)
		if st := c.pgStatus(t, mp.ActingPrimary, pg); st.State != "active+clean" {
			t.Fatalf("after repair: %q, inconsistent %v", st.State, st.Inconsistent)
		}
		if got := snapIndex(t, c, mp.ActingPrimary, pg); !slices.Equal(got, indexKeys(good)) {
			t.Fatalf("index after repair %q, want %q", got, indexKeys(good))
		}
		// The trim finds the clone through the repaired index.
		if err := io.RemovePoolSnap(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		trimmed := func() error {
			for _, osd := range mp.Acting {
				if _, err := c.OSDs[osd].Store.Stat(ctx, coll, good.Clone); err == nil {
					return fmt.Errorf("osd.%d keeps the clone", osd)
				}
				if got := snapIndex(t, c, osd, pg); len(got) != 0 {
					return fmt.Errorf("osd.%d index: %q", osd, got)
				}
			}
			return nil
		}
		for range 30 {
			if trimmed() == nil {
				break
			}
			time.Sleep(10 * time.Second)
		}
		if err := trimmed(); err != nil {
			t.Fatalf("after the trim: %v", err)
		}
	})
}

// A split moves the snap index entries of the clones that move to a
// child PG with them: after pg_num grows from 8 to 32 and pgp_num
// follows (backfill moves the children), every member's index of every
// PG names exactly the clones of its objects, and removing the snapshot
// trims every clone.
func TestSplitMovesTheSnapIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		const objects, size = 40, 8
		for i := range objects {
			if err := io.WriteFull(ctx, fmt.Sprint("obj", i), bytes.Repeat([]byte{'a'}, size)); err != nil {
				t.Fatal(err)
			}
		}
		s, err := io.CreatePoolSnap(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		for i := range objects {
			if err := io.WriteFull(ctx, fmt.Sprint("obj", i), bytes.Repeat([]byte{'b'}, size)); err != nil {
				t.Fatal(err)
			}
		}
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", "32")
		time.Sleep(20 * time.Second)
		c.Run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", "32")
		time.Sleep(20 * time.Second)
		c.settle(t, "after the split")
		want := map[osdmap.PG][]snaps.IndexEntry{}
		for i := range objects {
			id, pg, _ := place(t, c, fmt.Sprint("obj", i))
			want[pg] = append(want[pg], snaps.IndexEntry{Snap: s, Clone: id.WithSnap(s)})
		}
		m := c.Map()
		for seed := range m.Pool(1).PGNum {
			pg := osdmap.PG{Pool: 1, Seed: seed}
			mp, err := m.PGToUpActing(pg, &osdmap.Scratch{})
			if err != nil {
				t.Fatal(err)
			}
			for _, osd := range mp.Acting {
				if got := snapIndex(t, c, osd, pg); !slices.Equal(got, indexKeys(want[pg]...)) {
					t.Fatalf("osd.%d pg %v index %q, want %q", osd, pg, got, indexKeys(want[pg]...))
				}
			}
		}
		if err := io.RemovePoolSnap(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		waitUsage(t, c, "rbd", objects*size, objects)
	})
}

// A member that was away while snapshots were taken, objects rewritten
// and deleted and a snapshot trimmed, for longer than the PG log keeps,
// is backfilled: its snap index then names exactly the clones the PG has
// (those of the new snapshot), none of the trimmed one's.
func TestBackfillKeepsTheSnapIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newPoolCluster(t, Options{LogEntries: 4}, 1, "h1", "h2", "h3")
		ctx := context.Background()
		io, err := c.connect(t, "client.admin").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		_, pg, mp := place(t, c, "probe")
		primary, returning := mp.Acting[0], mp.Acting[2]
		var names []string
		for i := 0; len(names) < 6; i++ {
			if _, p, _ := place(t, c, fmt.Sprint("obj-", i)); p == pg {
				names = append(names, fmt.Sprint("obj-", i))
			}
		}
		write := func(n, what string) {
			t.Helper()
			if err := io.WriteFull(ctx, n, []byte(what)); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range names {
			write(n, "one")
		}
		s1, err := io.CreatePoolSnap(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names[:4] {
			write(n, "two")
		}
		c.settle(t, "before the OSD leaves")
		if got := snapIndex(t, c, returning, pg); len(got) != 4 {
			t.Fatalf("osd.%d index before it leaves: %q, want the 4 clones of s1", returning, got)
		}
		c.StopOSD(returning)
		c.WaitForEpoch(c.Epoch())
		s2, err := io.CreatePoolSnap(ctx, "s2")
		if err != nil {
			t.Fatal(err)
		}
		write(names[0], "three")
		write(names[4], "three")
		if err := io.Delete(ctx, names[1]); err != nil {
			t.Fatal(err)
		}
		if err := io.RemovePoolSnap(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, i := range []int{0, 1, 4} {
			want = append(want, snaps.IndexEntry{Snap: s2, Clone: objid.Object(1, "", names[i]).WithSnap(s2)}.Key())
		}
		slices.Sort(want)
		for range 30 {
			if slices.Equal(snapIndex(t, c, primary, pg), want) {
				break
			}
			time.Sleep(10 * time.Second)
		}
		if got := snapIndex(t, c, primary, pg); !slices.Equal(got, want) {
			t.Fatalf("primary's index after the trim of s1: %q, want %q", got, want)
		}
		c.StartOSD(returning)
		c.settle(t, "after the backfill")
		if got := snapIndex(t, c, returning, pg); !slices.Equal(got, want) {
			t.Fatalf("osd.%d's index after the backfill: %q, want %q", returning, got, want)
		}
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		for _, n := range names[:4] {
			if _, err := c.OSDs[returning].Store.Stat(ctx, coll, objid.Object(1, "", n).WithSnap(s1)); err == nil {
				t.Fatalf("osd.%d keeps %s's clone of the trimmed s1", returning, n)
			}
		}
		expectAt(t, io, names[1], map[uint64]string{s2: "two", rados.SnapHead: ""})
	})
}

// snapIndexProblems compares, on every OSD, the snap index of every PG
// collection with the snap sets of its objects (the index must be
// exactly IndexOf of each head's, or headless snapdir's, snap set). A
// head or snapdir whose snap set cannot be read (a copy the test made
// unreadable) is left out with its entries.
func (c *Cluster) snapIndexProblems(t *testing.T) (problems []string, entries int) {
	t.Helper()
	ctx := context.Background()
	for id, o := range c.OSDs {
		colls, err := o.Store.ListCollections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, coll := range colls {
			if coll.Pool < 0 {
				continue
			}
			pg := osdmap.PG{Pool: coll.Pool, Seed: coll.Seed}
			objs, _, err := o.Store.ListObjects(ctx, coll, objid.ID{}, 0)
			if errors.Is(err, objectstore.ErrCollectionNotFound) {
				continue // a stray copy removed meanwhile
			} else if err != nil {
				t.Fatal(err)
			}
			heads := map[objid.ID]bool{}
			for _, x := range objs {
				if x.Snap == objid.NoSnap {
					heads[x] = true
				}
			}
			unreadable := map[objid.ID]bool{}
			var want []string
			for _, x := range objs {
				if x.Pool != coll.Pool || (x.Snap != objid.NoSnap && x.Snap != objid.SnapDir) {
					continue
				}
				head := x.WithSnap(objid.NoSnap)
				if x.Snap == objid.SnapDir && heads[head] {
					continue
				}
				b, err := o.Store.GetAttr(ctx, coll, x, osd.SnapSetAttr)
				if errors.Is(err, objectstore.ErrNoAttr) {
					continue
				} else if err != nil {
					unreadable[head] = true
					continue
				}
				ss, err := snaps.Unmarshal(b)
				if err != nil {
					unreadable[head] = true
					continue
				}
				want = append(want, indexKeys(snaps.IndexOf(head, ss)...)...)
			}
			keys, err := snapIndexKeys(o.Store, pg)
			if errors.Is(err, objectstore.ErrCollectionNotFound) || errors.Is(err, objectstore.ErrNotFound) {
				continue // a stray copy being removed
			} else if err != nil {
				t.Fatal(err)
			}
			var have []string
			for _, k := range keys {
				if e, err := snaps.ParseIndexKey(k); err != nil || !unreadable[e.Head()] {
					have = append(have, k)
				}
			}
			slices.Sort(want)
			entries += len(have)
			if !slices.Equal(have, want) {
				problems = append(problems, fmt.Sprintf("osd.%d pg %v: snap index %q, its snap sets call for %q", id, pg, have, want))
			}
		}
	}
	return problems, entries
}

// checkSnapIndexes fails the test if an OSD's snap index disagrees with
// its snap sets for a minute (a trim may be applying between two reads).
func (c *Cluster) checkSnapIndexes(t *testing.T, seed uint64) {
	t.Helper()
	// Deep scrubs during the run check the replicas' indexes and rebuild
	// what is wrong: that must never have been needed.
	if n := counterSum(c, "cuttle_osd_snap_index_repairs_total"); n != 0 {
		t.Errorf("seed %d: replicas' deep scrubs rebuilt %v snap index entries", seed, n)
	}
	var problems []string
	for range 3 {
		var entries int
		if problems, entries = c.snapIndexProblems(t); len(problems) == 0 {
			t.Logf("seed %d: every OSD's snap index agrees with its snap sets (%d entries)", seed, entries)
			return
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
	}
	t.Errorf("seed %d: snap indexes disagree with the snap sets:\n%s", seed, strings.Join(problems, "\n"))
}

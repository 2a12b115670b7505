package sim

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
)

// scrubCluster starts three OSDs with a size-3 pool, writes objects of
// one PG and returns their names, the PG and its placement.
func scrubCluster(t *testing.T, opts Options) (*Cluster, *rados.Conn, *rados.IOContext, []string, osdmap.PG, osdmap.Mapping) {
	c, _ := threeOSDsWith(t, opts)
	conn := c.connect(t, "client.admin")
	io, err := conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	_, pg, mp := place(t, c, "obj-0")
	var names []string
	for i := 0; len(names) < 5; i++ {
		name := fmt.Sprint("obj-", i)
		if _, p, _ := place(t, c, name); p == pg {
			names = append(names, name)
			if err := io.WriteFull(context.Background(), name, content(name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c, conn, io, names, pg, mp
}

func content(name string) []byte { return bytes.Repeat([]byte(name+" "), 500) }

// tellPG sends a pg command to the PG's primary and lets it finish.
func tellPG(t *testing.T, conn *rados.Conn, mp osdmap.Mapping, prefix string, pg osdmap.PG) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := conn.OSDCommand(ctx, mp.ActingPrimary, prefix, "pgid", pg.String()); err != nil {
		t.Fatalf("%s %v: %v", prefix, pg, err)
	}
	synctest.Wait()
}

// A copy changed behind the OSD's back (same version, other bytes) is
// invisible to a light scrub, found by a deep scrub (the PG turns
// inconsistent, naming the object) and put right by repair from the
// copies that agree.
func TestDeepScrubFindsAndRepairsADifferingCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, conn, _, names, pg, mp := scrubCluster(t, Options{})
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		victim := objid.Object(1, "", names[1])
		replica := c.OSDs[mp.Acting[2]]
		bad := bytes.Repeat([]byte("X"), len(content(names[1])))
		var txn objectstore.Transaction
		txn.Write(coll, victim, 0, bad)
		if err := objectstore.Apply(context.Background(), replica.Store, &txn); err != nil {
			t.Fatal(err)
		}
		tellPG(t, conn, mp, "pg scrub", pg)
		if st := c.pgStatus(t, mp.ActingPrimary, pg); st.State != "active+clean" {
			t.Fatalf("after a light scrub: %q; want active+clean (it does not read data)", st.State)
		}
		tellPG(t, conn, mp, "pg deep-scrub", pg)
		st := c.pgStatus(t, mp.ActingPrimary, pg)
		if st.State != "active+clean+inconsistent" || !slices.Equal(st.Inconsistent, []string{victim.String()}) {
			t.Fatalf("after a deep scrub: %q, inconsistent %v; want active+clean+inconsistent naming %v", st.State, st.Inconsistent, victim)
		}
		tellPG(t, conn, mp, "pg repair", pg)
		if st := c.pgStatus(t, mp.ActingPrimary, pg); st.State != "active+clean" || len(st.Inconsistent) != 0 || st.LastDeepScrub.IsZero() {
			t.Fatalf("after repair: %q, inconsistent %v, deep scrubbed %v", st.State, st.Inconsistent, st.LastDeepScrub)
		}
		got, err := replica.Store.Read(context.Background(), coll, victim, 0, 0)
		if err != nil || !bytes.Equal(got, content(names[1])) {
			t.Fatalf("osd.%d's copy after repair: %.20q, %v", replica.ID, got, err)
		}
	})
}

// A copy whose data no longer passes its checksum: a deep scrub names it
// (the replica says why it cannot read it), repair rewrites it.
func TestDeepScrubRepairsAnUnreadableReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, conn, _, names, pg, mp := scrubCluster(t, Options{})
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		victim := objid.Object(1, "", names[2])
		replica := c.OSDs[mp.Acting[1]]
		replica.Gate.Corrupt(coll, victim)
		tellPG(t, conn, mp, "pg deep-scrub", pg)
		if st := c.pgStatus(t, mp.ActingPrimary, pg); !strings.Contains(st.State, "inconsistent") {
			t.Fatalf("after a deep scrub: %q; want inconsistent", st.State)
		}
		tellPG(t, conn, mp, "pg repair", pg)
		got, err := replica.Store.Read(context.Background(), coll, victim, 0, 0)
		if err != nil || !bytes.Equal(got, content(names[2])) {
			t.Fatalf("osd.%d's copy after repair: %.20q, %v", replica.ID, got, err)
		}
		tellPG(t, conn, mp, "pg deep-scrub", pg)
		if st := c.pgStatus(t, mp.ActingPrimary, pg); st.State != "active+clean" {
			t.Fatalf("deep scrub after repair: %q", st.State)
		}
	})
}

// A client read that meets a bad copy on the primary is answered from a
// replica's copy, and the primary's copy is rewritten on the way.
func TestReadRepairsThePrimarysCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, io, names, pg, mp := scrubCluster(t, Options{})
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		victim := objid.Object(1, "", names[3])
		primary := c.OSDs[mp.ActingPrimary]
		primary.Gate.Corrupt(coll, victim)
		got, err := io.Read(context.Background(), names[3], 0, 0)
		if err != nil || !bytes.Equal(got, content(names[3])) {
			t.Fatalf("read of a corrupt primary copy: %.20q, %v", got, err)
		}
		if got, err := primary.Store.Read(context.Background(), coll, victim, 0, 0); err != nil || !bytes.Equal(got, content(names[3])) {
			t.Fatalf("primary's copy after the read: %.20q, %v", got, err)
		}
	})
}

// Scrubs happen by themselves: a PG is deep scrubbed within one and a
// half deep-scrub intervals (each PG's interval is stretched by up to
// half), and not before one.
func TestScheduledDeepScrub(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := Options{ScrubInterval: 20 * time.Minute, DeepScrubInterval: time.Hour}
		c, _, _, _, pg, mp := scrubCluster(t, opts)
		time.Sleep(opts.DeepScrubInterval - 2*time.Minute) // virtual time
		synctest.Wait()
		if st := c.pgStatus(t, mp.ActingPrimary, pg); !st.LastDeepScrub.IsZero() {
			t.Fatalf("deep scrubbed before its interval: %v", st.LastDeepScrub)
		}
		time.Sleep(opts.DeepScrubInterval/2 + 4*time.Minute)
		synctest.Wait()
		if st := c.pgStatus(t, mp.ActingPrimary, pg); st.LastDeepScrub.IsZero() || st.LastScrub.IsZero() || st.State != "active+clean" {
			t.Fatalf("after 1.5 intervals: state %q, last scrub %v, last deep scrub %v", st.State, st.LastScrub, st.LastDeepScrub)
		}
	})
}

// The noscrub and nodeep-scrub flags hold scheduled scrubs back, each its
// own kind (under noscrub alone a due deep scrub runs), while an
// operator's scrub runs regardless.
func TestScrubFlagsHoldBackScheduledScrubs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := Options{ScrubInterval: 20 * time.Minute, DeepScrubInterval: time.Hour}
		c, conn, _, _, pg, mp := scrubCluster(t, opts)
		c.Run("osd set", "key", "noscrub")
		c.Run("osd set", "key", "nodeep-scrub")
		synctest.Wait()
		time.Sleep(2 * opts.DeepScrubInterval) // virtual time
		synctest.Wait()
		if st := c.pgStatus(t, mp.ActingPrimary, pg); !st.LastScrub.IsZero() || !st.LastDeepScrub.IsZero() {
			t.Fatalf("scrubbed under noscrub and nodeep-scrub: last scrub %v, last deep scrub %v", st.LastScrub, st.LastDeepScrub)
		}
		tellPG(t, conn, mp, "pg scrub", pg)
		if st := c.pgStatus(t, mp.ActingPrimary, pg); st.LastScrub.IsZero() || !st.LastDeepScrub.IsZero() {
			t.Fatalf("an operator's scrub under the flags: last scrub %v, last deep scrub %v", st.LastScrub, st.LastDeepScrub)
		}
		c.Run("osd unset", "key", "nodeep-scrub")
		synctest.Wait()
		time.Sleep(2 * opts.ScrubInterval)
		synctest.Wait()
		if st := c.pgStatus(t, mp.ActingPrimary, pg); st.LastDeepScrub.IsZero() {
			t.Fatalf("an overdue deep scrub did not run under noscrub: last deep scrub %v", st.LastDeepScrub)
		}
	})
}

// An object stored on every member of a PG its name does not map to (what
// growing pg_num without splitting PGs left behind) is found by a light
// scrub, which names the PG it belongs in; repair leaves it where it is
// (copying it among this PG's members cannot make it readable) and the
// PG stays inconsistent.
func TestScrubFindsAnObjectInTheWrongPG(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, conn, io, names, pg, mp := scrubCluster(t, Options{})
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		var stray objid.ID
		var home osdmap.PG
		for i := 0; stray.Name == ""; i++ {
			if id, p, _ := place(t, c, fmt.Sprint("stray-", i)); p != pg {
				stray, home = id, p
			}
		}
		for _, x := range mp.Acting {
			var txn objectstore.Transaction
			txn.Write(coll, stray, 0, content(stray.Name))
			if err := objectstore.Apply(context.Background(), c.OSDs[x].Store, &txn); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{fmt.Sprintf("%v (stored in pg %v, but its hash maps to pg %v)", stray, pg, home)}
		tellPG(t, conn, mp, "pg scrub", pg)
		st := c.pgStatus(t, mp.ActingPrimary, pg)
		if st.State != "active+clean+inconsistent" || !slices.Equal(st.Inconsistent, want) {
			t.Fatalf("after a light scrub: %q, inconsistent %q; want active+clean+inconsistent naming %q", st.State, st.Inconsistent, want)
		}
		tellPG(t, conn, mp, "pg repair", pg)
		st = c.pgStatus(t, mp.ActingPrimary, pg)
		if st.State != "active+clean+inconsistent" || !slices.Equal(st.Inconsistent, want) {
			t.Fatalf("after repair: %q, inconsistent %q; want it left as it was", st.State, st.Inconsistent)
		}
		for _, x := range mp.Acting {
			if got, err := c.OSDs[x].Store.Read(context.Background(), coll, stray, 0, 0); err != nil || !bytes.Equal(got, content(stray.Name)) {
				t.Fatalf("osd.%d's stray copy after repair: %.20q, %v; want it kept", x, got, err)
			}
		}
		for _, name := range names {
			if got, err := io.Read(context.Background(), name, 0, 0); err != nil || !bytes.Equal(got, content(name)) {
				t.Fatalf("read %s: %.20q, %v", name, got, err)
			}
		}
	})
}

// The OSD picks scheduled scrubs in an order that depends on the seed
// alone: two runs of one seed scrub a pool's PGs in the same order. The
// OSD gathers its candidates from a map, and with 64 PGs and one scrub
// a minute it never catches up, so at every check several PGs are
// overdue, some of them due a deep scrub; which one runs must not fall
// to the map's order (scrub.Next weighs candidates in PG order).
func TestScheduledScrubOrderFollowsTheSeed(t *testing.T) {
	const seed = 7
	run := func() []string {
		var order []string
		synctest.Test(t, func(t *testing.T) {
			opts := Options{Net: memnet.Config{Seed: seed}, ScrubInterval: 20 * time.Minute, DeepScrubInterval: time.Hour}
			c := New(t, opts)
			c.AddOSD("h1")
			c.Run("osd pool create", "pool", "rbd", "pg_num", "64", "size", "1", "min_size", "1", "yes_i_really_mean_it", "true")
			c.WaitForEpoch(c.Epoch())
			synctest.Wait()
			type stamps struct{ light, deep time.Time }
			seen := map[string]stamps{}
			// Look every half minute (the OSD starts one scrub a minute)
			// and note the scrubs that finished since.
			for range 2 * 60 * 2 {
				time.Sleep(30 * time.Second) // virtual time
				synctest.Wait()
				for _, s := range c.OSDs[0].D.PGs() {
					was := seen[s.PG]
					switch {
					case !s.LastDeepScrub.Equal(was.deep):
						order = append(order, s.PG+" deep")
					case !s.LastScrub.Equal(was.light):
						order = append(order, s.PG)
					}
					seen[s.PG] = stamps{s.LastScrub, s.LastDeepScrub}
				}
			}
		})
		return order
	}
	first, second := run(), run()
	if len(first) < 60 {
		t.Fatalf("%d scrubs in two hours of 64 PGs: %v", len(first), first)
	}
	if !slices.Equal(first, second) {
		t.Fatalf("one seed, two scrub orders:\n%v\n%v", first, second)
	}
	t.Logf("%d scrubs, in the same order both runs", len(first))
}

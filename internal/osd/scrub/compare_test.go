package scrub

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

var (
	v1 = wire.Version{Epoch: 3, Counter: 1}
	v2 = wire.Version{Epoch: 3, Counter: 2}
)

// good is a readable copy of id: 10 bytes at v with the given data digest.
func good(id objid.ID, v wire.Version, data uint32) wire.ScrubObject {
	return wire.ScrubObject{ID: id, Size: 10, Version: v, AttrsDigest: 5, OmapDigest: 6, DataDigest: data}
}

// with returns o changed by f.
func with(o wire.ScrubObject, f func(*wire.ScrubObject)) wire.ScrubObject {
	f(&o)
	return o
}

func unreadable(id objid.ID, why string) wire.ScrubObject {
	return wire.ScrubObject{ID: id, ReadError: why}
}

func TestCompare(t *testing.T) {
	a, b := objid.Object(1, "", "a"), objid.Object(1, "", "b")
	ga := good(a, v1, 7)
	for _, tc := range []struct {
		name      string
		primary   int32
		maps      map[int32][]wire.ScrubObject // of object a; b is added, alike everywhere
		auth, bad []int32                      // bad nil: a is consistent
		why       []string                     // each in the reason
	}{
		{name: "all agree", maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {ga}, 2: {ga}}},
		{name: "a light scrub's maps agree", maps: map[int32][]wire.ScrubObject{
			0: {with(ga, func(o *wire.ScrubObject) { o.DataDigest, o.OmapDigest = 0, 0 })},
			1: {with(ga, func(o *wire.ScrubObject) { o.DataDigest, o.OmapDigest = 0, 0 })}}},
		{name: "one member's data digest differs: the majority wins",
			maps: map[int32][]wire.ScrubObject{0: {good(a, v1, 9)}, 1: {ga}, 2: {ga}},
			auth: []int32{1, 2}, bad: []int32{0},
			why: []string{"osd [0]: version 3'1 size 10 digests 00000005/00000006/00000009, authoritative version 3'1 size 10 digests 00000005/00000006/00000007"}},
		{name: "a size mismatch",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {with(ga, func(o *wire.ScrubObject) { o.Size = 11 })}, 2: {ga}},
			auth: []int32{0, 2}, bad: []int32{1}, why: []string{"osd [1]: version 3'1 size 11"}},
		{name: "an attribute mismatch",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {ga}, 2: {with(ga, func(o *wire.ScrubObject) { o.AttrsDigest = 99 })}},
			auth: []int32{0, 1}, bad: []int32{2}, why: []string{"osd [2]: version 3'1 size 10 digests 00000063/"}},
		{name: "an omap mismatch",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {ga}, 2: {with(ga, func(o *wire.ScrubObject) { o.OmapDigest = 99 })}},
			auth: []int32{0, 1}, bad: []int32{2}, why: []string{"digests 00000005/00000063/00000007"}},
		{name: "a version mismatch",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {ga}, 2: {good(a, v2, 7)}},
			auth: []int32{0, 1}, bad: []int32{2}, why: []string{"osd [2]: version 3'2"}},
		{name: "a member lacks the object",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {ga}, 2: nil},
			auth: []int32{0, 1}, bad: []int32{2}, why: []string{"osd [2]: missing, authoritative version 3'1"}},
		{name: "the primary lacks the object",
			maps: map[int32][]wire.ScrubObject{0: nil, 1: {ga}, 2: {ga}},
			auth: []int32{1, 2}, bad: []int32{0}, why: []string{"osd [0]: missing"}},
		// The vote counts copies, not the log: a copy only one member
		// holds loses to the members that lack it.
		{name: "a copy only one member holds is outvoted",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: nil, 2: nil},
			auth: []int32{1, 2}, bad: []int32{0}, why: []string{"osd [0]: version 3'1 size 10 digests 00000005/00000006/00000007, authoritative missing"}},
		{name: "a read error on one member",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {unreadable(a, "data: checksum mismatch")}, 2: {ga}},
			auth: []int32{0, 2}, bad: []int32{1}, why: []string{"osd.1 cannot read it (data: checksum mismatch)"}},
		{name: "an unreadable copy has no vote",
			maps: map[int32][]wire.ScrubObject{0: {unreadable(a, "data: checksum")}, 1: {ga}, 2: {good(a, v1, 8)}},
			auth: []int32{1}, bad: []int32{0, 2}, why: []string{"osd.0 cannot read it", "osd [2]: "}},
		{name: "two members disagree, no majority: the newer version wins",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {good(a, v2, 8)}},
			auth: []int32{1}, bad: []int32{0}, why: []string{"osd [0]: version 3'1", "authoritative version 3'2"}},
		{name: "two members disagree at one version: the primary's copy wins",
			maps: map[int32][]wire.ScrubObject{0: {ga}, 1: {good(a, v1, 8)}},
			auth: []int32{0}, bad: []int32{1}, why: []string{"osd [1]: "}},
		{name: "the primary is not member 0",
			primary: 1,
			maps:    map[int32][]wire.ScrubObject{0: {ga}, 1: {good(a, v1, 8)}},
			auth:    []int32{1}, bad: []int32{0}, why: []string{"osd [0]: "}},
		{name: "three copies differ at one version: the primary's copy wins",
			maps: map[int32][]wire.ScrubObject{0: {good(a, v1, 1)}, 1: {good(a, v1, 2)}, 2: {good(a, v1, 3)}},
			auth: []int32{0}, bad: []int32{1, 2}, why: []string{"osd [1]: ", "osd [2]: "}},
		{name: "the newer version beats the primary's",
			maps: map[int32][]wire.ScrubObject{0: {good(a, v1, 1)}, 1: {good(a, v1, 2)}, 2: {good(a, v2, 3)}},
			auth: []int32{2}, bad: []int32{0, 1}},
		{name: "no readable copy",
			maps: map[int32][]wire.ScrubObject{0: {unreadable(a, "x")}, 1: {unreadable(a, "y")}},
			bad:  []int32{0, 1}, why: []string{"osd.0 cannot read it (x)", "osd.1 cannot read it (y)", "no readable copy"}},
		{name: "unreadable where the others lack it",
			maps: map[int32][]wire.ScrubObject{0: nil, 1: {unreadable(a, "y")}, 2: nil},
			auth: []int32{0, 2}, bad: []int32{1}, why: []string{"osd.1 cannot read it (y)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for x := range tc.maps {
				tc.maps[x] = append(tc.maps[x], good(b, v1, 1))
			}
			got := Compare(tc.maps, tc.primary)
			if inc, ok := got[b]; ok {
				t.Errorf("b is consistent, reported %+v", inc)
			}
			inc, found := got[a]
			if tc.bad == nil {
				if found {
					t.Fatalf("reported %+v", inc)
				}
				return
			}
			if !found {
				t.Fatalf("a is not reported")
			}
			if !slices.Equal(inc.Auth, tc.auth) || !slices.Equal(inc.Bad, tc.bad) || inc.Misplaced {
				t.Errorf("auth %v bad %v misplaced %v; want auth %v bad %v", inc.Auth, inc.Bad, inc.Misplaced, tc.auth, tc.bad)
			}
			for _, w := range tc.why {
				if !strings.Contains(inc.Why, w) {
					t.Errorf("why %q lacks %q", inc.Why, w)
				}
			}
		})
	}
}

// The reasons come in a fixed order, whatever the maps' order.
func TestCompareWhyIsStable(t *testing.T) {
	a := objid.Object(1, "", "a")
	m := map[int32][]wire.ScrubObject{0: {good(a, v1, 1)}, 1: {good(a, v1, 2)}, 2: {good(a, v1, 3)}, 3: {unreadable(a, "e")}, 4: nil}
	want := Compare(m, 0)[a].Why
	for range 20 {
		if got := Compare(m, 0)[a].Why; got != want {
			t.Fatalf("why %q, then %q", want, got)
		}
	}
}

// pgFixture is a pool of 32 PGs, one of them, an object that belongs in
// it and one that belonged in it when the pool had 8.
type pgFixture struct {
	pool        osdmap.Pool
	pg          osdmap.PG
	home, stray objid.ID
}

func newPGFixture(t *testing.T) pgFixture {
	t.Helper()
	f := pgFixture{
		pool: osdmap.Pool{ID: 2, Name: "p", Type: osdmap.PoolReplicated, Size: 3, MinSize: 2, PGNum: 32, PGPNum: 32},
		pg:   osdmap.PG{Pool: 2, Seed: 3},
	}
	for i := 0; f.stray.Name == "" || f.home.Name == ""; i++ {
		if i > 100000 {
			t.Fatal("no objects of the wanted PGs")
		}
		id := objid.Object(2, "", fmt.Sprint("obj-", i))
		switch got := f.pool.HashToPG(id.Hash); {
		case got == f.pg && f.home.Name == "":
			f.home = id
		case got != f.pg && got.Seed&7 == f.pg.Seed && f.stray.Name == "":
			f.stray = id
		}
	}
	return f
}

func TestMisplaced(t *testing.T) {
	f := newPGFixture(t)
	other := objid.Object(5, "", "of-another-pool")
	// rehashed is stored under home's hash, but its name hashes to
	// another value of the same PG.
	rehashed := f.home
	for i := 0; ; i++ {
		rehashed.Name = fmt.Sprint(f.home.Name, "-renamed-", i)
		if h := objid.HashLocator(rehashed.Namespace, rehashed.Locator()); f.pool.HashToPG(h) == f.pg && h != rehashed.Hash {
			break
		}
	}
	all := func(ids ...objid.ID) []wire.ScrubObject {
		var out []wire.ScrubObject
		for _, id := range ids {
			out = append(out, good(id, v1, 1))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		pool osdmap.Pool
		maps map[int32][]wire.ScrubObject
		want map[objid.ID]Inconsistency
	}{
		{name: "objects that belong", pool: f.pool, maps: map[int32][]wire.ScrubObject{0: all(f.home), 1: all(f.home)}},
		{name: "an object of the PG's old placement, on every member", pool: f.pool,
			maps: map[int32][]wire.ScrubObject{0: all(f.home, f.stray), 4: all(f.stray), 1: all(f.home, f.stray)},
			want: map[objid.ID]Inconsistency{f.stray: {Bad: []int32{0, 1, 4}, Misplaced: true,
				Why: fmt.Sprintf("stored in pg 2.3, but its hash maps to pg %v", f.pool.HashToPG(f.stray.Hash))}}},
		{name: "on one member", pool: f.pool,
			maps: map[int32][]wire.ScrubObject{0: all(f.home), 1: all(f.home, f.stray)},
			want: map[objid.ID]Inconsistency{f.stray: {Bad: []int32{1}, Misplaced: true,
				Why: fmt.Sprintf("stored in pg 2.3, but its hash maps to pg %v", f.pool.HashToPG(f.stray.Hash))}}},
		{name: "an object of another pool", pool: f.pool,
			maps: map[int32][]wire.ScrubObject{0: all(other)},
			want: map[objid.ID]Inconsistency{other: {Bad: []int32{0}, Misplaced: true, Why: "stored in pg 2.3, but it belongs to pool 5"}}},
		{name: "an object stored under a hash its name does not have", pool: f.pool,
			maps: map[int32][]wire.ScrubObject{0: all(rehashed)},
			want: map[objid.ID]Inconsistency{rehashed: {Bad: []int32{0}, Misplaced: true,
				Why: fmt.Sprintf("stored with hash %08x, but its name hashes to %08x", rehashed.Hash, objid.HashLocator(rehashed.Namespace, rehashed.Locator()))}}},
		{name: "a pool without pg_num places nothing elsewhere", pool: osdmap.Pool{ID: 2},
			maps: map[int32][]wire.ScrubObject{0: all(f.home, f.stray)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Misplaced(tc.maps, tc.pool, f.pg)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for id, w := range tc.want {
				g := got[id]
				if g.Why != w.Why || g.Misplaced != w.Misplaced || !slices.Equal(g.Bad, w.Bad) || len(g.Auth) != 0 {
					t.Errorf("%v: got %+v, want %+v", id, g, w)
				}
			}
		})
	}
}

func TestChunkCheck(t *testing.T) {
	f := newPGFixture(t)
	same, differs, written := objid.Object(2, "", "same"), objid.Object(2, "", "differs"), objid.Object(2, "", "written")
	// Give the three names homes in the PG, whatever they hash to: the
	// fixture's pool at pg_num 1 maps every name to seed 0.
	pool := f.pool
	pool.PGNum, pool.PGPNum = 1, 1
	pg := osdmap.PG{Pool: 2, Seed: 0}
	if pool.HashToPG(same.Hash) != pg {
		t.Fatalf("pg_num 1 maps %v to %v", same, pool.HashToPG(same.Hash))
	}
	stray := objid.Object(5, "", "elsewhere")      // another pool's object, lacking on osd.2
	strayNew := objid.Object(5, "", "written-too") // another, written while compared
	c := Chunk{
		PG: pg, Pool: pool, Primary: 0,
		Maps: map[int32][]wire.ScrubObject{
			0: {good(same, v1, 1), good(differs, v1, 1), good(written, v1, 1), good(stray, v1, 1), good(strayNew, v1, 1)},
			1: {good(same, v1, 1), good(differs, v1, 2), good(written, v2, 2), good(stray, v1, 1), good(strayNew, v2, 1)},
			2: {good(same, v1, 1), good(differs, v1, 1), good(written, v2, 2), good(strayNew, v2, 1)},
		},
		InFlux: map[objid.ID]bool{written: true, strayNew: true},
	}
	got := c.Check()
	if len(got) != 3 {
		t.Fatalf("found %+v, want differs and the strays", got)
	}
	if inc := got[differs]; !slices.Equal(inc.Auth, []int32{0, 2}) || !slices.Equal(inc.Bad, []int32{1}) || inc.Misplaced {
		t.Errorf("differs: %+v", inc)
	}
	// A misplaced object whose copies differ too: the placement first,
	// then the difference; only the placement counts for repair.
	inc := got[stray]
	if !inc.Misplaced || !slices.Equal(inc.Bad, []int32{0, 1}) || len(inc.Auth) != 0 {
		t.Errorf("stray: %+v", inc)
	}
	if want := "stored in pg 2.0, but it belongs to pool 5; osd [2]: missing"; !strings.HasPrefix(inc.Why, want) {
		t.Errorf("stray: why %q, want it to start %q", inc.Why, want)
	}
	// A name is checked even while the object is written; the copies'
	// difference is not reported.
	inc = got[strayNew]
	if want := "stored in pg 2.0, but it belongs to pool 5"; !inc.Misplaced || inc.Why != want || !slices.Equal(inc.Bad, []int32{0, 1, 2}) {
		t.Errorf("strayNew: %+v, want why %q on [0 1 2]", inc, want)
	}
}

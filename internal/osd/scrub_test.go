package osd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestCompareScrubMaps(t *testing.T) {
	a, b := objid.Object(1, "", "a"), objid.Object(1, "", "b")
	v1, v2 := wire.Version{Epoch: 3, Counter: 1}, wire.Version{Epoch: 3, Counter: 2}
	good := func(id objid.ID, v wire.Version, data uint32) wire.ScrubObject {
		return wire.ScrubObject{ID: id, Size: 10, Version: v, DataDigest: data}
	}
	for _, tc := range []struct {
		name      string
		maps      map[int32][]wire.ScrubObject
		auth, bad []int32
		why       string
	}{
		{"all agree", map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v1, 7)}, 2: {good(a, v1, 7)}}, nil, nil, ""},
		{"the majority wins", map[int32][]wire.ScrubObject{0: {good(a, v1, 9)}, 1: {good(a, v1, 7)}, 2: {good(a, v1, 7)}},
			[]int32{1, 2}, []int32{0}, "osd [0]"},
		{"a tie goes to the newer version", map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v2, 8)}},
			[]int32{1}, []int32{0}, "authoritative version 3'2"},
		{"then to the primary", map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v1, 8)}},
			[]int32{0}, []int32{1}, "osd [1]"},
		{"an unreadable copy has no vote", map[int32][]wire.ScrubObject{0: {{ID: a, ReadError: "data: checksum"}}, 1: {good(a, v1, 7)}, 2: {good(a, v1, 8)}},
			[]int32{1}, []int32{0, 2}, "osd.0 cannot read it"},
		{"a missing copy", map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v1, 7)}, 2: nil},
			[]int32{0, 1}, []int32{2}, "missing"},
		{"no readable copy", map[int32][]wire.ScrubObject{0: {{ID: a, ReadError: "x"}}, 1: {{ID: a, ReadError: "y"}}},
			nil, []int32{0, 1}, "no readable copy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.maps[0] = append(tc.maps[0], good(b, v1, 1)) // b is the same on every member
			for x := range tc.maps {
				if x != 0 {
					tc.maps[x] = append(tc.maps[x], good(b, v1, 1))
				}
			}
			got := compareScrubMaps(tc.maps, 0)
			if _, ok := got[b]; ok {
				t.Errorf("b is consistent, reported %+v", got[b])
			}
			inc, found := got[a]
			if tc.bad == nil {
				if found {
					t.Fatalf("reported %+v", inc)
				}
				return
			}
			if !found || !slices.Equal(inc.auth, tc.auth) || !slices.Equal(inc.bad, tc.bad) || !strings.Contains(inc.why, tc.why) {
				t.Fatalf("got auth %v bad %v (%s); want auth %v bad %v (%s)", inc.auth, inc.bad, inc.why, tc.auth, tc.bad, tc.why)
			}
		})
	}
}

// An object put into a PG's collection that its name does not map to
// (as growing pg_num without splitting PGs left them) is reported by a
// light scrub with the PG it belongs in, on every member holding it;
// objects that belong are not.
func TestScrubFindsAnObjectInTheWrongPG(t *testing.T) {
	ctx := context.Background()
	store := memstore.New(memstore.Options{})
	pool := osdmap.Pool{ID: 2, Name: "p", Type: osdmap.PoolReplicated, Size: 1, MinSize: 1, PGNum: 32, PGPNum: 32}
	thePG := osdmap.PG{Pool: 2, Seed: 3}
	coll := objectstore.PGCollection(thePG.Pool, thePG.Seed)
	var stray, home objid.ID
	for i := 0; stray.Name == "" || home.Name == ""; i++ {
		id := objid.Object(2, "", fmt.Sprint("obj-", i))
		switch got := pool.HashToPG(id.Hash); {
		case got == thePG && home.Name == "":
			home = id
		case got != thePG && got.Seed&7 == thePG.Seed && stray.Name == "":
			stray = id // in pg 2.3 when the pool had 8 PGs
		}
	}
	other := objid.Object(5, "", "of-another-pool")
	var txn objectstore.Transaction
	txn.CreateCollection(coll)
	for _, id := range []objid.ID{home, stray, other} {
		txn.Write(coll, id, 0, []byte(id.Name))
	}
	if err := objectstore.Apply(ctx, store, &txn); err != nil {
		t.Fatal(err)
	}
	o := &OSD{cfg: Config{ID: 0, Store: store}, ctx: ctx}
	p := &pg{o: o, id: thePG, coll: coll, pool: pool}
	own, err := p.scrubMap(objid.ID{}, objid.Max(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(own) != 3 {
		t.Fatalf("scrub map has %d objects, want 3: %+v", len(own), own)
	}
	found := misplacedObjects(map[int32][]wire.ScrubObject{0: own, 4: own}, pool, thePG)
	want := map[objid.ID]string{
		stray: fmt.Sprintf("stored in pg 2.3, but its hash maps to pg %v", pool.HashToPG(stray.Hash)),
		other: "stored in pg 2.3, but it belongs to pool 5",
	}
	if len(found) != len(want) {
		t.Fatalf("found %v, want %v", found, want)
	}
	for id, why := range want {
		inc := found[id]
		if inc.why != why || !inc.misplaced || !slices.Equal(inc.bad, []int32{0, 4}) || len(inc.auth) != 0 {
			t.Errorf("%v: %+v, want why %q on [0 4]", id, inc, why)
		}
	}
}

package osd

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/osd/scrub"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// An object put into a PG's collection that its name does not map to
// (as growing pg_num without splitting PGs left them) is reported by a
// light scrub with the PG it belongs in, on every member holding it;
// objects that belong are not, and the PG's own metadata object is not
// in the scrub map. (internal/osd/scrub tests the comparison itself.)
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
	chunk := scrub.Chunk{PG: thePG, Pool: pool, Maps: map[int32][]wire.ScrubObject{0: own, 4: own}}
	found := chunk.Check()
	want := map[objid.ID]string{
		stray: fmt.Sprintf("stored in pg 2.3, but its hash maps to pg %v", pool.HashToPG(stray.Hash)),
		other: "stored in pg 2.3, but it belongs to pool 5",
	}
	if len(found) != len(want) {
		t.Fatalf("found %v, want %v", found, want)
	}
	for id, why := range want {
		inc := found[id]
		if inc.Why != why || !inc.Misplaced || !slices.Equal(inc.Bad, []int32{0, 4}) || len(inc.Auth) != 0 {
			t.Errorf("%v: %+v, want why %q on [0 4]", id, inc, why)
		}
	}
}

package storetest

import (
	"cmp"
	"errors"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

func (e *env) collections() []objectstore.CollectionID {
	e.Helper()
	cs, err := e.s.ListCollections(e.ctx)
	if err != nil {
		e.Fatalf("list collections: %v", err)
	}
	sortCollections(cs)
	return cs
}

func sortCollections(cs []objectstore.CollectionID) {
	slices.SortFunc(cs, func(a, b objectstore.CollectionID) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Seed, b.Seed))
	})
}

func (e *env) collExists(c objectstore.CollectionID) bool {
	e.Helper()
	ok, err := e.s.CollectionExists(e.ctx, c)
	if err != nil {
		e.Fatalf("collection exists %v: %v", c, err)
	}
	return ok
}

func testEmptyStore(e *env) {
	if cs := e.collections(); len(cs) != 0 {
		e.Fatalf("new store has collections %v", cs)
	}
	st := e.statfs()
	if st.Stored != 0 || len(st.PoolStored) != 0 || st.Total == 0 || st.Available > st.Total {
		e.Fatalf("new store statfs %+v", st)
	}
}

func testCollections(e *env) {
	all := []objectstore.CollectionID{objectstore.MetaCollection, pgA, pgB, tmpA, objectstore.PGCollection(7, 0x1f)}
	e.setup(all...)
	sortCollections(all)
	if got := e.collections(); !slices.Equal(got, all) {
		e.Fatalf("collections %v, want %v", got, all)
	}
	for _, c := range all {
		if !e.collExists(c) {
			e.Fatalf("%v does not exist", c)
		}
	}
	if e.collExists(objectstore.PGCollection(1, 2)) {
		e.Fatalf("1.2_head exists")
	}
	e.apply(txn().RemoveCollection(pgB).RemoveCollection(tmpA))
	want := []objectstore.CollectionID{objectstore.MetaCollection, pgA, objectstore.PGCollection(7, 0x1f)}
	if got := e.collections(); !slices.Equal(got, want) {
		e.Fatalf("after removal: collections %v, want %v", got, want)
	}
	// The same object name in two collections is two objects.
	e.setup(pgB)
	e.apply(txn().Write(pgA, obj("x"), 0, []byte("a")).Write(pgB, obj("x"), 0, []byte("bb")))
	e.wantData(pgA, obj("x"), []byte("a"))
	e.wantData(pgB, obj("x"), []byte("bb"))
}

func testCollectionErrors(e *env) {
	e.setup(pgA)
	e.applyErr(txn().CreateCollection(pgA), objectstore.ErrExists)
	e.applyErr(txn().CreateCollection(pgB).CreateCollection(pgB), objectstore.ErrExists)
	e.applyErr(txn().RemoveCollection(pgB), objectstore.ErrCollectionNotFound)
	e.apply(txn().Touch(pgA, obj("x")))
	e.applyErr(txn().RemoveCollection(pgA), objectstore.ErrNotEmpty)
	if e.collExists(pgB) || !e.exists(pgA, obj("x")) {
		e.Fatalf("failed transactions changed the store")
	}
	e.apply(txn().Remove(pgA, obj("x")).RemoveCollection(pgA))
	if e.collExists(pgA) {
		e.Fatalf("%v still exists", pgA)
	}
}

// testRecreateCollection: a transaction that empties, removes and creates
// a collection again leaves it empty, and one that creates and removes a
// collection leaves none.
func testRecreateCollection(e *env) {
	e.setup(pgA)
	e.apply(txn().Write(pgA, obj("a"), 0, pattern(1, 5000)).SetAttr(pgA, obj("b"), "k", []byte("v")))
	e.apply(txn().Remove(pgA, obj("a")).Remove(pgA, obj("b")).RemoveCollection(pgA).CreateCollection(pgA).Touch(pgA, obj("c")))
	if got := e.list(pgA); len(got) != 1 || got[0] != obj("c") {
		e.Fatalf("recreated collection holds %v, want [c]", got)
	}
	if e.exists(pgA, obj("a")) || e.exists(pgA, obj("b")) {
		e.Fatalf("removed objects came back")
	}
	e.apply(txn().CreateCollection(pgB).Touch(pgB, obj("x")).Remove(pgB, obj("x")).RemoveCollection(pgB))
	if e.collExists(pgB) {
		e.Fatalf("%v exists after create and remove", pgB)
	}
	if st := e.statfs(); st.Stored != 0 {
		e.Fatalf("stored %d after removing all data", st.Stored)
	}
}

// everyObjectOp returns one transaction per object operation code, each
// naming object o (and p as the destination) in collection c.
func everyObjectOp(c objectstore.CollectionID, o, p objid.ID) map[string]*objectstore.Transaction {
	return map[string]*objectstore.Transaction{
		"touch":           txn().Touch(c, o),
		"write":           txn().Write(c, o, 0, []byte("x")),
		"zero":            txn().Zero(c, o, 0, 10),
		"truncate":        txn().Truncate(c, o, 10),
		"remove":          txn().Remove(c, o),
		"clone":           txn().Clone(c, o, p),
		"clone_range":     txn().CloneRange(c, o, p, 0, 0, 0),
		"setattrs":        txn().SetAttr(c, o, "a", []byte("v")),
		"rmattr":          txn().RmAttr(c, o, "a"),
		"omap_setkeys":    txn().OmapSetKeys(c, o, map[string][]byte{"k": nil}),
		"omap_rmkeys":     txn().OmapRmKeys(c, o, "k"),
		"omap_rmkeyrange": txn().OmapRmKeyRange(c, o, "a", "z"),
		"omap_clear":      txn().OmapClear(c, o),
		"omap_setheader":  txn().OmapSetHeader(c, o, []byte("h")),
		"move":            txn().Move(c, o, c, p),
	}
}

// creatingOps are the operations that create a missing object.
var creatingOps = map[string]bool{"touch": true, "write": true, "zero": true, "setattrs": true,
	"omap_setkeys": true, "omap_setheader": true}

func testMissingCollection(e *env) {
	e.setup(pgA)
	for name, t := range everyObjectOp(pgB, obj("x"), obj("y")) {
		if err := objectstore.Apply(e.ctx, e.s, t); !errors.Is(err, objectstore.ErrCollectionNotFound) {
			e.Errorf("%s in a missing collection: got %v, want ErrCollectionNotFound", name, err)
		}
	}
	e.apply(txn().Touch(pgA, obj("x")))
	e.applyErr(txn().Move(pgA, obj("x"), pgB, obj("x")), objectstore.ErrCollectionNotFound)
	reads := map[string]error{}
	_, reads["read"] = e.s.Read(e.ctx, pgB, obj("x"), 0, 0)
	_, reads["stat"] = e.s.Stat(e.ctx, pgB, obj("x"))
	_, reads["extentmap"] = e.s.ExtentMap(e.ctx, pgB, obj("x"), 0, 0)
	_, reads["getattr"] = e.s.GetAttr(e.ctx, pgB, obj("x"), "a")
	_, reads["getattrs"] = e.s.GetAttrs(e.ctx, pgB, obj("x"))
	_, reads["omap header"] = e.s.OmapGetHeader(e.ctx, pgB, obj("x"))
	_, reads["omap values"] = e.s.OmapGetValues(e.ctx, pgB, obj("x"), []string{"k"})
	_, _, reads["omap iterate"] = e.s.OmapIterate(e.ctx, pgB, obj("x"), "", "", 0)
	_, _, reads["list objects"] = e.s.ListObjects(e.ctx, pgB, objid.ID{}, 0)
	for name, err := range reads {
		if !errors.Is(err, objectstore.ErrCollectionNotFound) {
			e.Errorf("%s in a missing collection: got %v, want ErrCollectionNotFound", name, err)
		}
	}
}

func testMissingObject(e *env) {
	e.setup(pgA)
	for name, t := range everyObjectOp(pgA, obj("x"), obj("y")) {
		err := objectstore.Apply(e.ctx, e.s, t)
		if creatingOps[name] {
			e.wantErr(name+" of a missing object", err, nil)
			if !e.exists(pgA, obj("x")) {
				e.Errorf("%s did not create the object", name)
			}
			e.apply(txn().Remove(pgA, obj("x")))
			continue
		}
		if !errors.Is(err, objectstore.ErrNotFound) {
			e.Errorf("%s of a missing object: got %v, want ErrNotFound", name, err)
		}
		if len(e.list(pgA)) != 0 {
			e.Fatalf("failed %s left objects %v", name, e.list(pgA))
		}
	}
	reads := map[string]error{}
	_, reads["read"] = e.s.Read(e.ctx, pgA, obj("x"), 0, 0)
	_, reads["stat"] = e.s.Stat(e.ctx, pgA, obj("x"))
	_, reads["extentmap"] = e.s.ExtentMap(e.ctx, pgA, obj("x"), 0, 0)
	_, reads["getattr"] = e.s.GetAttr(e.ctx, pgA, obj("x"), "a")
	_, reads["getattrs"] = e.s.GetAttrs(e.ctx, pgA, obj("x"))
	_, reads["omap header"] = e.s.OmapGetHeader(e.ctx, pgA, obj("x"))
	_, reads["omap values"] = e.s.OmapGetValues(e.ctx, pgA, obj("x"), []string{"k"})
	_, _, reads["omap iterate"] = e.s.OmapIterate(e.ctx, pgA, obj("x"), "", "", 0)
	for name, err := range reads {
		if !errors.Is(err, objectstore.ErrNotFound) {
			e.Errorf("%s of a missing object: got %v, want ErrNotFound", name, err)
		}
	}
}

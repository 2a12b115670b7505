package storetest

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// testSplit checks SplitCollection: the objects whose hash's low bits
// match move with their data, attributes and omap, in hash order, and
// nothing else moves.
func testSplit(e *env) {
	child := objectstore.PGCollection(1, 4)
	e.setup(pgA, child, tmpA)
	var objs []objid.ID
	for i := range 40 {
		objs = append(objs, obj(fmt.Sprintf("o%d", i)))
	}
	meta := objid.Object(-2, "", "pgmeta.1.0") // another pool's object: never moves
	for i, o := range objs {
		e.fill(pgA, o, byte(i%10)) // wantFilled needs seeds below 10
	}
	e.fill(pgA, meta, 9)
	// An object written and one removed in the same transaction are seen
	// as the transaction leaves them.
	late, gone := obj("late"), objs[0]
	e.apply(txn().Write(pgA, late, 0, []byte("late")).Remove(pgA, gone).SplitCollection(pgA, child, 3, 4))
	var stay, moved []objid.ID
	for _, o := range append(objs[1:], late) {
		if o.Hash&7 == 4 {
			moved = append(moved, o)
		} else {
			stay = append(stay, o)
		}
	}
	if len(moved) == 0 || len(stay) == 0 {
		e.Fatalf("test objects do not exercise the split: %d move, %d stay", len(moved), len(stay))
	}
	sortIDs(moved)
	sortIDs(stay)
	if got := e.list(child); !slices.Equal(got, moved) {
		e.Fatalf("child holds %v, want %v", got, moved)
	}
	if got := e.list(pgA); !slices.Equal(got, sortedWith(stay, meta)) {
		e.Fatalf("parent holds %v, want %v", got, sortedWith(stay, meta))
	}
	for i, o := range objs[1:] {
		c := pgA
		if o.Hash&7 == 4 {
			c = child
		}
		e.wantFilled(c, o, byte((i+1)%10))
	}
	lateAt := pgA
	if late.Hash&7 == 4 {
		lateAt = child
	}
	e.wantData(lateAt, late, []byte("late"))
	e.wantFilled(pgA, meta, 9)
	// A split alone changes no space accounting.
	two := objectstore.PGCollection(1, 2)
	e.setup(two)
	before := e.statfs()
	e.apply(txn().SplitCollection(pgA, two, 3, 2))
	if n := len(e.list(two)); n == 0 {
		e.Fatalf("nothing moved to 1.2")
	}
	e.checkStats("after a split", before.Stored, before.PoolStored)
	// A second split of the child with a wider mask, queued behind an
	// unapplied write, sees that write.
	grand := objectstore.PGCollection(1, 0xc)
	e.setup(grand)
	extra := findObj(func(o objid.ID) bool { return o.Hash&15 == 0xc })
	c1, err := e.s.Queue(e.ctx, txn().Write(child, extra, 0, []byte("x")))
	if err != nil {
		e.Fatalf("queue: %v", err)
	}
	c2, err := e.s.Queue(e.ctx, txn().SplitCollection(child, grand, 4, 0xc))
	if err != nil {
		e.Fatalf("queue split: %v", err)
	}
	for _, c := range []*objectstore.Completion{c1, c2} {
		if err := c.Wait(e.ctx); err != nil {
			e.Fatalf("wait: %v", err)
		}
	}
	for _, o := range e.list(grand) {
		if o.Hash&15 != 0xc {
			e.Fatalf("%v (hash %#x) moved by a split of 0xc/4 bits", o, o.Hash)
		}
	}
	if !e.exists(grand, extra) || e.exists(child, extra) {
		e.Fatalf("the queued write's object did not move")
	}
	for _, o := range e.list(child) {
		if o.Hash&15 == 0xc {
			e.Fatalf("%v stayed behind", o)
		}
	}
	// Errors: missing collections, and splits Validate refuses.
	e.applyErr(txn().SplitCollection(pgA, pgB, 1, 1), objectstore.ErrCollectionNotFound)
	e.applyErr(txn().SplitCollection(pgB, pgA, 1, 1), objectstore.ErrCollectionNotFound)
	for name, t := range map[string]*objectstore.Transaction{
		"into itself":       txn().SplitCollection(pgA, pgA, 1, 1),
		"meta":              txn().SplitCollection(objectstore.MetaCollection, pgA, 1, 1),
		"across kinds":      txn().SplitCollection(pgA, tmpA, 1, 1),
		"value beyond bits": txn().SplitCollection(pgA, child, 2, 4),
		"too many bits":     txn().SplitCollection(pgA, child, 33, 0),
	} {
		if err := objectstore.Apply(e.ctx, e.s, t); err == nil {
			e.Errorf("split %s: applied", name)
		}
	}
	if got := e.list(child); len(got) == 0 {
		e.Fatalf("a refused split changed the child")
	}
}

// findObj returns the first test object name satisfying ok.
func findObj(ok func(objid.ID) bool) objid.ID {
	for i := 0; ; i++ {
		if o := obj(fmt.Sprintf("find%d", i)); ok(o) {
			return o
		}
	}
}

func sortIDs(ids []objid.ID) { slices.SortFunc(ids, objid.Compare) }

func sortedWith(ids []objid.ID, more ...objid.ID) []objid.ID {
	out := append(slices.Clone(ids), more...)
	sortIDs(out)
	return out
}

// testMerge checks MergeCollection, the inverse of a split: every object
// of the source's pool moves into the target with its data, the source's
// meta object (another pool's) stays, and the source, emptied of it in
// the same transaction, can be removed there too: one atomic merge.
func testMerge(e *env) {
	source := objectstore.PGCollection(1, 4)
	e.setup(pgA, source)
	var inTarget, inSource []objid.ID
	for i := range 30 {
		o := obj(fmt.Sprintf("m%d", i))
		if i%2 == 0 {
			inTarget = append(inTarget, o)
			e.fill(pgA, o, byte(i%10))
		} else {
			inSource = append(inSource, o)
			e.fill(source, o, byte(i%10))
		}
	}
	meta := objid.Object(-2, "", "pgmeta.1.4")
	e.fill(source, meta, 7)
	before := e.statfs()
	e.apply(txn().MergeCollection(source, pgA).Remove(source, meta).RemoveCollection(source))
	if e.collExists(source) {
		e.Fatalf("the merged source collection still exists")
	}
	want := sortedWith(inTarget, inSource...)
	if got := e.list(pgA); !slices.Equal(got, want) {
		e.Fatalf("target holds %v, want %v", got, want)
	}
	for i := range 30 {
		e.wantFilled(pgA, obj(fmt.Sprintf("m%d", i)), byte(i%10))
	}
	// Moving objects changes no space accounting beyond the meta object
	// removed.
	if after := e.statfs(); after.Stored > before.Stored {
		e.Fatalf("a merge grew the stored bytes: %d -> %d", before.Stored, after.Stored)
	}
	// A merge that fails (its target is missing) changes nothing.
	other := objectstore.PGCollection(1, 6)
	e.setup(other)
	e.fill(other, obj("keep"), 3)
	e.applyErr(txn().MergeCollection(other, pgB), objectstore.ErrCollectionNotFound)
	e.wantFilled(other, obj("keep"), 3)
	if err := objectstore.Apply(e.ctx, e.s, txn().MergeCollection(pgA, pgA)); err == nil {
		e.Errorf("a merge into itself applied")
	}
}

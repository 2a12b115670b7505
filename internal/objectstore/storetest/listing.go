package storetest

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// manyObjects returns n distinct objects spread over hashes, pools
// (negative included), namespaces, locator keys and snapshots, sorted
// by objid.Compare.
func manyObjects(n int) []objid.ID {
	out := make([]objid.ID, 0, n)
	for i := range n {
		pool := int64(i%3) - 1 // -1, 0, 1
		ns := []string{"", "", "ns"}[i%3]
		key := ""
		if i%7 == 0 {
			key = fmt.Sprintf("key%d", i%5) // several objects share a locator
		}
		snap := objid.NoSnap
		if i%11 == 0 {
			snap = uint64(i % 4)
		}
		out = append(out, objid.New(pool, ns, key, fmt.Sprintf("obj.%d", i), snap))
	}
	slices.SortFunc(out, objid.Compare)
	return out
}

// createAll creates the objects in c, 500 to a transaction, in an order
// unrelated to the hash order.
func (e *env) createAll(c objectstore.CollectionID, objs []objid.ID) {
	e.Helper()
	t := txn()
	for i := range objs {
		t.Touch(c, objs[(i*7919)%len(objs)])
		if len(t.Ops) == 500 || i == len(objs)-1 {
			e.apply(t)
			t = txn()
		}
	}
}

func testListOrder(e *env) {
	e.setup(pgA, pgB)
	objs := manyObjects(3000)
	e.createAll(pgA, objs)
	e.apply(txn().Touch(pgB, objs[0]))
	if got := e.list(pgA); !slices.Equal(got, objs) {
		e.Fatalf("listed %d objects, not in objid.Compare order or not all of %d", len(got), len(objs))
	}
	if got := e.list(pgB); len(got) != 1 {
		e.Fatalf("%v lists %v", pgB, got)
	}
	// Removing every other object keeps the order.
	t := txn()
	for i := 0; i < len(objs); i += 2 {
		t.Remove(pgA, objs[i])
	}
	e.apply(t)
	var odd []objid.ID
	for i := 1; i < len(objs); i += 2 {
		odd = append(odd, objs[i])
	}
	if got := e.list(pgA); !slices.Equal(got, odd) {
		e.Fatalf("after removals: %d objects listed, want %d", len(got), len(odd))
	}
	if got, next, err := e.s.ListObjects(e.ctx, objectstore.PGCollection(5, 5), objid.ID{}, 10); err == nil {
		e.Fatalf("listing a missing collection: %v %v", got, next)
	}
}

func testListCursors(e *env) {
	e.setup(pgA, pgB)
	objs := manyObjects(1000)
	e.createAll(pgA, objs)
	for _, limit := range []int{1, 7, 100, 999, 1000, 1001} {
		var got []objid.ID
		start := objid.ID{}
		for calls := 0; ; calls++ {
			page, next, err := e.s.ListObjects(e.ctx, pgA, start, limit)
			if err != nil || len(page) > limit || calls > len(objs)+1 {
				e.Fatalf("limit %d: page of %d, err %v, after %d calls", limit, len(page), err, calls)
			}
			got = append(got, page...)
			if next.IsMax() {
				break
			}
			if len(page) != limit {
				e.Fatalf("limit %d: short page of %d but next %v", limit, len(page), next)
			}
			start = next
		}
		if !slices.Equal(got, objs) {
			e.Fatalf("limit %d: pages joined give %d objects, want %d in order", limit, len(got), len(objs))
		}
	}
	// The cursor of a full last page is Max.
	if _, next, _ := e.s.ListObjects(e.ctx, pgA, objs[len(objs)-10], 10); !next.IsMax() {
		e.Fatalf("exactly the last 10: next %v, want MAX", next)
	}
	// A start that is not an object, in the middle of the order.
	mid := objs[500]
	between := objid.ID{Pool: mid.Pool, Hash: mid.Hash} // sorts before every object with mid's hash
	page, next, err := e.s.ListObjects(e.ctx, pgA, between, 3)
	i := slices.IndexFunc(objs, func(o objid.ID) bool { return objid.Compare(o, between) >= 0 })
	if err != nil || !slices.Equal(page, objs[i:i+3]) || next != objs[i+3] {
		e.Fatalf("from %v: %v next %v err %v, want %v", between, page, next, err, objs[i:i+4])
	}
	if page, next, err := e.s.ListObjects(e.ctx, pgA, objid.Max(), 10); err != nil || len(page) != 0 || !next.IsMax() {
		e.Fatalf("from MAX: %v next %v err %v", page, next, err)
	}
	if page, next, err := e.s.ListObjects(e.ctx, pgB, objid.ID{}, 10); err != nil || len(page) != 0 || !next.IsMax() {
		e.Fatalf("empty collection: %v next %v err %v", page, next, err)
	}
	// The zero start lists objects of negative pools too.
	if page, _, _ := e.s.ListObjects(e.ctx, pgA, objid.ID{}, 1); len(page) != 1 || page[0].Pool != -1 {
		e.Fatalf("zero start: first object %v, want one of pool -1", page)
	}
	// A cursor stays valid when objects around it change.
	_, next, _ = e.s.ListObjects(e.ctx, pgA, objid.ID{}, 100)
	e.apply(txn().Remove(pgA, objs[99]).Remove(pgA, objs[100]).Remove(pgA, objs[101]))
	if page, _, _ := e.s.ListObjects(e.ctx, pgA, next, 1); len(page) != 1 || page[0] != objs[102] {
		e.Fatalf("after removing the cursor's object: %v, want %v", page, objs[102])
	}
}

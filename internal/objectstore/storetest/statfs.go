package storetest

import (
	"errors"
	"maps"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// checkStats checks the invariants every FSStats must satisfy and the
// stored bytes the suite expects.
func (e *env) checkStats(what string, stored uint64, pools map[int64]uint64) objectstore.FSStats {
	e.Helper()
	st := e.statfs()
	if st.Stored != stored || !maps.Equal(st.PoolStored, pools) && len(st.PoolStored)+len(pools) > 0 {
		e.Fatalf("%s: stored %d pools %v, want %d %v", what, st.Stored, st.PoolStored, stored, pools)
	}
	if st.Allocated < st.Stored || st.Allocated+st.Available > st.Total {
		e.Fatalf("%s: inconsistent %+v", what, st)
	}
	return st
}

func testStatFS(e *env) {
	meta := objectstore.MetaCollection
	pg2 := objectstore.PGCollection(2, 0)
	e.setup(meta, pgA, tmpA, pg2)
	base := e.checkStats("empty", 0, nil)
	e.apply(txn().Write(pgA, obj("a"), 0, pattern(1, 10)).Write(tmpA, obj("b"), P, pattern(2, 2*P)).
		Write(pg2, obj("c"), 5*P, pattern(3, 1)).Write(meta, obj("m"), 0, pattern(4, 100)))
	// a: 10 bytes; b: pages 1 and 2; c: one byte of page 5; m: 100 bytes.
	st := e.checkStats("written", 10+2*P+1+100, map[int64]uint64{1: 10 + 2*P, 2: 1})
	if st.Total != base.Total || st.Available >= base.Available {
		e.Fatalf("written: total %d→%d, available %d→%d", base.Total, st.Total, base.Available, st.Available)
	}
	e.apply(txn().SetAttr(pgA, obj("a"), "x", pattern(5, 1000)).OmapSetKeys(pgA, obj("a"), map[string][]byte{"k": pattern(6, 1000)}))
	e.checkStats("metadata is not stored data", 10+2*P+1+100, map[int64]uint64{1: 10 + 2*P, 2: 1})
	e.apply(txn().Clone(pgA, obj("a"), obj("a2")).Zero(tmpA, obj("b"), P, P).Truncate(pg2, obj("c"), 5*P))
	e.checkStats("clone, zero, truncate", 20+P+100, map[int64]uint64{1: 20 + P})
	e.apply(txn().Truncate(pgA, obj("a"), 2*P))
	e.checkStats("extending truncate shows the rest of the page", P+10+P+100, map[int64]uint64{1: P + 10 + P})
	e.apply(txn().Remove(pgA, obj("a")).Remove(pgA, obj("a2")).Remove(tmpA, obj("b")).Remove(pg2, obj("c")).Remove(meta, obj("m")))
	e.checkStats("removed", 0, nil)
}

// testNoSpace fills a small store; on a store with more than 1 GiB
// available it is skipped (open a small store to run it).
func testNoSpace(e *env) {
	e.setup(pgA)
	st := e.statfs()
	if st.Available > 1<<30 {
		e.Skipf("%d bytes available; open a store of at most 1 GiB to test ErrNoSpace", st.Available)
	}
	chunk := pattern(1, 1<<20)
	fill := func(o string, n uint64) *objectstore.Transaction {
		t := txn()
		for off := uint64(0); off < n; off += uint64(len(chunk)) {
			t.Write(pgA, obj(o), off, chunk[:min(uint64(len(chunk)), n-off)])
		}
		return t
	}
	e.apply(txn().Write(pgA, obj("small"), 0, []byte("x")))
	before := e.dump()
	err := objectstore.Apply(e.ctx, e.s, fill("big", st.Available+(4<<20)).Touch(pgA, obj("after")))
	if !errors.Is(err, objectstore.ErrNoSpace) {
		e.Fatalf("writing more than available: %v, want ErrNoSpace", err)
	}
	if after := e.dump(); after != before {
		e.Fatalf("a transaction that ran out of space changed the store:\n%s", diffDumps(before, after))
	}
	// Space comes back when it is freed.
	half := st.Available / 2
	e.apply(fill("half", half))
	e.apply(txn().Remove(pgA, obj("half")))
	e.apply(fill("half", half))
}

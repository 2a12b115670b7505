package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

func testValidate(e *env) {
	e.setup(pgA)
	long := objid.Object(1, "", strings.Repeat("n", objid.MaxNameLen+1))
	for name, t := range map[string]*objectstore.Transaction{
		"unknown op":          {Ops: []objectstore.Op{{Code: 0, Collection: pgA, Object: obj("o")}}},
		"op past the last":    {Ops: []objectstore.Op{{Code: objectstore.OpMove + 1, Collection: pgA, Object: obj("o")}}},
		"bad collection kind": txn().Touch(objectstore.CollectionID{Kind: 9}, obj("o")),
		"meta with a pool":    txn().CreateCollection(objectstore.CollectionID{Kind: objectstore.KindMeta, Pool: 3}),
		"negative pool":       txn().CreateCollection(objectstore.PGCollection(-1, 0)),
		"write past max":      txn().Write(pgA, obj("o"), objectstore.MaxObjectSize-1, []byte("ab")),
		"zero past max":       txn().Zero(pgA, obj("o"), 1, objectstore.MaxObjectSize),
		"zero overflow":       txn().Zero(pgA, obj("o"), ^uint64(0), 2),
		"truncate past max":   txn().Truncate(pgA, obj("o"), objectstore.MaxObjectSize+1),
		"clone_range past":    txn().CloneRange(pgA, obj("o"), obj("p"), 0, 10, objectstore.MaxObjectSize-5),
		"long name":           txn().Touch(pgA, long),
		"long destination":    txn().Clone(pgA, obj("o"), long),
		"max object":          txn().Touch(pgA, objid.Max()),
		"max destination":     txn().Touch(pgA, obj("o")).Move(pgA, obj("o"), pgA, objid.Max()),
		"bad move collection": txn().Touch(pgA, obj("o")).Move(pgA, obj("o"), objectstore.CollectionID{Kind: 7}, obj("p")),
		"valid ops first":     txn().Touch(pgA, obj("o")).Write(pgA, obj("o"), objectstore.MaxObjectSize, []byte("x")),
	} {
		if _, err := e.s.Queue(e.ctx, t); !errors.Is(err, objectstore.ErrInvalid) {
			e.Errorf("%s: Queue returned %v, want ErrInvalid", name, err)
		}
	}
	if objs := e.list(pgA); len(objs) != 0 {
		e.Fatalf("invalid transactions created %v", objs)
	}
	if cs := e.collections(); len(cs) != 1 {
		e.Fatalf("invalid transactions changed collections: %v", cs)
	}
}

// testAtomicity: for each way an operation can fail, a transaction whose
// fifth operation fails leaves no trace of the first four.
// (Reference: objectstore.Transaction, "applied all or nothing".)
func testAtomicity(e *env) {
	e.setup(pgA, pgB)
	e.fill(pgA, obj("a"), 1)
	e.apply(txn().Touch(pgA, obj("c")).Write(pgB, obj("full"), 0, []byte("x")))
	before := e.dump()
	for name, bad := range map[string]*objectstore.Transaction{
		"remove missing":            txn().Remove(pgA, obj("missing")),
		"create existing coll":      txn().CreateCollection(pgB),
		"remove non-empty coll":     txn().RemoveCollection(pgB),
		"remove missing coll":       txn().RemoveCollection(objectstore.PGCollection(9, 9)),
		"truncate missing":          txn().Truncate(pgA, obj("missing"), 0),
		"clone missing":             txn().Clone(pgA, obj("missing"), obj("a")),
		"clone_range past source":   txn().CloneRange(pgA, obj("a"), obj("b"), 0, 1<<20, 0),
		"move to missing coll":      txn().Move(pgA, obj("a"), pgC, obj("a")),
		"rmattr missing":            txn().RmAttr(pgA, obj("missing"), "x"),
		"omap_clear missing":        txn().OmapClear(pgA, obj("missing")),
		"write in missing coll":     txn().Write(pgC, obj("a"), 0, []byte("x")),
		"create what op 4 created":  txn().CreateCollection(tmpA),
		"remove what op 3 removed":  txn().Remove(pgA, obj("c")),
		"remove what op 1 made too": txn().Remove(pgA, obj("b")).Remove(pgA, obj("b")),
	} {
		t := txn().Write(pgA, obj("a"), 5, []byte("changed")).
			SetAttr(pgA, obj("b"), "new", []byte("b")).
			Remove(pgA, obj("c")).
			CreateCollection(tmpA)
		t.Ops = append(t.Ops, bad.Ops...)
		if err := objectstore.Apply(e.ctx, e.s, t); err == nil {
			e.Errorf("%s: transaction succeeded", name)
			continue
		}
		if after := e.dump(); after != before {
			e.Fatalf("%s: failed transaction changed the store:\n%s", name, diffDumps(before, after))
		}
	}
}

func testOpsSeeEarlier(e *env) {
	e.setup(pgA)
	e.apply(txn().CreateCollection(tmpA).Write(tmpA, obj("o"), 0, []byte("hello")).
		Clone(tmpA, obj("o"), obj("p")).Write(tmpA, obj("p"), 5, []byte(" world")).
		Move(tmpA, obj("p"), pgA, obj("q")).Remove(tmpA, obj("o")).RemoveCollection(tmpA).
		Touch(pgA, obj("r")).Remove(pgA, obj("r")).Touch(pgA, obj("r")))
	e.wantData(pgA, obj("q"), []byte("hello world"))
	if e.collExists(tmpA) || !e.exists(pgA, obj("r")) {
		e.Fatalf("ops did not see earlier ops")
	}
}

// testQueueOrder queues a chain of transactions, each of which needs the
// previous one, without waiting, then waits for them all.
func testQueueOrder(e *env) {
	e.setup(pgA)
	const n = 200
	name := func(i int) objid.ID { return obj(fmt.Sprintf("chain.%d", i)) }
	e.apply(txn().Touch(pgA, name(0)))
	comps := make([]*objectstore.Completion, 0, n)
	for i := 1; i <= n; i++ {
		c, err := e.s.Queue(e.ctx, txn().Remove(pgA, name(i-1)).Touch(pgA, name(i)).
			Write(pgA, obj("counter"), 0, []byte(fmt.Sprintf("%08d", i))))
		if err != nil {
			e.Fatalf("queue %d: %v", i, err)
		}
		comps = append(comps, c)
	}
	for i, c := range comps {
		if err := c.Wait(e.ctx); err != nil {
			e.Fatalf("transaction %d: %v", i+1, err)
		}
	}
	if objs := e.list(pgA); len(objs) != 2 {
		e.Fatalf("after the chain: %v", objs)
	}
	e.wantData(pgA, obj("counter"), []byte(fmt.Sprintf("%08d", n)))
}

func testCompletion(e *env) {
	e.setup(pgA)
	c, err := e.s.Queue(e.ctx, txn().Write(pgA, obj("o"), 0, []byte("x")))
	if err != nil {
		e.Fatalf("queue: %v", err)
	}
	if err := c.WaitApplied(e.ctx); err != nil {
		e.Fatalf("wait applied: %v", err)
	}
	e.wantData(pgA, obj("o"), []byte("x")) // applied means visible
	<-c.Applied()
	if err := c.Wait(e.ctx); err != nil || c.Err() != nil {
		e.Fatalf("wait: %v, err %v", err, c.Err())
	}
	<-c.Committed()
	if c, err = e.s.Queue(e.ctx, txn()); err != nil {
		e.Fatalf("queue empty transaction: %v", err)
	}
	if err := c.Wait(e.ctx); err != nil {
		e.Fatalf("empty transaction: %v", err)
	}
}

func testCanceledContext(e *env) {
	e.setup(pgA)
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if _, err := e.s.Queue(ctx, txn().Touch(pgA, obj("o"))); !errors.Is(err, context.Canceled) {
		e.Fatalf("queue with a canceled context: %v", err)
	}
	if e.exists(pgA, obj("o")) {
		e.Fatalf("a canceled queue applied its transaction")
	}
}

func testNoAliasing(e *env) {
	e.setup(pgA)
	o := obj("o")
	data, attrs, kv, hdr := []byte("data"), map[string][]byte{"a": []byte("attr")}, map[string][]byte{"k": []byte("val")}, []byte("hdr")
	e.apply(txn().Write(pgA, o, 0, data).SetAttrs(pgA, o, attrs).OmapSetKeys(pgA, o, kv).OmapSetHeader(pgA, o, hdr))
	copy(data, "XXXX")
	attrs["a"][0], attrs["b"] = 'X', nil
	kv["k"][0] = 'X'
	hdr[0] = 'X'
	check := func(when string) {
		e.Helper()
		a, _ := e.s.GetAttrs(e.ctx, pgA, o)
		vals, _ := e.s.OmapGetValues(e.ctx, pgA, o, []string{"k"})
		h, _ := e.s.OmapGetHeader(e.ctx, pgA, o)
		if got := e.read(pgA, o, 0, 0); string(got) != "data" || string(a["a"]) != "attr" || len(a) != 1 ||
			string(vals["k"]) != "val" || string(h) != "hdr" {
			e.Fatalf("%s: data %q attrs %q omap %q header %q", when, got, a, vals, h)
		}
	}
	check("after changing the transaction's buffers")
	b := e.read(pgA, o, 0, 0)
	b[0] = 'X'
	a, _ := e.s.GetAttrs(e.ctx, pgA, o)
	a["a"][0] = 'X'
	v, _ := e.s.GetAttr(e.ctx, pgA, o, "a")
	v[0] = 'X'
	vals, _ := e.s.OmapGetValues(e.ctx, pgA, o, []string{"k"})
	vals["k"][0] = 'X'
	kvs, _, _ := e.s.OmapIterate(e.ctx, pgA, o, "", "", 0)
	kvs[0].Value[0] = 'X'
	h, _ := e.s.OmapGetHeader(e.ctx, pgA, o)
	h[0] = 'X'
	check("after changing returned buffers")
	// A clone shares nothing visible with its source.
	e.apply(txn().Clone(pgA, o, obj("c")).Write(pgA, o, 0, []byte("DA")))
	if got := e.read(pgA, obj("c"), 0, 0); !bytes.Equal(got, []byte("data")) {
		e.Fatalf("clone changed with its source: %q", got)
	}
	// What a read returned is the caller's for good: later writes,
	// small and large, in place or not, leave it as it was read. (An OSD
	// sends read data from that buffer, and may send it again.)
	big := obj("big")
	e.apply(txn().Write(pgA, big, 0, pattern(1, 256<<10)))
	keptBig, keptSmall := e.read(pgA, big, 0, 0), e.read(pgA, big, 4096, 100)
	e.apply(txn().Write(pgA, big, 0, pattern(2, 256<<10)))
	e.apply(txn().Write(pgA, big, 4096, pattern(3, 100)))
	e.apply(txn().Truncate(pgA, big, 0).Write(pgA, big, 0, pattern(4, 128<<10)))
	if !bytes.Equal(keptBig, pattern(1, 256<<10)) || !bytes.Equal(keptSmall, pattern(1, 256<<10)[4096:4196]) {
		e.Fatal("a buffer a read returned changed with later writes")
	}
}

package storetest

import (
	"bytes"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// fill gives o data (with a hole), attributes, omap and a header, all
// derived from seed.
func (e *env) fill(c objectstore.CollectionID, o objid.ID, seed byte) {
	e.Helper()
	e.apply(txn().Write(c, o, 0, pattern(seed, 100)).Write(c, o, 3*P, pattern(seed, 10)).
		SetAttr(c, o, "attr", []byte{seed}).OmapSetKeys(c, o, map[string][]byte{"k": {seed}, string(rune('a' + seed)): {}}).
		OmapSetHeader(c, o, []byte{seed, seed}))
}

// wantFilled requires o to hold what fill(seed) wrote.
func (e *env) wantFilled(c objectstore.CollectionID, o objid.ID, seed byte) {
	e.Helper()
	var d dense
	d.write(0, pattern(seed, 100))
	d.write(3*P, pattern(seed, 10))
	e.wantData(c, o, d)
	exts, err := e.s.ExtentMap(e.ctx, c, o, 0, 0)
	if err != nil || len(exts) != 2 || exts[0] != ext(0, P) || exts[1] != ext(3*P, 10) {
		e.Fatalf("extents %v %v", exts, err)
	}
	attrs, err := e.s.GetAttrs(e.ctx, c, o)
	if err != nil || !equalValues(attrs, map[string][]byte{"attr": {seed}}) {
		e.Fatalf("attrs %v %v", attrs, err)
	}
	kvs, _, err := e.s.OmapIterate(e.ctx, c, o, "", "", 0)
	want := []objectstore.KV{{Key: string(rune('a' + seed)), Value: []byte{}}, {Key: "k", Value: []byte{seed}}}
	if err != nil || len(kvs) != 2 || kvs[0].Key != want[0].Key || kvs[1].Key != "k" || !bytes.Equal(kvs[1].Value, want[1].Value) {
		e.Fatalf("omap %v %v, want %v", kvs, err, want)
	}
	if h, err := e.s.OmapGetHeader(e.ctx, c, o); err != nil || !bytes.Equal(h, []byte{seed, seed}) {
		e.Fatalf("header %v %v", h, err)
	}
}

func testClone(e *env) {
	e.setup(pgA)
	e.fill(pgA, obj("src"), 1)
	e.apply(txn().Clone(pgA, obj("src"), obj("dst")))
	e.wantFilled(pgA, obj("dst"), 1)
	// The clone is independent of its source.
	e.apply(txn().Write(pgA, obj("src"), 0, []byte("changed")).SetAttr(pgA, obj("src"), "new", nil))
	e.wantFilled(pgA, obj("dst"), 1)
	// Clone replaces every part of an existing destination.
	e.fill(pgA, obj("other"), 2)
	e.apply(txn().Write(pgA, obj("other"), 10*P, []byte("x")).SetAttr(pgA, obj("other"), "extra", nil).
		Clone(pgA, obj("dst"), obj("other")))
	e.wantFilled(pgA, obj("other"), 1)
	e.apply(txn().Clone(pgA, obj("dst"), obj("dst")))
	e.wantFilled(pgA, obj("dst"), 1)
	e.applyErr(txn().Clone(pgA, obj("missing"), obj("dst")), objectstore.ErrNotFound)
	e.wantFilled(pgA, obj("dst"), 1)
}

// cloneRangeCase copies within or between objects "s" and "d" after
// writing them, and checks d against a dense model and an extent map.
type cloneRangeCase struct {
	name                   string
	srcWrites, dstWrites   []dataStep
	srcOff, length, dstOff uint64
	self                   bool // copy within s
	extents                []objectstore.Extent
}

func testCloneRange(e *env) {
	e.setup(pgA)
	for _, c := range []cloneRangeCase{
		{name: "basic", srcWrites: []dataStep{w(0, 100)}, srcOff: 10, length: 50, dstOff: 0, extents: []objectstore.Extent{ext(0, 50)}},
		{name: "into existing", srcWrites: []dataStep{w(0, 100)}, dstWrites: []dataStep{w(0, 200)}, srcOff: 0, length: 100, dstOff: 50,
			extents: []objectstore.Extent{ext(0, 200)}},
		{name: "holes stay holes", srcWrites: []dataStep{w(0, 10), w(3*P, 10)}, dstWrites: []dataStep{w(0, 5*P)},
			srcOff: 0, length: 3*P + 10, dstOff: P, extents: []objectstore.Extent{ext(0, 2*P), ext(4*P, P)}},
		{name: "unaligned", srcWrites: []dataStep{w(2*P, 20)}, srcOff: 2*P + 5, length: 10, dstOff: P - 5,
			extents: []objectstore.Extent{ext(0, P+5)}},
		{name: "extends dst", srcWrites: []dataStep{w(0, 10)}, dstWrites: []dataStep{w(0, 1)}, srcOff: 0, length: 10, dstOff: 4 * P,
			extents: []objectstore.Extent{ext(0, P), ext(4*P, 10)}},
		{name: "zero length", srcWrites: []dataStep{w(0, 10)}, srcOff: 10, length: 0, dstOff: 100, extents: []objectstore.Extent{}},
		{name: "hole source", srcWrites: []dataStep{w(4*P, 1)}, dstWrites: []dataStep{w(0, 2*P)}, srcOff: 0, length: 2 * P, dstOff: 0,
			extents: []objectstore.Extent{}},
		{name: "overlap forward", self: true, srcWrites: []dataStep{w(0, 300)}, srcOff: 0, length: 200, dstOff: 50,
			extents: []objectstore.Extent{ext(0, 300)}},
		{name: "overlap backward", self: true, srcWrites: []dataStep{w(0, 2*P)}, srcOff: 100, length: P, dstOff: 0,
			extents: []objectstore.Extent{ext(0, 2*P)}},
	} {
		var s, d dense
		t := txn()
		for i, st := range c.srcWrites {
			b := pattern(byte(i+1), int(st.len))
			t.Write(pgA, obj("s"), st.off, b)
			s.write(st.off, b)
		}
		for i, st := range c.dstWrites {
			b := pattern(byte(i+50), int(st.len))
			t.Write(pgA, obj("d"), st.off, b)
			d.write(st.off, b)
		}
		dst := obj("d")
		if c.self {
			dst, d = obj("s"), s
		}
		e.apply(t)
		e.apply(txn().CloneRange(pgA, obj("s"), dst, c.srcOff, c.length, c.dstOff))
		d.write(c.dstOff, bytes.Clone(s[c.srcOff:c.srcOff+c.length]))
		e.wantData(pgA, dst, d)
		got, _ := e.s.ExtentMap(e.ctx, pgA, dst, 0, 0)
		if (len(got) > 0 || len(c.extents) > 0) && !equalExtents(got, c.extents) {
			e.Errorf("%s: extents %v, want %v", c.name, got, c.extents)
		}
		e.apply(txn().Remove(pgA, obj("s")))
		if !c.self {
			e.apply(txn().Remove(pgA, obj("d")))
		}
	}
	e.apply(txn().Write(pgA, obj("s"), 0, pattern(1, 100)))
	e.applyErr(txn().CloneRange(pgA, obj("s"), obj("d"), 50, 51, 0), objectstore.ErrInvalid)
	e.applyErr(txn().CloneRange(pgA, obj("s"), obj("d"), 101, 0, 0), objectstore.ErrInvalid)
	e.applyErr(txn().CloneRange(pgA, obj("missing"), obj("d"), 0, 0, 0), objectstore.ErrNotFound)
	if e.exists(pgA, obj("d")) {
		e.Fatalf("failed clone_range created its destination")
	}
}

func equalExtents(a, b []objectstore.Extent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func testMove(e *env) {
	e.setup(pgA, tmpA)
	e.fill(tmpA, obj("a"), 1)
	e.fill(pgA, obj("b"), 2)
	e.apply(txn().SetAttr(pgA, obj("b"), "extra", nil).Move(tmpA, obj("a"), pgA, obj("b")))
	e.wantFilled(pgA, obj("b"), 1)
	if e.exists(tmpA, obj("a")) {
		e.Fatalf("moved object still at its source")
	}
	e.apply(txn().Move(pgA, obj("b"), pgA, obj("c")))
	e.wantFilled(pgA, obj("c"), 1)
	if objs := e.list(pgA); len(objs) != 1 || objs[0] != obj("c") {
		e.Fatalf("after rename: %v", objs)
	}
	e.apply(txn().Move(pgA, obj("c"), pgA, obj("c")))
	e.wantFilled(pgA, obj("c"), 1)
	e.applyErr(txn().Move(tmpA, obj("a"), pgA, obj("c")), objectstore.ErrNotFound)
	e.applyErr(txn().Move(pgA, obj("c"), pgB, obj("c")), objectstore.ErrCollectionNotFound)
	// A moved object can be changed again in the same transaction.
	e.apply(txn().Move(pgA, obj("c"), tmpA, obj("x")).Write(tmpA, obj("x"), 0, []byte("new")).Move(tmpA, obj("x"), pgA, obj("y")))
	if got := e.read(pgA, obj("y"), 0, 3); string(got) != "new" || e.exists(tmpA, obj("x")) || e.exists(pgA, obj("c")) {
		e.Fatalf("move chain: read %q", got)
	}
}

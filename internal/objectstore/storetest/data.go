package storetest

import (
	"bytes"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// dense is a plain byte-slice model of one object's data for the tables.
type dense []byte

func (d *dense) grow(n uint64) {
	if uint64(len(*d)) < n {
		*d = append(*d, make([]byte, n-uint64(len(*d)))...)
	}
}

func (d *dense) write(off uint64, b []byte) { d.grow(off + uint64(len(b))); copy((*d)[off:], b) }
func (d *dense) zero(off, n uint64)         { d.grow(off + n); clear((*d)[off : off+n]) }
func (d *dense) truncate(n uint64) {
	if n < uint64(len(*d)) {
		*d = (*d)[:n]
	}
	d.grow(n)
}

// dataStep is one operation of a data table: write (data != nil or
// write set), zero, or truncate.
type dataStep struct {
	op       string // "write", "zero", "truncate"
	off, len uint64
}

func (s dataStep) apply(t *objectstore.Transaction, d *dense, seed byte) {
	o := obj("o")
	switch s.op {
	case "write":
		b := pattern(seed, int(s.len))
		t.Write(pgA, o, s.off, b)
		d.write(s.off, b)
	case "zero":
		t.Zero(pgA, o, s.off, s.len)
		d.zero(s.off, s.len)
	case "truncate":
		t.Truncate(pgA, o, s.off)
		d.truncate(s.off)
	}
}

// runDataTable applies each case's steps, one transaction per step, and
// checks the content, size and (when given) the extent map.
func runDataTable(e *env, cases []dataCase) {
	for _, tc := range cases {
		e.Run(tc.name, func(t *testing.T) {
			e := &env{T: t, s: e.s, ctx: e.ctx}
			var d dense
			e.apply(txn().Touch(pgA, obj("o")))
			for i, st := range tc.steps {
				tr := txn()
				st.apply(tr, &d, byte(i+1))
				e.apply(tr)
			}
			e.wantData(pgA, obj("o"), d)
			if tc.extents != nil {
				e.wantExtents(obj("o"), tc.extents)
			}
			e.apply(txn().Remove(pgA, obj("o")))
		})
	}
}

type dataCase struct {
	name    string
	steps   []dataStep
	extents []objectstore.Extent // nil: not checked; empty: no extents
}

func (e *env) wantExtents(o objid.ID, want []objectstore.Extent) {
	e.Helper()
	got, err := e.s.ExtentMap(e.ctx, pgA, o, 0, 0)
	if err != nil {
		e.Fatalf("extent map: %v", err)
	}
	if len(got) != 0 || len(want) != 0 {
		if !slices.Equal(got, want) {
			e.Fatalf("extent map %v, want %v", got, want)
		}
	}
	var sum uint64
	for _, x := range want {
		sum += x.Length
	}
	if st := e.stat(pgA, o); st.Allocated != sum {
		e.Fatalf("stat allocated %d, want %d (the extent map's total)", st.Allocated, sum)
	}
}

func w(off, n uint64) dataStep             { return dataStep{"write", off, n} }
func z(off, n uint64) dataStep             { return dataStep{"zero", off, n} }
func tr(size uint64) dataStep              { return dataStep{"truncate", size, 0} }
func ext(off, n uint64) objectstore.Extent { return objectstore.Extent{Offset: off, Length: n} }

const P = PageSize

func testWriteRead(e *env) {
	e.setup(pgA)
	runDataTable(e, []dataCase{
		{name: "small", steps: []dataStep{w(0, 10)}, extents: []objectstore.Extent{ext(0, 10)}},
		{name: "overwrite middle", steps: []dataStep{w(0, 100), w(40, 20)}},
		{name: "extend", steps: []dataStep{w(0, 100), w(90, 50)}},
		{name: "hole before", steps: []dataStep{w(3*P+5, 10)}, extents: []objectstore.Extent{ext(3*P, 15)}},
		{name: "across pages", steps: []dataStep{w(P-3, 6)}, extents: []objectstore.Extent{ext(0, P+3)}},
		{name: "many pages", steps: []dataStep{w(100, 5*P)}, extents: []objectstore.Extent{ext(0, 5*P+100)}},
		{name: "zero-length write extends", steps: []dataStep{w(0, 10), w(2*P, 0)}, extents: []objectstore.Extent{ext(0, P)}},
		{name: "zero-length write below size", steps: []dataStep{w(0, 10), w(5, 0)}},
		{name: "two runs", steps: []dataStep{w(0, 1), w(2*P, 1)}, extents: []objectstore.Extent{ext(0, P), ext(2*P, 1)}},
		{name: "adjacent pages merge", steps: []dataStep{w(P, 1), w(0, 1), w(2*P, 1)}, extents: []objectstore.Extent{ext(0, 2*P+1)}},
	})
}

func testReadRanges(e *env) {
	e.setup(pgA)
	data := pattern(3, 3*P+100)
	e.apply(txn().Write(pgA, obj("o"), 0, data).Write(pgA, obj("h"), 2*P, []byte("x")))
	size := uint64(len(data))
	for _, c := range []struct{ off, n uint64 }{
		{0, 0}, {0, 1}, {5, 10}, {P - 1, 2}, {P, P}, {size - 1, 0}, {size - 1, 100}, {size, 0}, {size, 10},
		{size + 1, 10}, {1 << 39, 1}, {10, ^uint64(0)}, {^uint64(0), 5},
	} {
		want := []byte{}
		if c.off < size {
			end := size
			if c.n != 0 && c.n < size-c.off {
				end = c.off + c.n
			}
			want = data[c.off:end]
		}
		if got := e.read(pgA, obj("o"), c.off, c.n); !bytes.Equal(got, want) {
			e.Errorf("read %d+%d: got %d bytes, want %d", c.off, c.n, len(got), len(want))
		}
	}
	want := make([]byte, 2*P+1)
	want[2*P] = 'x'
	e.wantData(pgA, obj("h"), want)
	if got := e.read(pgA, obj("h"), P, 10); !bytes.Equal(got, make([]byte, 10)) {
		e.Errorf("hole read %x, want zeros", got)
	}
}

func testZero(e *env) {
	e.setup(pgA)
	runDataTable(e, []dataCase{
		{name: "inside page", steps: []dataStep{w(0, 100), z(10, 20)}, extents: []objectstore.Extent{ext(0, 100)}},
		{name: "whole pages freed", steps: []dataStep{w(0, 4*P), z(P, 2*P)}, extents: []objectstore.Extent{ext(0, P), ext(3*P, P)}},
		{name: "partial edges kept", steps: []dataStep{w(0, 4*P), z(P-1, 2*P+2)}, extents: []objectstore.Extent{ext(0, P), ext(3*P, P)}},
		{name: "extends", steps: []dataStep{w(0, 10), z(5, 3*P)}, extents: []objectstore.Extent{ext(0, P)}},
		{name: "past end", steps: []dataStep{w(0, 10), z(2*P, P)}, extents: []objectstore.Extent{ext(0, P)}},
		{name: "zero length extends", steps: []dataStep{w(0, 10), z(100, 0)}, extents: []objectstore.Extent{ext(0, 100)}},
		{name: "everything", steps: []dataStep{w(0, 3*P), z(0, 3*P)}, extents: []objectstore.Extent{}},
		{name: "tail page partly", steps: []dataStep{w(0, 2*P), z(0, P+5)}, extents: []objectstore.Extent{ext(P, P)}},
		{name: "then write", steps: []dataStep{w(0, 3*P), z(0, 3*P), w(P+1, 1)}, extents: []objectstore.Extent{ext(P, P)}},
	})
}

func testTruncate(e *env) {
	e.setup(pgA)
	runDataTable(e, []dataCase{
		{name: "shrink", steps: []dataStep{w(0, 3*P), tr(P + 10)}, extents: []objectstore.Extent{ext(0, P+10)}},
		{name: "shrink to page", steps: []dataStep{w(0, 3*P), tr(P)}, extents: []objectstore.Extent{ext(0, P)}},
		{name: "to zero", steps: []dataStep{w(0, 3*P), tr(0)}, extents: []objectstore.Extent{}},
		{name: "extend", steps: []dataStep{w(0, 10), tr(5 * P)}, extents: []objectstore.Extent{ext(0, P)}},
		{name: "shrink then extend zeroes", steps: []dataStep{w(0, 2*P), tr(100), tr(2 * P)}, extents: []objectstore.Extent{ext(0, P)}},
		{name: "same size", steps: []dataStep{w(0, 100), tr(100)}, extents: []objectstore.Extent{ext(0, 100)}},
		{name: "shrink then write past", steps: []dataStep{w(0, 100), tr(50), w(200, 10)}, extents: []objectstore.Extent{ext(0, 210)}},
	})
}

func testTouchRemove(e *env) {
	e.setup(pgA)
	e.apply(txn().Touch(pgA, obj("a")))
	if st := e.stat(pgA, obj("a")); st.Size != 0 || st.Allocated != 0 {
		e.Fatalf("touched object: %+v", st)
	}
	e.apply(txn().Write(pgA, obj("a"), 0, []byte("abc")).Touch(pgA, obj("a")))
	e.wantData(pgA, obj("a"), []byte("abc"))
	e.apply(txn().SetAttr(pgA, obj("a"), "x", []byte("1")).OmapSetKeys(pgA, obj("a"), map[string][]byte{"k": []byte("v")}).
		OmapSetHeader(pgA, obj("a"), []byte("h")))
	e.apply(txn().Remove(pgA, obj("a")))
	if e.exists(pgA, obj("a")) {
		e.Fatalf("removed object exists")
	}
	e.applyErr(txn().Remove(pgA, obj("a")), objectstore.ErrNotFound)
	// A new object by the same name starts empty.
	e.apply(txn().Touch(pgA, obj("a")))
	e.wantData(pgA, obj("a"), nil)
	attrs, _ := e.s.GetAttrs(e.ctx, pgA, obj("a"))
	kvs, _, _ := e.s.OmapIterate(e.ctx, pgA, obj("a"), "", "", 0)
	h, _ := e.s.OmapGetHeader(e.ctx, pgA, obj("a"))
	if len(attrs) != 0 || len(kvs) != 0 || len(h) != 0 {
		e.Fatalf("recreated object kept attrs %v omap %v header %q", attrs, kvs, h)
	}
}

func testLargeSparse(e *env) {
	e.setup(pgA)
	const tib = objectstore.MaxObjectSize
	o := obj("big")
	e.apply(txn().Write(pgA, o, tib-3, []byte("end")).Write(pgA, o, 1<<30, []byte("mid")))
	if st := e.stat(pgA, o); st.Size != tib || st.Allocated != 2*P {
		e.Fatalf("stat %+v, want size %d allocated %d", st, uint64(tib), 2*P)
	}
	if got := e.read(pgA, o, tib-10, 0); !bytes.Equal(got, append(make([]byte, 7), "end"...)) {
		e.Fatalf("tail read %q", got)
	}
	if got := e.read(pgA, o, 1<<35, 8); !bytes.Equal(got, make([]byte, 8)) {
		e.Fatalf("hole read %q", got)
	}
	e.wantExtents(o, []objectstore.Extent{ext(1<<30, P), ext(tib-P, P)})
	e.apply(txn().Touch(pgA, obj("t")).Truncate(pgA, obj("t"), tib))
	e.wantExtents(obj("t"), []objectstore.Extent{})
	e.apply(txn().Zero(pgA, o, 0, tib))
	e.wantExtents(o, []objectstore.Extent{})
	e.applyErr(txn().Write(pgA, o, tib, []byte("x")), objectstore.ErrInvalid)
	e.applyErr(txn().Truncate(pgA, o, tib+1), objectstore.ErrInvalid)
	e.apply(txn().Truncate(pgA, o, 0))
	if st := e.statfs(); st.Stored != 0 {
		e.Fatalf("stored %d after freeing everything", st.Stored)
	}
}

func testExtentMap(e *env) {
	e.setup(pgA)
	o := obj("o")
	// Pages 0, 1, 3 and the first 100 bytes of page 5.
	e.apply(txn().Write(pgA, o, 0, pattern(1, 2*P)).Write(pgA, o, 3*P+7, []byte("x")).Write(pgA, o, 5*P, pattern(2, 100)))
	for _, c := range []struct {
		off, n uint64
		want   []objectstore.Extent
	}{
		{0, 0, []objectstore.Extent{ext(0, 2*P), ext(3*P, P), ext(5*P, 100)}},
		{10, 20, []objectstore.Extent{ext(10, 20)}},
		{P + 5, 3 * P, []objectstore.Extent{ext(P+5, P-5), ext(3*P, P)}},
		{2 * P, P, nil},
		{3*P + 100, 0, []objectstore.Extent{ext(3*P+100, P-100), ext(5*P, 100)}},
		{5*P + 100, 0, nil},
		{6 * P, 10, nil},
		{5 * P, ^uint64(0), []objectstore.Extent{ext(5*P, 100)}},
	} {
		got, err := e.s.ExtentMap(e.ctx, pgA, o, c.off, c.n)
		if err != nil || len(got)+len(c.want) > 0 && !slices.Equal(got, c.want) {
			e.Errorf("extent map %d+%d: %v %v, want %v", c.off, c.n, got, err, c.want)
		}
	}
}

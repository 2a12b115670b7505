package ops

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// fixture is one object in a PG collection of a memstore, and a counter
// that gives every write a new version.
type fixture struct {
	t       testing.TB
	store   objectstore.Store
	coll    objectstore.CollectionID
	obj     objid.ID
	classes *objclass.Registry
	counter uint64
	now     time.Time
	caller  string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	s := memstore.New(memstore.Options{})
	t.Cleanup(func() { s.Close() })
	coll := objectstore.PGCollection(1, 0)
	var txn objectstore.Transaction
	txn.CreateCollection(coll)
	if err := objectstore.Apply(t.Context(), s, &txn); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, store: s, coll: coll, obj: objid.Object(1, "", "obj"),
		now: time.Unix(1000, 0), caller: "client.1"}
}

// do executes ops and applies the transaction if they succeeded.
func (f *fixture) do(ops ...wire.ObjectOp) *Result {
	f.t.Helper()
	f.counter++
	env := &Env{Store: f.store, Collection: f.coll, Object: f.obj, Classes: f.classes,
		Version: wire.Version{Epoch: 5, Counter: f.counter}, Now: f.now, Caller: f.caller}
	res, err := Execute(context.Background(), env, ops)
	if err != nil {
		f.t.Fatalf("execute %v: %v", ops, err)
	}
	if res.Code == 0 && !res.Txn.Empty() {
		if err := objectstore.Apply(f.t.Context(), f.store, &res.Txn); err != nil {
			f.t.Fatalf("apply: %v", err)
		}
	}
	return res
}

// ok executes ops and fails the test unless they all succeed.
func (f *fixture) ok(ops ...wire.ObjectOp) *Result {
	f.t.Helper()
	res := f.do(ops...)
	if res.Code != 0 {
		f.t.Fatalf("ops %v failed at %d: errno %d", ops, res.FailedOp, res.Code)
	}
	return res
}

// fails executes ops and checks they fail with code at op index at.
func (f *fixture) fails(code int32, at int, ops ...wire.ObjectOp) {
	f.t.Helper()
	res := f.do(ops...)
	if res.Code != code || res.FailedOp != at || res.Ops[at].Result != -code {
		f.t.Fatalf("ops %v: errno %d at %d, want %d at %d", ops, res.Code, res.FailedOp, code, at)
	}
	if !res.Txn.Empty() {
		f.t.Fatal("a failed request kept its transaction")
	}
}

func (f *fixture) read() []byte {
	f.t.Helper()
	return f.ok(wire.ObjectOp{Code: wire.OpRead}).Ops[0].Data
}

func TestDataOps(t *testing.T) {
	f := newFixture(t)
	f.fails(wire.ENOENT, 0, wire.ObjectOp{Code: wire.OpRead})
	f.fails(wire.ENOENT, 0, wire.ObjectOp{Code: wire.OpStat})
	f.fails(wire.ENOENT, 0, wire.ObjectOp{Code: wire.OpDelete})
	f.ok(wire.ObjectOp{Code: wire.OpWrite, Offset: 2, Data: []byte("llo")}, wire.ObjectOp{Code: wire.OpAppend, Data: []byte("!")})
	if got := f.read(); !bytes.Equal(got, []byte("\x00\x00llo!")) {
		t.Fatalf("read %q", got)
	}
	f.ok(wire.ObjectOp{Code: wire.OpWrite, Data: []byte("he")})
	st := f.ok(wire.ObjectOp{Code: wire.OpStat}).Ops[0]
	if st.Size != 6 || st.Mtime != f.now.UnixNano() {
		t.Fatalf("stat %+v", st)
	}
	f.ok(wire.ObjectOp{Code: wire.OpZero, Offset: 4, Length: 100}) // clamped: never extends
	if got := f.read(); !bytes.Equal(got, []byte("hell\x00\x00")) {
		t.Fatalf("after zero %q", got)
	}
	f.ok(wire.ObjectOp{Code: wire.OpTruncate, Offset: 2}, wire.ObjectOp{Code: wire.OpAppend, Data: []byte("y")})
	if got := f.read(); string(got) != "hey" {
		t.Fatalf("after truncate+append %q", got)
	}
	f.ok(wire.ObjectOp{Code: wire.OpWriteFull, Data: []byte("new")})
	if got := f.read(); string(got) != "new" {
		t.Fatalf("after writefull %q", got)
	}
	f.fails(wire.EEXIST, 0, wire.ObjectOp{Code: wire.OpCreate, Flags: wire.CreateExclusive})
	f.ok(wire.ObjectOp{Code: wire.OpCreate})
	f.fails(wire.EFBIG, 0, wire.ObjectOp{Code: wire.OpWrite, Offset: objectstore.MaxObjectSize, Data: []byte("x")})
	f.fails(wire.EINVAL, 0, wire.ObjectOp{Code: wire.OpZero, Offset: 1 << 63, Length: 1 << 63})
	// Delete, then recreate in the same request.
	f.ok(wire.ObjectOp{Code: wire.OpDelete}, wire.ObjectOp{Code: wire.OpAppend, Data: []byte("again")})
	if got := f.read(); string(got) != "again" {
		t.Fatalf("after delete+append %q", got)
	}
	f.ok(wire.ObjectOp{Code: wire.OpDelete})
	f.fails(wire.ENOENT, 0, wire.ObjectOp{Code: wire.OpAssertExists})
	f.ok(wire.ObjectOp{Code: wire.OpZero, Length: 10}) // no-op on a missing object
	f.fails(wire.ENOENT, 0, wire.ObjectOp{Code: wire.OpStat})
}

func TestSparseRead(t *testing.T) {
	f := newFixture(t)
	f.ok(wire.ObjectOp{Code: wire.OpWrite, Data: []byte("a")}, wire.ObjectOp{Code: wire.OpWrite, Offset: 3 * memstore.PageSize, Data: []byte("bc")})
	out := f.ok(wire.ObjectOp{Code: wire.OpSparseRead}).Ops[0]
	want := []wire.Extent{{Offset: 0, Length: memstore.PageSize}, {Offset: 3 * memstore.PageSize, Length: 2}}
	if !slices.Equal(out.Extents, want) || len(out.Data) != memstore.PageSize+2 || out.Data[0] != 'a' || string(out.Data[memstore.PageSize:]) != "bc" {
		t.Fatalf("sparse read %v, %d bytes", out.Extents, len(out.Data))
	}
}

func TestAtomicity(t *testing.T) {
	f := newFixture(t)
	f.ok(wire.ObjectOp{Code: wire.OpWriteFull, Data: []byte("v1")}, wire.ObjectOp{Code: wire.OpSetXattr, Name: "state", Data: []byte("a")})
	// The second op fails: the first must not apply.
	f.fails(wire.ECANCELED, 1,
		wire.ObjectOp{Code: wire.OpWriteFull, Data: []byte("v2")},
		wire.ObjectOp{Code: wire.OpCmpXattr, Name: "state", Data: []byte("b"), Flags: uint32(wire.CmpEQ)},
		wire.ObjectOp{Code: wire.OpOmapSet, Pairs: []wire.KV{{Key: "k", Value: []byte("v")}}})
	if got := f.read(); string(got) != "v1" {
		t.Fatalf("partial apply: %q", got)
	}
	f.ok(wire.ObjectOp{Code: wire.OpCmpXattr, Name: "state", Data: []byte("a"), Flags: uint32(wire.CmpEQ)},
		wire.ObjectOp{Code: wire.OpWriteFull, Data: []byte("v2")})
	if got := f.read(); string(got) != "v2" {
		t.Fatalf("guarded write: %q", got)
	}
	f.fails(wire.ENOTSUP, 0, wire.ObjectOp{Code: 999})
}

func TestVersions(t *testing.T) {
	f := newFixture(t)
	res := f.ok(wire.ObjectOp{Code: wire.OpWrite, Data: []byte("x")})
	if !res.Wrote() || res.Info.Version != (wire.Version{Epoch: 5, Counter: f.counter}) {
		t.Fatalf("write stamped %v", res.Info.Version)
	}
	v := f.counter
	read := f.ok(wire.ObjectOp{Code: wire.OpAssertVersion, Version: v}, wire.ObjectOp{Code: wire.OpRead})
	if read.Wrote() || read.Info.Version.Counter != v {
		t.Fatalf("read changed the version: %v", read.Info.Version)
	}
	f.fails(wire.ERANGE, 0, wire.ObjectOp{Code: wire.OpAssertVersion, Version: v - 1})
	f.fails(wire.EOVERFLOW, 0, wire.ObjectOp{Code: wire.OpAssertVersion, Version: v + 1})
}

func TestXattrs(t *testing.T) {
	f := newFixture(t)
	f.fails(wire.ENOENT, 0, wire.ObjectOp{Code: wire.OpGetXattr, Name: "a"})
	f.ok(wire.ObjectOp{Code: wire.OpSetXattr, Name: "b", Data: []byte("2")}, wire.ObjectOp{Code: wire.OpSetXattr, Name: "a", Data: nil})
	if got := f.ok(wire.ObjectOp{Code: wire.OpGetXattr, Name: "b"}).Ops[0].Data; string(got) != "2" {
		t.Fatalf("getxattr %q", got)
	}
	all := f.ok(wire.ObjectOp{Code: wire.OpGetXattrs}).Ops[0].Pairs
	if len(all) != 2 || all[0].Key != "a" || len(all[0].Value) != 0 || all[1].Key != "b" {
		t.Fatalf("getxattrs %+v (the info attribute must not show)", all)
	}
	f.fails(wire.ENODATA, 0, wire.ObjectOp{Code: wire.OpGetXattr, Name: "c"})
	f.fails(wire.ENODATA, 0, wire.ObjectOp{Code: wire.OpRmXattr, Name: "c"})
	f.fails(wire.EINVAL, 0, wire.ObjectOp{Code: wire.OpSetXattr, Name: ""})
	f.fails(wire.EINVAL, 0, wire.ObjectOp{Code: wire.OpCmpXattr, Name: "b", Data: []byte("2"), Flags: 99})
	for _, tc := range []struct {
		cmp wire.CmpOp
		arg string
		ok  bool
	}{{wire.CmpEQ, "2", true}, {wire.CmpNE, "2", false}, {wire.CmpGT, "1", true}, {wire.CmpGTE, "3", false},
		{wire.CmpLT, "3", true}, {wire.CmpLTE, "1", false}} {
		res := f.do(wire.ObjectOp{Code: wire.OpCmpXattr, Name: "b", Data: []byte(tc.arg), Flags: uint32(tc.cmp)})
		if (res.Code == 0) != tc.ok {
			t.Errorf("cmp %d %q: errno %d", tc.cmp, tc.arg, res.Code)
		}
	}
	// A missing attribute compares as empty.
	f.ok(wire.ObjectOp{Code: wire.OpCmpXattr, Name: "missing", Data: nil, Flags: uint32(wire.CmpEQ)})
	f.ok(wire.ObjectOp{Code: wire.OpRmXattr, Name: "b"})
	f.fails(wire.ENODATA, 0, wire.ObjectOp{Code: wire.OpGetXattr, Name: "b"})
}

func TestOmap(t *testing.T) {
	f := newFixture(t)
	f.fails(wire.ENOENT, 0, wire.ObjectOp{Code: wire.OpOmapRmKeys, Keys: []string{"a"}})
	f.ok(wire.ObjectOp{Code: wire.OpOmapSet, Pairs: []wire.KV{{Key: "a1", Value: []byte("1")}, {Key: "a2", Value: []byte("2")}, {Key: "b1", Value: nil}}},
		wire.ObjectOp{Code: wire.OpOmapSetHeader, Data: []byte("hdr")})
	keys := f.ok(wire.ObjectOp{Code: wire.OpOmapGetKeys, Prefix: "a", Length: 1}).Ops[0]
	if !slices.Equal(keys.Keys, []string{"a1"}) || !keys.More {
		t.Fatalf("keys %+v", keys)
	}
	vals := f.ok(wire.ObjectOp{Code: wire.OpOmapGetVals, Name: "a1"}).Ops[0]
	if len(vals.Pairs) != 2 || vals.Pairs[0].Key != "a2" || vals.More {
		t.Fatalf("vals after a1 %+v", vals)
	}
	by := f.ok(wire.ObjectOp{Code: wire.OpOmapGetByKeys, Keys: []string{"b1", "zz", "a2"}}).Ops[0].Pairs
	if len(by) != 2 || by[0].Key != "a2" || by[1].Key != "b1" {
		t.Fatalf("by keys %+v", by)
	}
	if h := f.ok(wire.ObjectOp{Code: wire.OpOmapGetHeader}).Ops[0].Data; string(h) != "hdr" {
		t.Fatalf("header %q", h)
	}
	f.ok(wire.ObjectOp{Code: wire.OpOmapCmp, Pairs: []wire.KV{{Key: "a1", Value: []byte("1")}, {Key: "a2", Value: []byte("1")}}, Flags: uint32(wire.CmpGTE)})
	f.fails(wire.ECANCELED, 0, wire.ObjectOp{Code: wire.OpOmapCmp, Pairs: []wire.KV{{Key: "a1", Value: []byte("1")}, {Key: "a2", Value: []byte("1")}}, Flags: uint32(wire.CmpEQ)})
	f.fails(wire.ECANCELED, 0, wire.ObjectOp{Code: wire.OpOmapCmp, Pairs: []wire.KV{{Key: "nope", Value: nil}}, Flags: uint32(wire.CmpEQ)})
	f.ok(wire.ObjectOp{Code: wire.OpOmapRmKeys, Keys: []string{"a1", "missing"}})
	if k := f.ok(wire.ObjectOp{Code: wire.OpOmapGetKeys}).Ops[0].Keys; !slices.Equal(k, []string{"a2", "b1"}) {
		t.Fatalf("after rm %v", k)
	}
	f.ok(wire.ObjectOp{Code: wire.OpOmapClear})
	if r := f.ok(wire.ObjectOp{Code: wire.OpOmapGetVals}, wire.ObjectOp{Code: wire.OpOmapGetHeader}); len(r.Ops[0].Pairs) != 0 || len(r.Ops[1].Data) != 0 {
		t.Fatalf("after clear %+v", r.Ops)
	}
}

// TestCall: class methods run inside the request, through the Env's
// registry, on the object as the request's earlier ops left it.
func TestCall(t *testing.T) {
	r := objclass.NewRegistry()
	for name, m := range map[string]objclass.Method{
		// state reports what the method sees of the object.
		"state": {Run: func(c objclass.Context, _ []byte) ([]byte, error) {
			return fmt.Appendf(nil, "%s %d %v %d", c.Caller(), c.Now(), c.Exists(), c.Version().Counter), nil
		}},
		"append": {Write: true, Run: func(c objclass.Context, in []byte) ([]byte, error) {
			_, err := c.Do(wire.ObjectOp{Code: wire.OpAppend, Data: in})
			return nil, err
		}},
		"sneaky": {Run: func(c objclass.Context, _ []byte) ([]byte, error) {
			_, err := c.Do(wire.ObjectOp{Code: wire.OpWrite, Data: []byte("x")})
			return nil, err
		}},
		"fail": {Run: func(objclass.Context, []byte) ([]byte, error) { return nil, objclass.Errorf(wire.EBUSY, "no") }},
	} {
		if err := r.Register("t", name, m); err != nil {
			t.Fatal(err)
		}
	}
	call := func(name string, in []byte) wire.ObjectOp {
		return wire.ObjectOp{Code: wire.OpCall, Name: "t." + name, Data: in}
	}
	f := newFixture(t)
	f.classes = r
	want := fmt.Sprintf("client.1 %d false 0", f.now.UnixNano())
	if got := f.ok(call("state", nil)).Ops[0].Data; string(got) != want {
		t.Fatalf("state of a missing object %q, want %q", got, want)
	}
	res := f.ok(wire.ObjectOp{Code: wire.OpCreate}, call("state", nil), call("append", []byte("ab")), call("append", []byte("c")))
	if want := fmt.Sprintf("client.1 %d true 0", f.now.UnixNano()); string(res.Ops[1].Data) != want {
		t.Fatalf("state after a create in the same request %q, want %q", res.Ops[1].Data, want)
	}
	if got := f.read(); string(got) != "abc" {
		t.Fatalf("after two appends by a method %q", got)
	}
	if !r.IsWrite([]wire.ObjectOp{call("append", nil)}) || r.IsWrite([]wire.ObjectOp{call("state", nil)}) {
		t.Fatal("IsWrite of the test class")
	}
	// A failing method fails the request: what came before it is lost.
	f.fails(wire.EBUSY, 1, call("append", []byte("lost")), call("fail", nil))
	f.fails(wire.EPERM, 0, call("sneaky", nil))
	f.fails(wire.ENOTSUP, 0, call("nope", nil))
	if got := f.read(); string(got) != "abc" {
		t.Fatalf("after failed calls %q", got)
	}
	f.classes = nil
	f.fails(wire.ENOTSUP, 0, call("state", nil))
}

// FuzzDecoders: the package's decoders never panic and round-trip.
func FuzzDecoders(f *testing.F) {
	f.Add(Info{Version: wire.Version{Epoch: 1, Counter: 2}, Mtime: 3}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if i, err := DecodeInfo(b); err == nil {
			if again, err := DecodeInfo(i.Encode()); err != nil || again != i {
				t.Fatalf("info round trip: %v", err)
			}
		}
	})
}

func TestVersionOf(t *testing.T) {
	v := wire.Version{Epoch: 7, Counter: 42}
	if got := VersionOf(Info{Version: v, Mtime: 5}.Encode()); got != v {
		t.Fatalf("VersionOf(encoded %v) = %v", v, got)
	}
	for _, b := range [][]byte{nil, []byte("garbage")} {
		if got := VersionOf(b); got != (wire.Version{}) {
			t.Fatalf("VersionOf(%q) = %v, want zero", b, got)
		}
	}
}

// TestLoad checks that Load reads what Execute starts from, with the
// extra attribute in the same read, and that Execute starts from
// Env.Loaded without reading the object again.
func TestLoad(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	st, err := Load(ctx, f.store, f.coll, f.obj, "_b")
	if err != nil || st.Exists || st.HasInfo || st.Extra != nil {
		t.Fatalf("absent object loaded as %+v, %v", st, err)
	}
	f.ok(wire.ObjectOp{Code: wire.OpWrite, Data: []byte("abc")}, wire.ObjectOp{Code: wire.OpSetXattr, Name: "b", Data: []byte("2")},
		wire.ObjectOp{Code: wire.OpSetXattr, Name: "e", Data: nil})
	want := wire.Version{Epoch: 5, Counter: f.counter}
	for _, extra := range []string{"", "_b", "_e", "_missing"} {
		st, err := Load(ctx, f.store, f.coll, f.obj, extra)
		if err != nil || !st.Exists || st.Size != 3 || !st.HasInfo {
			t.Fatalf("Load(%q) = %+v, %v", extra, st, err)
		}
		if info, err := DecodeInfo(st.Info); err != nil || info.Version != want {
			t.Fatalf("Load(%q): info %+v, %v; want version %v", extra, info, err, want)
		}
		switch extra {
		case "", "_missing":
			if st.Extra != nil {
				t.Fatalf("Load(%q): extra %q, want none", extra, st.Extra)
			}
		case "_b":
			if string(st.Extra) != "2" {
				t.Fatalf("Load(%q): extra %q", extra, st.Extra)
			}
		case "_e":
			if st.Extra == nil || len(st.Extra) != 0 {
				t.Fatalf("Load(%q): extra %v, want present and empty", extra, st.Extra)
			}
		}
	}
	// Execute starts from Loaded: told the object is absent, a stat
	// fails as for an absent object although the store holds it.
	env := &Env{Store: f.store, Collection: f.coll, Object: f.obj, Loaded: &State{}}
	res, err := Execute(ctx, env, []wire.ObjectOp{{Code: wire.OpStat}})
	if err != nil || res.Code != wire.ENOENT || res.Existed {
		t.Fatalf("stat from an absent Loaded: code %d, existed %v, %v", res.Code, res.Existed, err)
	}
	// And from a loaded info that is not one, the error a stored one
	// would give.
	env.Loaded = &State{Exists: true, Size: 3, HasInfo: true, Info: []byte{0xff}}
	if _, err := Execute(ctx, env, []wire.ObjectOp{{Code: wire.OpStat}}); err == nil {
		t.Fatal("a corrupt loaded info executed")
	}
}

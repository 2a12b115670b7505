package kv_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/cls/clstest"
	"github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

func newObject(t *testing.T) *clstest.Object {
	r := objclass.NewRegistry()
	if err := kv.Register(r); err != nil {
		t.Fatal(err)
	}
	return clstest.New(t, r)
}

func call(method string, in []byte) wire.ObjectOp { return clstest.Call(kv.Class+"."+method, in) }

// leaf makes the object a leaf with these bounds and k, holding n
// entries "key000".. of the bounds' low (which must be "" or "key").
func leaf(o *clstest.Object, b kv.Bounds, k uint32, keys ...string) {
	var pairs []wire.KV
	for _, key := range keys {
		pairs = append(pairs, wire.KV{Key: key, Value: []byte("v" + key)})
	}
	l := kv.Leaf{Bounds: b, K: k, Count: uint64(len(keys))}
	o.OK(wire.ObjectOp{Code: wire.OpSetXattr, Name: kv.LeafAttr, Data: l.Encode()},
		wire.ObjectOp{Code: wire.OpOmapSet, Pairs: pairs})
}

func keys(n int) []string {
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("m%03d", i))
	}
	return ks
}

func put(keys ...string) []byte {
	var r kv.WriteRequest
	for _, k := range keys {
		r.Puts = append(r.Puts, kv.Pair{Key: k, Value: []byte("new")})
	}
	return r.Encode()
}

func rm(keys ...string) []byte { return kv.WriteRequest{Removes: keys}.Encode() }

func state(t *testing.T, o *clstest.Object) kv.Leaf {
	t.Helper()
	l, err := kv.DecodeLeaf(o.Xattrs()[kv.LeafAttr])
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func readReply(t *testing.T, o *clstest.Object, req kv.ReadRequest) kv.ReadReply {
	t.Helper()
	r, err := kv.DecodeReadReply(o.OK(call("read", req.Encode())).Ops[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Conditions: a write applies only if each holds (absent, or exactly
// the value), else ErrnoMismatch and nothing changes; conditions are
// checked before the size guard, so a failed compare never asks for a
// split.
func TestWriteConditions(t *testing.T) {
	o := newObject(t)
	leaf(o, kv.Bounds{Low: "m", High: "n"}, 2, keys(4)...) // 2k: full
	cas := func(key string, absent bool, old, val string) []byte {
		return kv.WriteRequest{Puts: []kv.Pair{{Key: key, Value: []byte(val)}},
			Conds: []kv.Cond{{Key: key, Absent: absent, Value: []byte(old)}}}.Encode()
	}
	o.Fails(kv.ErrnoMismatch, 0, call("write", cas("m000", false, "wrong", "x")))
	o.Fails(kv.ErrnoMismatch, 0, call("write", cas("m000", true, "", "x"))) // exists
	o.Fails(kv.ErrnoMismatch, 0, call("write", cas("m9", false, "", "x")))  // absent, not ""
	o.Fails(kv.ErrnoFull, 0, call("write", cas("m9", true, "", "x")))       // holds, but no room
	o.OK(call("write", cas("m000", false, "vm000", "x")))
	if got := readReply(t, o, kv.ReadRequest{Keys: []string{"m000"}}); len(got.Pairs) != 1 || string(got.Pairs[0].Value) != "x" {
		t.Fatalf("after the swap: %+v", got.Pairs)
	}
	// A batch with one failing condition writes nothing.
	o.Fails(kv.ErrnoMismatch, 0, call("write", kv.WriteRequest{Removes: []string{"m001"},
		Conds: []kv.Cond{{Key: "m000", Value: []byte("x")}, {Key: "m002", Value: []byte("nope")}}}.Encode()))
	if l := state(t, o); l.Count != 4 {
		t.Fatalf("count %d after a failed batch, want 4", l.Count)
	}
	// A condition's key must be the leaf's too.
	o.Fails(kv.ErrnoNotMine, 0, call("write", kv.WriteRequest{Conds: []kv.Cond{{Key: "a", Absent: true}}}.Encode()))
}

// The write guard (docs/KV.md, "the normal case"): a batch applies only
// if the leaf covers every key and stays between k and 2k entries.
func TestWriteGuard(t *testing.T) {
	o := newObject(t)
	o.Fails(wire.ENOENT, 0, call("write", put("m1"))) // no leaf (removed by a split)
	b := kv.Bounds{Low: "m", High: "n"}
	leaf(o, b, 2, keys(3)...)
	o.Fails(kv.ErrnoNotMine, 0, call("write", put("a")))
	o.Fails(kv.ErrnoNotMine, 0, call("write", put("m500", "n"))) // High is exclusive
	o.OK(call("write", put("m")))                                // Low is inclusive: 4 entries
	o.Fails(kv.ErrnoFull, 0, call("write", put("m9")))           // a fifth
	o.OK(call("write", put("m000", "m001")))                     // updates do not grow it
	// A batch counts its net effect.
	o.OK(call("write", kv.WriteRequest{Puts: []kv.Pair{{Key: "m8", Value: nil}}, Removes: []string{"m000"}}.Encode()))
	if l := state(t, o); l.Count != 4 {
		t.Fatalf("count %d, want 4", l.Count)
	}
	o.OK(call("write", rm("m001", "mabsent"))) // 3
	o.OK(call("write", rm("m002")))            // 2 = k
	o.Fails(kv.ErrnoTooSmall, 0, call("write", rm("m")))
	o.OK(call("write", rm("mzz"))) // removing an absent key shrinks nothing
	if l := state(t, o); l.Count != 2 {
		t.Fatalf("count %d, want 2", l.Count)
	}
	// Bad requests.
	o.Fails(wire.EINVAL, 0, call("write", put("")))
	o.Fails(wire.EINVAL, 0, call("write", []byte("junk")))
	o.Fails(wire.EINVAL, 0, call("write", put(string(bytes.Repeat([]byte("m"), kv.MaxKeyLen+1)))))
}

// The only leaf (all keys) may hold fewer than k entries, down to none.
func TestOnlyLeafMayBeSmall(t *testing.T) {
	o := newObject(t)
	leaf(o, kv.Bounds{}, 3)
	o.OK(call("write", put("a", "b")))
	o.OK(call("write", rm("a", "b")))
	if l := state(t, o); l.Count != 0 {
		t.Fatalf("count %d", l.Count)
	}
	// And a leaf already under k (a new store's first split leaves
	// none such, but a corrupt count might) may still grow.
	o2 := newObject(t)
	leaf(o2, kv.Bounds{Low: "b", High: "c"}, 3, "b1")
	o2.OK(call("write", put("b2")))
}

func TestFreeze(t *testing.T) {
	o := newObject(t)
	leaf(o, kv.Bounds{}, 2, "a")
	o.OK(call("freeze", kv.FreezeRequest{ID: "split.1"}.Encode()))
	o.OK(call("freeze", kv.FreezeRequest{ID: "split.1"}.Encode())) // again: the same operation
	o.Fails(kv.ErrnoBusy, 0, call("freeze", kv.FreezeRequest{ID: "split.2"}.Encode()))
	o.Fails(kv.ErrnoBusy, 0, call("write", put("b")))
	// Reads still work: the entries are valid until the index swaps.
	if r := readReply(t, o, kv.ReadRequest{Keys: []string{"a"}}); len(r.Pairs) != 1 {
		t.Fatalf("read of a frozen leaf: %+v", r)
	}
	if l := state(t, o); l.Frozen != "split.1" {
		t.Fatalf("frozen %q", l.Frozen)
	}
	o.Fails(wire.EINVAL, 0, call("freeze", kv.FreezeRequest{}.Encode()))
	// Thaw: only by the operation that froze it; twice is not an error.
	o.Fails(kv.ErrnoNoMark, 0, call("thaw", kv.FreezeRequest{ID: "split.2"}.Encode()))
	o.OK(call("thaw", kv.FreezeRequest{ID: "split.1"}.Encode()))
	o.OK(call("thaw", kv.FreezeRequest{ID: "split.1"}.Encode()))
	if l := state(t, o); l.Frozen != "" || l.Count != 1 {
		t.Fatalf("thawed leaf %+v", l)
	}
	o.OK(call("write", put("b")))
}

func freezeReply(t *testing.T, o *clstest.Object, req kv.FreezeRequest) kv.FreezeReply {
	t.Helper()
	r, err := kv.DecodeFreezeReply(o.OK(call("freeze", req.Encode())).Ops[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A freeze that asks for entries answers them with the leaf, at most as
// many as asked and saying whether more follow; asked again by the same
// operation (a resent request) it answers them again; without asking it
// answers the leaf alone, as the first version did.
func TestFreezeAnswersEntries(t *testing.T) {
	o := newObject(t)
	leaf(o, kv.Bounds{Low: "m", High: "n"}, 2, keys(4)...)
	r := freezeReply(t, o, kv.FreezeRequest{ID: "split.1", Entries: 4})
	if !r.Entries || r.More || len(r.Pairs) != 4 || r.Leaf.Frozen != "split.1" || r.Leaf.Count != 4 {
		t.Fatalf("freeze: %+v", r)
	}
	for i, p := range r.Pairs {
		if p.Key != keys(4)[i] || string(p.Value) != "v"+p.Key {
			t.Fatalf("pair %d: %q = %q", i, p.Key, p.Value)
		}
	}
	r = freezeReply(t, o, kv.FreezeRequest{ID: "split.1", Entries: 3})
	if !r.Entries || !r.More || len(r.Pairs) != 3 || r.Pairs[2].Key != "m002" {
		t.Fatalf("freeze again, 3 entries: %+v", r)
	}
	r = freezeReply(t, o, kv.FreezeRequest{ID: "split.1"})
	if r.Entries || len(r.Pairs) != 0 || r.Leaf.Frozen != "split.1" {
		t.Fatalf("freeze without entries: %+v", r)
	}
	// What a client of the first version decodes: the leaf.
	out := o.OK(call("freeze", kv.FreezeRequest{ID: "split.1", Entries: 4}.Encode())).Ops[0].Data
	if l, err := kv.DecodeLeaf(out); err != nil || l.Frozen != "split.1" || l.Count != 4 {
		t.Fatalf("DecodeLeaf of a reply with entries: %+v %v", l, err)
	}
	// A request of the first version (the id alone) is still read.
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String("split.1")
	e.End(mk)
	v1, err := kv.DecodeFreezeReply(o.OK(call("freeze", e.Data())).Ops[0].Data)
	if err != nil || v1.Entries || v1.Leaf.Frozen != "split.1" {
		t.Fatalf("freeze by a version 1 request: %+v %v", v1, err)
	}
	o.Fails(kv.ErrnoBusy, 0, call("freeze", kv.FreezeRequest{ID: "split.2", Entries: 4}.Encode()))
}

// A reply stops adding entries once they pass FreezeReplyBytes, and says
// more follow: the client reads the rest.
func TestFreezeReplyBounded(t *testing.T) {
	o := newObject(t)
	big := bytes.Repeat([]byte("x"), kv.MaxValueLen)
	n := kv.FreezeReplyBytes/kv.MaxValueLen + 4
	var pairs []wire.KV
	for i := range n {
		pairs = append(pairs, wire.KV{Key: fmt.Sprintf("k%03d", i), Value: big})
	}
	o.OK(wire.ObjectOp{Code: wire.OpSetXattr, Name: kv.LeafAttr, Data: kv.Leaf{K: uint32(n), Count: uint64(n)}.Encode()},
		wire.ObjectOp{Code: wire.OpOmapSet, Pairs: pairs})
	r := freezeReply(t, o, kv.FreezeRequest{ID: "split.1", Entries: uint32(n)})
	if !r.More || len(r.Pairs) == 0 || len(r.Pairs) >= n {
		t.Fatalf("%d of %d entries, more %v", len(r.Pairs), n, r.More)
	}
	if size := len(r.Pairs) * (4 + kv.MaxValueLen); size > kv.FreezeReplyBytes+4+kv.MaxValueLen {
		t.Fatalf("%d bytes of entries, over the bound", size)
	}
}

// A join marks two index entries with one mark, all or none.
func TestIndexMarkTwoEntries(t *testing.T) {
	o := newObject(t)
	o.OK(wire.ObjectOp{Code: wire.OpOmapSet, Pairs: []wire.KV{
		{Key: kv.IndexKey("k"), Value: kv.Entry{Leaf: "leaf.1"}.Encode()},
		{Key: kv.IndexKey("t"), Value: kv.Entry{Leaf: "leaf.2"}.Encode()},
		{Key: kv.IndexKey(""), Value: kv.Entry{Leaf: "leaf.3"}.Encode()},
	}})
	both := []kv.IndexEntry{{High: "k", Leaf: "leaf.1"}, {High: "t", Leaf: "leaf.2"}}
	join := func(id string, es ...kv.IndexEntry) []byte {
		return kv.MarkRequest{Mark: kv.Mark{ID: id, Kind: kv.MarkJoin, Old: es[0].Leaf, Entries: es}}.Encode()
	}
	marks := func() map[string]string {
		m := map[string]string{}
		for _, p := range o.OK(wire.ObjectOp{Code: wire.OpOmapGetVals}).Ops[0].Pairs {
			x, err := kv.DecodeEntry(p.Value)
			if err != nil {
				t.Fatal(err)
			}
			if x.Mark != nil {
				m[x.Leaf] = x.Mark.ID
				if len(x.Mark.Entries) != 2 {
					t.Fatalf("mark entries %+v", x.Mark.Entries)
				}
			}
		}
		return m
	}
	o.Fails(kv.ErrnoNotMine, 0, call("mark", join("j.0", both[0], kv.IndexEntry{High: "t", Leaf: "leaf.9"})))
	o.Fails(wire.EINVAL, 0, call("mark", join("j.0", both[1], both[0])))
	if m := marks(); len(m) != 0 {
		t.Fatalf("a refused mark left marks %v", m)
	}
	o.OK(call("mark", join("j.1", both...)))
	if m := marks(); m["leaf.1"] != "j.1" || m["leaf.2"] != "j.1" || len(m) != 2 {
		t.Fatalf("marks %v", m)
	}
	// Another join overlapping one of them is refused, and marks nothing.
	o.Fails(kv.ErrnoBusy, 0, call("mark", join("j.2", both[1], kv.IndexEntry{High: "", Leaf: "leaf.3"})))
	if m := marks(); m["leaf.3"] != "" {
		t.Fatalf("marks %v", m)
	}
	// Taking the mark over: only once it is old enough, only of that
	// mark, on both entries.
	take := kv.MarkRequest{Mark: kv.Mark{ID: "c.1", Kind: kv.MarkJoin, Takes: "j.1", Entries: both}, TakeOver: "j.1", OlderThan: 100}
	o.Fails(kv.ErrnoBusy, 0, call("mark", take.Encode()))
	o.Now = o.Now.Add(100)
	wrongID := take
	wrongID.TakeOver = "j.9"
	o.Fails(kv.ErrnoNoMark, 0, call("mark", wrongID.Encode()))
	o.OK(call("mark", take.Encode()))
	if m := marks(); m["leaf.1"] != "c.1" || m["leaf.2"] != "c.1" {
		t.Fatalf("marks after the take-over %v", m)
	}
	o.Fails(kv.ErrnoNoMark, 0, call("swap", kv.SwapRequest{ID: "j.1", Remove: []string{"k", "t"}}.Encode())) // the first owner is too late
	o.OK(call("unmark", kv.UnmarkRequest{High: "k", ID: "c.1"}.Encode()))
	o.OK(call("mark", join("j.1", both...)))
	// Unmarking one entry unmarks both; mark again.
	o.OK(call("unmark", kv.UnmarkRequest{High: "t", ID: "j.1"}.Encode()))
	if m := marks(); len(m) != 0 {
		t.Fatalf("marks after unmark %v", m)
	}
	o.OK(call("mark", join("j.1", both...)))
	o.OK(call("swap", kv.SwapRequest{ID: "j.1", Remove: []string{"k", "t"}, Add: []kv.IndexEntry{{High: "t", Leaf: "leaf.4"}}}.Encode()))
	pairs := o.OK(wire.ObjectOp{Code: wire.OpOmapGetVals}).Ops[0].Pairs
	if len(pairs) != 2 || pairs[0].Key != kv.IndexKey("t") {
		t.Fatalf("index after the join %+v", pairs)
	}
}

// Reads refuse keys the leaf does not cover; scans continue from where
// the last one stopped.
func TestRead(t *testing.T) {
	o := newObject(t)
	leaf(o, kv.Bounds{Low: "m", High: "m005"}, 5, keys(5)...)
	r := readReply(t, o, kv.ReadRequest{Keys: []string{"m003", "m001", "m0015"}})
	if r.Bounds != (kv.Bounds{Low: "m", High: "m005"}) || len(r.Pairs) != 2 || r.Pairs[0].Key != "m001" || string(r.Pairs[1].Value) != "vm003" {
		t.Fatalf("get: %+v", r)
	}
	o.Fails(kv.ErrnoNotMine, 0, call("read", kv.ReadRequest{Keys: []string{"m001", "m005"}}.Encode()))
	var got []string
	from := "m"
	for {
		r := readReply(t, o, kv.ReadRequest{Scan: true, From: from, Limit: 2})
		for _, p := range r.Pairs {
			got = append(got, p.Key)
		}
		if !r.More {
			break
		}
		from = r.Pairs[len(r.Pairs)-1].Key + "\x00"
	}
	if !slices.Equal(got, keys(5)) {
		t.Fatalf("scan %v", got)
	}
	// A scan from a present key includes it; a limit of one says
	// whether more follow.
	r = readReply(t, o, kv.ReadRequest{Scan: true, From: "m004", Limit: 1})
	if len(r.Pairs) != 1 || r.More {
		t.Fatalf("last: %+v", r)
	}
	r = readReply(t, o, kv.ReadRequest{Scan: true, From: "m003", Limit: 1})
	if len(r.Pairs) != 1 || !r.More {
		t.Fatalf("one before last: %+v", r)
	}
	o.Fails(kv.ErrnoNotMine, 0, call("read", kv.ReadRequest{Scan: true, From: "a"}.Encode()))
	// A corrupt leaf is EIO, never a wrong answer.
	o.OK(wire.ObjectOp{Code: wire.OpSetXattr, Name: kv.LeafAttr, Data: []byte("junk")})
	o.Fails(wire.EIO, 0, call("read", kv.ReadRequest{Keys: []string{"m001"}}.Encode()))
	o.Fails(wire.EIO, 0, call("write", put("m001")))
	// As is an object that is not a leaf.
	o.OK(wire.ObjectOp{Code: wire.OpRmXattr, Name: kv.LeafAttr})
	o.Fails(wire.EIO, 0, call("read", kv.ReadRequest{Keys: []string{"m001"}}.Encode()))
}

// The split's index steps: mark only an unmarked entry naming the leaf
// the client expects; swap only entries still carrying the mark.
func TestIndexMarkAndSwap(t *testing.T) {
	o := newObject(t)
	mk := kv.MarkRequest{High: "", Leaf: "leaf.1", Mark: kv.Mark{ID: "split.a", Kind: kv.MarkSplit, Old: "leaf.1",
		New: []kv.NewLeaf{{Name: "leaf.2", Bounds: kv.Bounds{High: "k"}}, {Name: "leaf.3", Bounds: kv.Bounds{Low: "k"}}}}}
	o.Fails(wire.ENOENT, 0, call("mark", mk.Encode()))
	o.OK(wire.ObjectOp{Code: wire.OpOmapSet, Pairs: []wire.KV{{Key: kv.IndexKey(""), Value: kv.Entry{Leaf: "leaf.1"}.Encode()}}})
	wrong := mk
	wrong.Leaf = "leaf.0"
	o.Fails(kv.ErrnoNotMine, 0, call("mark", wrong.Encode()))
	o.Now = o.Now.Add(5)
	o.OK(call("mark", mk.Encode()))
	other := mk
	other.Mark.ID = "split.b"
	o.Fails(kv.ErrnoBusy, 0, call("mark", other.Encode())) // the second splitter loses
	entry := func(high string) (kv.Entry, bool) {
		t.Helper()
		for _, p := range o.OK(wire.ObjectOp{Code: wire.OpOmapGetVals}).Ops[0].Pairs {
			if p.Key == kv.IndexKey(high) {
				x, err := kv.DecodeEntry(p.Value)
				if err != nil {
					t.Fatal(err)
				}
				return x, true
			}
		}
		return kv.Entry{}, false
	}
	if x, _ := entry(""); x.Mark == nil || x.Mark.ID != "split.a" || x.Mark.Created != o.Now.UnixNano() || len(x.Mark.New) != 2 {
		t.Fatalf("marked entry %+v", x)
	}
	sw := kv.SwapRequest{ID: "split.b", Remove: []string{""}, Add: []kv.IndexEntry{{High: "k", Leaf: "leaf.2"}, {High: "", Leaf: "leaf.3"}}}
	o.Fails(kv.ErrnoNoMark, 0, call("swap", sw.Encode()))
	o.Fails(kv.ErrnoNoMark, 0, call("unmark", kv.UnmarkRequest{High: "", ID: "split.b"}.Encode()))
	sw.ID = "split.a"
	// An added entry may not replace one the swap does not remove.
	o.OK(wire.ObjectOp{Code: wire.OpOmapSet, Pairs: []wire.KV{{Key: kv.IndexKey("c"), Value: kv.Entry{Leaf: "leaf.0"}.Encode()}}})
	clobber := sw
	clobber.Add = append([]kv.IndexEntry{{High: "c", Leaf: "leaf.9"}}, sw.Add...)
	o.Fails(wire.EEXIST, 0, call("swap", clobber.Encode()))
	o.OK(wire.ObjectOp{Code: wire.OpOmapRmKeys, Keys: []string{kv.IndexKey("c")}})
	o.OK(call("swap", sw.Encode()))
	if x, ok := entry("k"); !ok || x.Leaf != "leaf.2" || x.Mark != nil {
		t.Fatalf("new low entry %+v %v", x, ok)
	}
	if x, ok := entry(""); !ok || x.Leaf != "leaf.3" || x.Mark != nil {
		t.Fatalf("new high entry %+v %v", x, ok)
	}
	o.Fails(kv.ErrnoNoMark, 0, call("swap", sw.Encode())) // done once only
	// Mark and roll back.
	mk2 := kv.MarkRequest{High: "k", Leaf: "leaf.2", Mark: kv.Mark{ID: "split.c", Kind: kv.MarkSplit, Old: "leaf.2"}}
	o.OK(call("mark", mk2.Encode()))
	o.OK(call("unmark", kv.UnmarkRequest{High: "k", ID: "split.c"}.Encode()))
	if x, _ := entry("k"); x.Mark != nil {
		t.Fatalf("unmarked entry %+v", x)
	}
	// A corrupt entry is EIO.
	o.OK(wire.ObjectOp{Code: wire.OpOmapSet, Pairs: []wire.KV{{Key: kv.IndexKey("k"), Value: []byte("junk")}}})
	o.Fails(wire.EIO, 0, call("mark", mk2.Encode()))
}

func TestIndexKeyOrder(t *testing.T) {
	highs := []string{"", "b", "a", "a\x00", "\x00", "zz"}
	var idx []string
	for _, h := range highs {
		idx = append(idx, kv.IndexKey(h))
		if back, err := kv.HighOf(kv.IndexKey(h)); err != nil || back != h {
			t.Fatalf("HighOf(IndexKey(%q)) = %q, %v", h, back, err)
		}
	}
	slices.Sort(idx)
	want := []string{"\x00", "a", "a\x00", "b", "zz", ""}
	for i, k := range idx {
		if h, _ := kv.HighOf(k); h != want[i] {
			t.Fatalf("order %d: %q, want %q", i, h, want[i])
		}
	}
	for _, bad := range []string{"", "\x01", "\x03a", "a"} {
		if _, err := kv.HighOf(bad); err == nil {
			t.Errorf("HighOf(%q) accepted", bad)
		}
	}
}

func TestWriteMethods(t *testing.T) {
	r := objclass.NewRegistry()
	if err := kv.Register(r); err != nil {
		t.Fatal(err)
	}
	for method, write := range map[string]bool{"write": true, "read": false, "freeze": true, "thaw": true, "mark": true, "swap": true, "unmark": true} {
		if got := r.IsWrite([]wire.ObjectOp{call(method, nil)}); got != write {
			t.Errorf("IsWrite(kv.%s) = %v", method, got)
		}
	}
	if err := kv.Register(r); err == nil {
		t.Fatal("registered the kv class twice")
	}
}

// FuzzDecoders: no decoder panics, and what one accepts re-encodes to
// bytes it decodes to the same encoding.
func FuzzDecoders(f *testing.F) {
	f.Add(kv.Leaf{Bounds: kv.Bounds{Low: "a", High: "b"}, K: 4, Count: 3, Frozen: "x"}.Encode())
	f.Add(kv.Entry{Leaf: "l", Mark: &kv.Mark{ID: "i", Kind: 1, Created: 5, Old: "o", New: []kv.NewLeaf{{Name: "n", Bounds: kv.Bounds{Low: "c"}}}}}.Encode())
	f.Add(kv.WriteRequest{Puts: []kv.Pair{{Key: "a", Value: []byte("b")}}, Removes: []string{"c"}}.Encode())
	f.Add(kv.WriteRequest{Puts: []kv.Pair{{Key: "a", Value: []byte("b")}}, Conds: []kv.Cond{{Key: "a", Value: []byte("x")}, {Key: "d", Absent: true}}}.Encode())
	f.Add(kv.ReadRequest{Keys: []string{"a"}, Scan: true, From: "b", Limit: 3}.Encode())
	f.Add(kv.ReadReply{Bounds: kv.Bounds{Low: "a"}, Pairs: []kv.Pair{{Key: "a"}}, More: true}.Encode())
	f.Add(kv.FreezeRequest{ID: "f"}.Encode())
	f.Add(kv.FreezeRequest{ID: "f", Entries: 800}.Encode())
	f.Add(kv.FreezeReply{Leaf: kv.Leaf{K: 2, Frozen: "f"}, Entries: true, Pairs: []kv.Pair{{Key: "a", Value: []byte("b")}}, More: true}.Encode())
	f.Add(kv.MarkRequest{High: "h", Leaf: "l", Mark: kv.Mark{ID: "m"}}.Encode())
	f.Add(kv.MarkRequest{Mark: kv.Mark{ID: "m", Kind: kv.MarkJoin, Entries: []kv.IndexEntry{{High: "a", Leaf: "l"}, {Leaf: "r"}}}}.Encode())
	f.Add(kv.Entry{Leaf: "l", Mark: &kv.Mark{ID: "m", Entries: []kv.IndexEntry{{High: "a", Leaf: "l"}}, Takes: "t"}}.Encode())
	f.Add(kv.MarkRequest{Mark: kv.Mark{ID: "m", Takes: "t"}, TakeOver: "t", OlderThan: 7}.Encode())
	f.Add(kv.SwapRequest{ID: "s", Remove: []string{"h"}, Add: []kv.IndexEntry{{High: "", Leaf: "l"}}}.Encode())
	f.Add(kv.UnmarkRequest{High: "h", ID: "u"}.Encode())
	type codec struct {
		name   string
		decode func([]byte) ([]byte, error) // decode, then encode again
	}
	codecs := []codec{
		{"leaf", func(b []byte) ([]byte, error) { v, err := kv.DecodeLeaf(b); return v.Encode(), err }},
		{"entry", func(b []byte) ([]byte, error) { v, err := kv.DecodeEntry(b); return v.Encode(), err }},
		{"write", func(b []byte) ([]byte, error) { v, err := kv.DecodeWriteRequest(b); return v.Encode(), err }},
		{"read", func(b []byte) ([]byte, error) { v, err := kv.DecodeReadRequest(b); return v.Encode(), err }},
		{"reply", func(b []byte) ([]byte, error) { v, err := kv.DecodeReadReply(b); return v.Encode(), err }},
		{"freeze", func(b []byte) ([]byte, error) { v, err := kv.DecodeFreezeRequest(b); return v.Encode(), err }},
		{"frozen", func(b []byte) ([]byte, error) { v, err := kv.DecodeFreezeReply(b); return v.Encode(), err }},
		{"mark", func(b []byte) ([]byte, error) { v, err := kv.DecodeMarkRequest(b); return v.Encode(), err }},
		{"swap", func(b []byte) ([]byte, error) { v, err := kv.DecodeSwapRequest(b); return v.Encode(), err }},
		{"unmark", func(b []byte) ([]byte, error) { v, err := kv.DecodeUnmarkRequest(b); return v.Encode(), err }},
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range codecs {
			once, err := c.decode(b)
			if err != nil {
				continue
			}
			twice, err := c.decode(once)
			if err != nil || !bytes.Equal(once, twice) {
				t.Fatalf("%s: re-encoding does not round-trip: %v", c.name, err)
			}
		}
	})
}

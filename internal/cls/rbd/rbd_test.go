package rbd_test

import (
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/internal/cls/clstest"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/internal/wire"
)

func newObject(t *testing.T) *clstest.Object {
	r := objclass.NewRegistry()
	if err := rbd.Register(r); err != nil {
		t.Fatal(err)
	}
	return clstest.New(t, r)
}

func call(method string, in []byte) wire.ObjectOp { return clstest.Call(rbd.Class+"."+method, in) }

func header() rbd.Header {
	return rbd.Header{Size: 10 << 20, Order: 22, ObjectPrefix: "rbd_data.1f", Features: rbd.FeatureLayering,
		StripeUnit: 4 << 20, StripeCount: 1, DataPool: rbd.NoDataPool}
}

func get(t *testing.T, o *clstest.Object) rbd.Header {
	t.Helper()
	h, err := rbd.DecodeHeader(o.OK(call("get", nil)).Ops[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func snap(id uint64, name string, protected bool) []byte {
	return rbd.SnapRequest{ID: id, Name: name, Protected: protected}.Encode()
}

// A header made, read, resized and snapshotted: the snapshots keep the
// size at their time, the snap seq only grows, and a protected snapshot
// cannot be removed.
func TestHeader(t *testing.T) {
	o := newObject(t)
	o.Fails(wire.ENOENT, 0, call("get", nil))
	h := header()
	h.DataPool = 7
	o.OK(call("create", h.Encode()))
	o.Fails(wire.EEXIST, 0, call("create", h.Encode()))
	got := get(t, o)
	h.Created = o.Now.UnixNano()
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("get %+v, want %+v", got, h)
	}
	o.OK(call("snap_add", snap(3, "a", false)))
	o.OK(call("set_size", rbd.EncodeSize(20<<20)))
	o.OK(call("snap_add", snap(5, "b", false)))
	o.Fails(wire.EEXIST, 0, call("snap_add", snap(6, "a", false)))
	o.Fails(wire.ESTALE, 0, call("snap_add", snap(4, "c", false)))
	got = get(t, o)
	if got.Size != 20<<20 || got.SnapSeq != 5 || len(got.Snapshots) != 2 || got.Snapshots[0].Size != 10<<20 || got.Snapshots[1].Size != 20<<20 {
		t.Fatalf("after snapshots and a resize: %+v", got)
	}
	if seq, snaps := got.SnapContext(); seq != 5 || !reflect.DeepEqual(snaps, []uint64{5, 3}) {
		t.Fatalf("snap context %d %v", seq, snaps)
	}
	o.OK(call("snap_protect", snap(3, "", true)))
	o.Fails(wire.EBUSY, 0, call("snap_remove", snap(3, "", false)))
	o.OK(call("snap_protect", snap(3, "", false)))
	o.OK(call("snap_remove", snap(3, "", false)))
	o.Fails(wire.ENOENT, 0, call("snap_remove", snap(3, "", false)))
	o.Fails(wire.ENOENT, 0, call("snap_protect", snap(9, "", true)))
	got = get(t, o)
	if len(got.Snapshots) != 1 || got.Snapshots[0].Name != "b" || got.SnapSeq != 5 {
		t.Fatalf("after removing a: %+v", got)
	}
}

func TestHeaderBadInput(t *testing.T) {
	o := newObject(t)
	for _, bad := range []func(*rbd.Header){
		func(h *rbd.Header) { h.Order = 12 },
		func(h *rbd.Header) { h.Order = 30 },
		func(h *rbd.Header) { h.StripeUnit = 1000 },
		func(h *rbd.Header) { h.StripeUnit = 8 << 20 },
		func(h *rbd.Header) { h.StripeCount = 0 },
		func(h *rbd.Header) { h.Features = 1 << 40 },
		func(h *rbd.Header) { h.ObjectPrefix = "" },
		func(h *rbd.Header) { h.Size = rbd.MaxSize + 1 },
		func(h *rbd.Header) { h.SnapSeq = 1 },
	} {
		h := header()
		bad(&h)
		o.Fails(wire.EINVAL, 0, call("create", h.Encode()))
	}
	o.Fails(wire.EINVAL, 0, call("create", []byte{1, 2}))
	o.Fails(wire.ENOENT, 0, call("set_size", rbd.EncodeSize(1)))
	o.OK(call("create", header().Encode()))
	o.Fails(wire.EINVAL, 0, call("set_size", []byte{9}))
	o.Fails(wire.EINVAL, 0, call("set_size", rbd.EncodeSize(rbd.MaxSize+1)))
	o.Fails(wire.EINVAL, 0, call("snap_add", snap(0, "x", false)))
	o.Fails(wire.EINVAL, 0, call("snap_add", snap(1, "", false)))
	// A damaged header is EIO for every method that reads it.
	o.OK(wire.ObjectOp{Code: wire.OpOmapSet, Pairs: []wire.KV{{Key: "size", Value: []byte{1}}}})
	o.Fails(wire.EIO, 0, call("get", nil))
	o.Fails(wire.EIO, 0, call("snap_add", snap(1, "x", false)))
}

func dir(name, newName, id string) []byte {
	return rbd.DirRequest{Name: name, NewName: newName, ID: id}.Encode()
}

func TestDirectory(t *testing.T) {
	o := newObject(t)
	o.Fails(wire.ENOENT, 0, call("dir_remove", dir("a", "", "1")))
	o.OK(call("dir_add", dir("a", "", "1")))
	o.Fails(wire.EEXIST, 0, call("dir_add", dir("a", "", "2")))
	o.Fails(wire.EEXIST, 0, call("dir_add", dir("b", "", "1")))
	o.OK(call("dir_add", dir("b", "", "2")))
	o.Fails(wire.EEXIST, 0, call("dir_rename", dir("a", "b", "1")))
	o.Fails(wire.ESTALE, 0, call("dir_rename", dir("a", "c", "2")))
	o.OK(call("dir_rename", dir("a", "c", "1")))
	o.Fails(wire.ESTALE, 0, call("dir_remove", dir("c", "", "2")))
	o.OK(call("dir_remove", dir("b", "", "2")))
	o.Fails(wire.EINVAL, 0, call("dir_add", dir("", "", "3")))
	o.Fails(wire.EINVAL, 0, call("dir_add", []byte{0}))
	want := []wire.KV{{Key: "id_1", Value: []byte("c")}, {Key: "name_c", Value: []byte("1")}}
	if got := o.OK(wire.ObjectOp{Code: wire.OpOmapGetVals}).Ops[0].Pairs; !reflect.DeepEqual(got, want) {
		t.Fatalf("directory %q, want %q", got, want)
	}
}

func TestParseID(t *testing.T) {
	for id, ok := range map[string]bool{"1f": true, "ffffffffffffffff": true, "0": false, "1F": false, "01": false, "": false, "x": false, "10000000000000000": false} {
		if _, err := rbd.ParseID(id); (err == nil) != ok {
			t.Errorf("ParseID(%q): %v", id, err)
		}
	}
}

// FuzzDecoders: the decoders never panic, and what they accept
// round-trips.
func FuzzDecoders(f *testing.F) {
	h := header()
	h.Snapshots = []rbd.Snapshot{{ID: 2, Name: "s", Size: 5, Protected: true, Created: 9, ParentOverlap: 3}}
	h.Parent = rbd.ParentSpec{PoolID: 1, ImageID: "2a", SnapID: 3, Overlap: 4}
	f.Add(h.Encode())
	f.Add(h.Snapshots[0].Encode())
	f.Add(snap(3, "x", true))
	f.Add(dir("a", "b", "1f"))
	f.Add(rbd.EncodeSize(4096))
	om := rbd.NewObjectMap(9)
	om.Set(5, rbd.ObjectExists)
	f.Add(om.Encode())
	f.Add(rbd.ObjectMapUpdate{Start: 1, End: 3, State: 1, Expect: rbd.AnyState, SetFlags: 1}.Encode())
	f.Add(rbd.ParentSpec{PoolID: 1, ImageID: "2a", SnapID: 3, Overlap: 4}.Encode())
	f.Add(rbd.ChildRequest{SnapID: 3, Child: rbd.ChildSpec{PoolID: 1, ImageID: "2a"}}.Encode())
	f.Add(rbd.EncodeChildren([]rbd.ChildSpec{{PoolID: 1, ImageID: "2a"}, {PoolID: 2, ImageID: "3b"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := rbd.DecodeParentSpec(b); err == nil {
			if again, err := rbd.DecodeParentSpec(p.Encode()); err != nil || again != p {
				t.Fatalf("parent round trip: %v", err)
			}
		}
		if r, err := rbd.DecodeChildRequest(b); err == nil {
			if again, err := rbd.DecodeChildRequest(r.Encode()); err != nil || again != r {
				t.Fatalf("child request round trip: %v", err)
			}
		}
		if cs, err := rbd.DecodeChildren(b); err == nil {
			if again, err := rbd.DecodeChildren(rbd.EncodeChildren(cs)); err != nil || !reflect.DeepEqual(again, cs) {
				t.Fatalf("children round trip: %v", err)
			}
		}
		if m, err := rbd.DecodeObjectMap(b); err == nil {
			if again, err := rbd.DecodeObjectMap(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("object map round trip: %v", err)
			}
		}
		if u, err := rbd.DecodeObjectMapUpdate(b); err == nil {
			if again, err := rbd.DecodeObjectMapUpdate(u.Encode()); err != nil || again != u {
				t.Fatalf("object map update round trip: %v", err)
			}
		}
		if h, err := rbd.DecodeHeader(b); err == nil {
			if again, err := rbd.DecodeHeader(h.Encode()); err != nil || !reflect.DeepEqual(again, h) {
				t.Fatalf("header round trip: %v", err)
			}
		}
		if s, err := rbd.DecodeSnapshot(b); err == nil {
			if again, err := rbd.DecodeSnapshot(s.Encode()); err != nil || again != s {
				t.Fatalf("snapshot round trip: %v", err)
			}
		}
		if r, err := rbd.DecodeSnapRequest(b); err == nil {
			if again, err := rbd.DecodeSnapRequest(r.Encode()); err != nil || again != r {
				t.Fatalf("snap request round trip: %v", err)
			}
		}
		if r, err := rbd.DecodeDirRequest(b); err == nil {
			if again, err := rbd.DecodeDirRequest(r.Encode()); err != nil || again != r {
				t.Fatalf("dir request round trip: %v", err)
			}
		}
		if s, err := rbd.DecodeSize(b); err == nil {
			if again, err := rbd.DecodeSize(rbd.EncodeSize(s)); err != nil || again != s {
				t.Fatalf("size round trip: %v", err)
			}
		}
	})
}

// FuzzParseOmap: any omap content parses to a valid header or an error,
// never a panic; a valid header's own omap parses back to it.
func FuzzParseOmap(f *testing.F) {
	h := header()
	s := rbd.Snapshot{ID: 4, Name: "s", Size: 1}
	var seed []byte
	h.Parent = rbd.ParentSpec{PoolID: 1, ImageID: "2a", SnapID: 3, Overlap: 4}
	for _, kv := range append(rbd.HeaderOmap(h), wire.KV{Key: rbd.SnapKey(4), Value: s.Encode()}) {
		seed = append(seed, byte(len(kv.Key)))
		seed = append(seed, kv.Key...)
		seed = append(seed, byte(len(kv.Value)))
		seed = append(seed, kv.Value...)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		var kvs []wire.KV
		for len(b) > 0 {
			n := min(int(b[0]), len(b)-1)
			key := string(b[1 : 1+n])
			b = b[1+n:]
			if len(b) == 0 {
				break
			}
			m := min(int(b[0]), len(b)-1)
			kvs = append(kvs, wire.KV{Key: key, Value: b[1 : 1+m]})
			b = b[1+m:]
		}
		got, err := rbd.ParseOmap(kvs)
		if err != nil {
			return
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("ParseOmap returned an invalid header: %v", err)
		}
		again, err := rbd.ParseOmap(rbd.HeaderOmap(got))
		got.Snapshots = nil
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("omap round trip: %v\n%+v\n%+v", err, again, got)
		}
	})
}

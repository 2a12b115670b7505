package rbd_test

import (
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/internal/wire"
)

func child(snap uint64, pool int64, id string) []byte {
	return rbd.ChildRequest{SnapID: snap, Child: rbd.ChildSpec{PoolID: pool, ImageID: id}}.Encode()
}

// A parent's snapshot takes children only while protected, and cannot
// be unprotected nor removed while it has any.
func TestChildren(t *testing.T) {
	o := newObject(t)
	o.OK(call("create", header().Encode()))
	o.OK(call("snap_add", snap(3, "s", false)))
	o.Fails(wire.EINVAL, 0, call("child_attach", child(3, 1, "2a")))
	o.OK(call("snap_protect", snap(3, "", true)))
	o.Fails(wire.ENOENT, 0, call("child_attach", child(4, 1, "2a")))
	o.Fails(wire.EINVAL, 0, call("child_attach", child(3, 1, "XY")))
	o.OK(call("child_attach", child(3, 1, "2a")))
	o.OK(call("child_attach", child(3, 0, "3b")))
	o.Fails(wire.EEXIST, 0, call("child_attach", child(3, 1, "2a")))
	got, err := rbd.DecodeChildren(o.OK(call("children", child(3, 0, ""))).Ops[0].Data)
	want := []rbd.ChildSpec{{PoolID: 0, ImageID: "3b"}, {PoolID: 1, ImageID: "2a"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("children %v %v, want %v", got, err, want)
	}
	o.Fails(wire.EBUSY, 0, call("snap_protect", snap(3, "", false)))
	o.Fails(wire.EBUSY, 0, call("snap_remove", snap(3, "", false)))
	o.OK(call("child_detach", child(3, 1, "2a")))
	o.Fails(wire.ENOENT, 0, call("child_detach", child(3, 1, "2a")))
	o.Fails(wire.EBUSY, 0, call("snap_protect", snap(3, "", false)))
	o.OK(call("child_detach", child(3, 0, "3b")))
	got, err = rbd.DecodeChildren(o.OK(call("children", child(3, 0, ""))).Ops[0].Data)
	if err != nil || len(got) != 0 {
		t.Fatalf("children after detaching all: %v %v", got, err)
	}
	o.OK(call("snap_protect", snap(3, "", false)))
	o.OK(call("snap_remove", snap(3, "", false)))
}

// A clone's header: its parent round-trips, snapshots record the overlap,
// a shrink cuts it (growing does not restore it), and remove_parent
// detaches it.
func TestParent(t *testing.T) {
	o := newObject(t)
	h := header()
	h.Parent = rbd.ParentSpec{PoolID: 2, ImageID: "77", SnapID: 9, Overlap: h.Size + 1}
	o.Fails(wire.EINVAL, 0, call("create", h.Encode()))
	h.Parent.Overlap = 6 << 20
	o.OK(call("create", h.Encode()))
	if got := get(t, o); got.Parent != h.Parent {
		t.Fatalf("parent %+v, want %+v", got.Parent, h.Parent)
	}
	o.OK(call("snap_add", snap(1, "a", false)))
	o.OK(call("set_size", rbd.EncodeSize(4<<20)))
	o.OK(call("set_size", rbd.EncodeSize(12<<20)))
	got := get(t, o)
	if got.Parent.Overlap != 4<<20 || got.Snapshots[0].ParentOverlap != 6<<20 {
		t.Fatalf("after shrink and grow: overlap %d, snapshot's %d", got.Parent.Overlap, got.Snapshots[0].ParentOverlap)
	}
	o.OK(call("set_overlap", rbd.EncodeSize(6<<20)))
	if got := get(t, o); got.Parent.Overlap != 6<<20 {
		t.Fatalf("set_overlap: %d", got.Parent.Overlap)
	}
	o.OK(call("remove_parent", nil))
	o.Fails(wire.ENOENT, 0, call("remove_parent", nil))
	o.Fails(wire.ENOENT, 0, call("set_overlap", rbd.EncodeSize(1)))
	if got := get(t, o); !got.Parent.IsZero() {
		t.Fatalf("parent after remove_parent: %+v", got.Parent)
	}
}

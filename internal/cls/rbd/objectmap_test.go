package rbd_test

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/cls/clstest"
	"github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/internal/wire"
)

func readMap(t *testing.T, o *clstest.Object) rbd.ObjectMap {
	t.Helper()
	m, err := rbd.DecodeObjectMap(o.OK(wire.ObjectOp{Code: wire.OpRead}).Ops[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func states(m rbd.ObjectMap) []uint8 {
	out := make([]uint8, m.Count())
	for n := range out {
		out[n] = m.State(uint64(n))
	}
	return out
}

func update(u rbd.ObjectMapUpdate) wire.ObjectOp { return call("object_map_update", u.Encode()) }

// The map's states, packed four to a byte, through updates (all, or only
// those in an expected state), flags and resizes.
func TestObjectMap(t *testing.T) {
	o := newObject(t)
	o.Fails(wire.ENOENT, 0, update(rbd.ObjectMapUpdate{Start: 0, End: 1, State: rbd.ObjectExists, Expect: rbd.AnyState}))
	o.OK(wire.ObjectOp{Code: wire.OpWriteFull, Data: rbd.NewObjectMap(6).Encode()})
	o.OK(update(rbd.ObjectMapUpdate{Start: 1, End: 5, State: rbd.ObjectExists, Expect: rbd.AnyState}))
	o.OK(update(rbd.ObjectMapUpdate{Start: 3, End: 6, State: rbd.ObjectPending, Expect: rbd.ObjectExists}))
	m := readMap(t, o)
	if got, want := states(m), []uint8{0, 1, 1, 2, 2, 0}; string(got) != string(want) || m.Flags != 0 {
		t.Fatalf("states %v flags %d, want %v", got, m.Flags, want)
	}
	o.OK(update(rbd.ObjectMapUpdate{Start: 0, End: 6, State: rbd.ObjectNonexistent, Expect: rbd.ObjectPending, SetFlags: rbd.ObjectMapInvalid}))
	m = readMap(t, o)
	if got, want := states(m), []uint8{0, 1, 1, 0, 0, 0}; string(got) != string(want) || m.Flags != rbd.ObjectMapInvalid {
		t.Fatalf("states %v flags %d, want %v", got, m.Flags, want)
	}
	// Shrinking forgets the objects beyond; growing adds nonexistent ones.
	o.OK(call("object_map_resize", rbd.EncodeSize(2)))
	o.OK(call("object_map_resize", rbd.EncodeSize(11)))
	m = readMap(t, o)
	if got, want := states(m), []uint8{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}; string(got) != string(want) {
		t.Fatalf("after resizes %v, want %v", got, want)
	}
	o.OK(update(rbd.ObjectMapUpdate{Start: 10, End: 11, State: rbd.ObjectExists, Expect: rbd.AnyState, ClearFlags: rbd.ObjectMapInvalid}))
	if m = readMap(t, o); m.State(10) != rbd.ObjectExists || m.Flags != 0 || m.State(11) != rbd.ObjectNonexistent {
		t.Fatalf("map %v flags %d", states(m), m.Flags)
	}
	o.Fails(wire.EINVAL, 0, update(rbd.ObjectMapUpdate{Start: 5, End: 12, State: 1, Expect: rbd.AnyState}))
	o.Fails(wire.EINVAL, 0, update(rbd.ObjectMapUpdate{Start: 0, End: 1, State: 3, Expect: rbd.AnyState}))
	o.Fails(wire.EINVAL, 0, call("object_map_resize", rbd.EncodeSize(rbd.MaxObjectMapObjects+1)))
	o.Fails(wire.EINVAL, 0, call("object_map_update", []byte("junk")))
	o.OK(wire.ObjectOp{Code: wire.OpWriteFull, Data: []byte("junk")})
	o.Fails(wire.EIO, 0, update(rbd.ObjectMapUpdate{Start: 0, End: 0, Expect: rbd.AnyState}))
	if _, err := rbd.DecodeObjectMap(append(rbd.NewObjectMap(8).Encode()[:0:0], rbd.ObjectMap{}.Encode()...)); err != nil {
		t.Fatalf("an empty map: %v", err)
	}
}

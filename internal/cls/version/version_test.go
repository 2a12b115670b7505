package version_test

import (
	"bytes"
	"testing"

	"github.com/cuttlestore/cuttle/internal/cls/clstest"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/cls/version"
	"github.com/cuttlestore/cuttle/internal/wire"
)

func newObject(t *testing.T) (*clstest.Object, *objclass.Registry) {
	r := objclass.NewRegistry()
	if err := version.Register(r); err != nil {
		t.Fatal(err)
	}
	return clstest.New(t, r), r
}

func call(method string, in []byte) wire.ObjectOp {
	return clstest.Call(version.Class+"."+method, in)
}

func TestVersion(t *testing.T) {
	o, _ := newObject(t)
	if got := o.OK(call("read", nil)).Ops[0].Data; !bytes.Equal(got, version.Encode(0)) {
		t.Fatalf("read of a missing object %x", got)
	}
	o.OK(call("check", version.Encode(0))) // a missing object is at version 0
	if got := o.OK(call("inc", nil)).Ops[0].Data; !bytes.Equal(got, version.Encode(1)) {
		t.Fatalf("inc of a missing object %x", got)
	}
	o.OK(call("set", version.Encode(41)))
	if got := o.OK(call("inc", nil)).Ops[0].Data; !bytes.Equal(got, version.Encode(42)) {
		t.Fatalf("inc %x", got)
	}
	// Each op of a request sees what the ops before it did (ops' rule):
	// two incs in one request count twice, and a read after them sees 44.
	res := o.OK(call("inc", nil), call("inc", nil), call("read", nil))
	if !bytes.Equal(res.Ops[1].Data, version.Encode(44)) || !bytes.Equal(res.Ops[2].Data, version.Encode(44)) {
		t.Fatalf("two incs and a read in one request: %x, %x", res.Ops[1].Data, res.Ops[2].Data)
	}
	if got := o.Xattrs()["version"]; !bytes.Equal(got, version.Encode(44)) {
		t.Fatalf("stored attribute %x", got)
	}
}

func TestCheckGuardsAWrite(t *testing.T) {
	o, _ := newObject(t)
	o.OK(call("set", version.Encode(7)))
	o.OK(call("check", version.Encode(7)), wire.ObjectOp{Code: wire.OpWriteFull, Data: []byte("at 7")}, call("inc", nil))
	// The guard fails: neither the write after it nor an inc before it
	// applies.
	o.Fails(wire.ECANCELED, 1, call("inc", nil), call("check", version.Encode(7)), wire.ObjectOp{Code: wire.OpWriteFull, Data: []byte("lost")})
	res := o.OK(wire.ObjectOp{Code: wire.OpRead}, call("read", nil))
	if string(res.Ops[0].Data) != "at 7" || !bytes.Equal(res.Ops[1].Data, version.Encode(8)) {
		t.Fatalf("after a failed guard: %q at %x", res.Ops[0].Data, res.Ops[1].Data)
	}
}

func TestBadInput(t *testing.T) {
	o, _ := newObject(t)
	o.Fails(wire.EINVAL, 0, call("set", []byte{1}))
	o.Fails(wire.EINVAL, 0, call("check", nil))
	o.Fails(wire.ENOTSUP, 0, call("nope", nil))
	// A damaged attribute is EIO for every method that reads it.
	o.OK(wire.ObjectOp{Code: wire.OpSetXattr, Name: "version", Data: []byte{1, 2, 3}})
	o.Fails(wire.EIO, 0, call("read", nil))
	o.Fails(wire.EIO, 0, call("inc", nil))
	o.Fails(wire.EIO, 0, call("check", version.Encode(0)))
	o.OK(call("set", version.Encode(1))) // set does not read it
}

func TestWriteMethods(t *testing.T) {
	_, r := newObject(t)
	for method, write := range map[string]bool{"read": false, "check": false, "set": true, "inc": true} {
		if got := r.IsWrite([]wire.ObjectOp{call(method, nil)}); got != write {
			t.Errorf("IsWrite(version.%s) = %v", method, got)
		}
	}
}

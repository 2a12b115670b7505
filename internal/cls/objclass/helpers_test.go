package objclass_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cuttlestore/cuttle/internal/cls/clstest"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// TestHelpers runs every helper inside the OSD's executor, through a
// class whose methods each use one.
func TestHelpers(t *testing.T) {
	r := objclass.NewRegistry()
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	methods := map[string]objclass.Method{
		"setx": {Write: true, Run: func(c objclass.Context, in []byte) ([]byte, error) {
			return nil, objclass.SetXattr(c, "x", in)
		}},
		"getx": {Run: func(c objclass.Context, _ []byte) ([]byte, error) {
			v, ok, err := objclass.GetXattr(c, "x")
			if err == nil && !ok {
				return []byte("unset"), nil
			}
			return v, err
		}},
		"rmx": {Write: true, Run: func(c objclass.Context, _ []byte) ([]byte, error) {
			return nil, objclass.RmXattr(c, "x")
		}},
		"write": {Write: true, Run: func(c objclass.Context, in []byte) ([]byte, error) {
			return nil, objclass.Write(c, 2, in)
		}},
		"read": {Run: func(c objclass.Context, _ []byte) ([]byte, error) { return objclass.Read(c, 1, 3) }},
		"stat": {Run: func(c objclass.Context, _ []byte) ([]byte, error) {
			size, mtime, err := objclass.Stat(c)
			return append(u64(size), u64(uint64(mtime))...), err
		}},
		"omapset": {Write: true, Run: func(c objclass.Context, in []byte) ([]byte, error) {
			return nil, objclass.OmapSet(c, wire.KV{Key: "k1", Value: in}, wire.KV{Key: "k2", Value: in}, wire.KV{Key: "z", Value: nil})
		}},
		"omapget": {Run: func(c objclass.Context, _ []byte) ([]byte, error) {
			vals, err := objclass.OmapGet(c, "k2", "missing")
			if err != nil || len(vals) != 1 {
				return nil, objclass.Errorf(wire.EIO, "omap get: %v %v", vals, err)
			}
			return vals["k2"], nil
		}},
		"omaplist": {Run: func(c objclass.Context, _ []byte) ([]byte, error) {
			kvs, more, err := objclass.OmapList(c, "k1", "k", 10)
			if err != nil || more || len(kvs) != 1 || kvs[0].Key != "k2" {
				return nil, objclass.Errorf(wire.EIO, "omap list: %v %v %v", kvs, more, err)
			}
			return kvs[0].Value, nil
		}},
		"omaprm": {Write: true, Run: func(c objclass.Context, _ []byte) ([]byte, error) {
			return nil, objclass.OmapRm(c, "k2", "missing")
		}},
	}
	for name, m := range methods {
		if err := r.Register("h", name, m); err != nil {
			t.Fatal(err)
		}
	}
	o := clstest.New(t, r)
	call := func(name string, in []byte) wire.ObjectOp { return clstest.Call("h."+name, in) }
	out := func(name string) []byte { t.Helper(); return o.OK(call(name, nil)).Ops[0].Data }

	o.Fails(wire.ENOENT, 0, call("getx", nil)) // no object yet
	o.Fails(wire.ENOENT, 0, call("stat", nil))
	o.OK(call("setx", []byte("v")))
	if got := out("getx"); string(got) != "v" {
		t.Fatalf("getx %q", got)
	}
	o.OK(call("rmx", nil), call("rmx", nil)) // the second finds it still set
	o.OK(call("rmx", nil))                   // and now it is unset: not an error
	if got := out("getx"); string(got) != "unset" {
		t.Fatalf("getx after rmx %q", got)
	}

	o.OK(call("write", []byte("abcd")))
	if got := out("read"); !bytes.Equal(got, []byte("\x00ab")) {
		t.Fatalf("read %q", got)
	}
	if got := out("stat"); !bytes.Equal(got, append(u64(6), u64(uint64(o.Now.UnixNano()))...)) {
		t.Fatalf("stat %x", got)
	}

	o.OK(call("omapset", []byte("val")))
	if got := out("omapget"); string(got) != "val" {
		t.Fatalf("omapget %q", got)
	}
	if got := out("omaplist"); string(got) != "val" {
		t.Fatalf("omaplist %q", got)
	}
	o.OK(call("omaprm", nil))
	o.Fails(wire.EIO, 0, call("omapget", nil))
}

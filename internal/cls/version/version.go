package version

import (
	"encoding/binary"

	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Class is the class name the methods are registered under.
const Class = "version"

// attr is the user attribute holding the version.
const attr = "version"

// Register adds the version class's methods to r.
func Register(r *objclass.Registry) error {
	for _, m := range []struct {
		name string
		m    objclass.Method
	}{
		{"read", objclass.Method{Run: read}},
		{"set", objclass.Method{Write: true, Run: set}},
		{"inc", objclass.Method{Write: true, Run: inc}},
		{"check", objclass.Method{Run: check}},
	} {
		if err := r.Register(Class, m.name, m.m); err != nil {
			return err
		}
	}
	return nil
}

// Encode is the input or output of a method for version v: 8
// little-endian bytes.
func Encode(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// get returns the stored version, 0 if none.
func get(c objclass.Context) (uint64, error) {
	if !c.Exists() {
		return 0, nil
	}
	b, ok, err := objclass.GetXattr(c, attr)
	if err != nil || !ok {
		return 0, err
	}
	if len(b) != 8 {
		return 0, objclass.Errorf(wire.EIO, "version attribute of %d bytes", len(b))
	}
	return binary.LittleEndian.Uint64(b), nil
}

// arg decodes a method's input.
func arg(in []byte) (uint64, error) {
	if len(in) != 8 {
		return 0, objclass.Errorf(wire.EINVAL, "version input of %d bytes (want 8)", len(in))
	}
	return binary.LittleEndian.Uint64(in), nil
}

func put(c objclass.Context, v uint64) error { return objclass.SetXattr(c, attr, Encode(v)) }

func read(c objclass.Context, _ []byte) ([]byte, error) {
	v, err := get(c)
	return Encode(v), err
}

func set(c objclass.Context, in []byte) ([]byte, error) {
	v, err := arg(in)
	if err != nil {
		return nil, err
	}
	return nil, put(c, v)
}

func inc(c objclass.Context, _ []byte) ([]byte, error) {
	v, err := get(c)
	if err != nil {
		return nil, err
	}
	v++
	return Encode(v), put(c, v)
}

func check(c objclass.Context, in []byte) ([]byte, error) {
	want, err := arg(in)
	if err != nil {
		return nil, err
	}
	v, err := get(c)
	if err != nil {
		return nil, err
	}
	if v != want {
		return nil, objclass.Errorf(wire.ECANCELED, "version is %d, not %d", v, want)
	}
	return nil, nil
}

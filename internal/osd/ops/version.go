package ops

import (
	"encoding/binary"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// The version class: an application-managed version number on an object,
// stored in the user attribute "version" as 8 little-endian bytes (as
// Ceph's cls_version keeps one for its gateways). Methods, each taking
// and returning 8 bytes where they take or return a number:
//
//	version.read   -> the version (0 if never set)
//	version.set    N -> nothing
//	version.inc    -> the new version
//	version.check  N -> nothing; ECANCELED unless the version equals N

const versionAttr = "version"

func registerVersion(r *Registry) {
	must(r.Register("version", "read", Method{Run: versionRead}))
	must(r.Register("version", "set", Method{Write: true, Run: versionSet}))
	must(r.Register("version", "inc", Method{Write: true, Run: versionInc}))
	must(r.Register("version", "check", Method{Run: versionCheck}))
}

func versionGet(mc *MethodContext) (uint64, error) {
	if !mc.Exists() {
		return 0, nil
	}
	out, err := mc.Do(wire.ObjectOp{Code: wire.OpGetXattr, Name: versionAttr})
	if code, _ := Code(err); code == wire.ENODATA {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	if len(out.Data) != 8 {
		return 0, Errorf(wire.EIO, "version attribute of %d bytes", len(out.Data))
	}
	return binary.LittleEndian.Uint64(out.Data), nil
}

func versionArg(in []byte) (uint64, error) {
	if len(in) != 8 {
		return 0, Errorf(wire.EINVAL, "version input of %d bytes (want 8)", len(in))
	}
	return binary.LittleEndian.Uint64(in), nil
}

func versionPut(mc *MethodContext, v uint64) error {
	_, err := mc.Do(wire.ObjectOp{Code: wire.OpSetXattr, Name: versionAttr, Data: binary.LittleEndian.AppendUint64(nil, v)})
	return err
}

func versionRead(mc *MethodContext, _ []byte) ([]byte, error) {
	v, err := versionGet(mc)
	return binary.LittleEndian.AppendUint64(nil, v), err
}

func versionSet(mc *MethodContext, in []byte) ([]byte, error) {
	v, err := versionArg(in)
	if err != nil {
		return nil, err
	}
	return nil, versionPut(mc, v)
}

func versionInc(mc *MethodContext, _ []byte) ([]byte, error) {
	v, err := versionGet(mc)
	if err != nil {
		return nil, err
	}
	v++
	return binary.LittleEndian.AppendUint64(nil, v), versionPut(mc, v)
}

func versionCheck(mc *MethodContext, in []byte) ([]byte, error) {
	want, err := versionArg(in)
	if err != nil {
		return nil, err
	}
	v, err := versionGet(mc)
	if err != nil {
		return nil, err
	}
	if v != want {
		return nil, Errorf(wire.ECANCELED, "version is %d, not %d", v, want)
	}
	return nil, nil
}

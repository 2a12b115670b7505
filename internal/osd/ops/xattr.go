package ops

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Extended-attribute ops: get, get all, compare, set, remove.

// maxXattrName bounds a user attribute's name, as Ceph's
// osd_max_attr_name_len does.
const maxXattrName = 100

func checkXattrName(name string) error {
	if name == "" || len(name) > maxXattrName {
		return fail(wire.EINVAL, "attribute name of %d bytes (want 1 to %d)", len(name), maxXattrName)
	}
	return nil
}

func (x *executor) getXattr(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	v, err := x.userAttr(op.Name)
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	if v == nil {
		return wire.ObjectOpResult{}, fail(wire.ENODATA, "no attribute %q", op.Name)
	}
	return wire.ObjectOpResult{Data: v}, nil
}

// userAttr returns the user attribute name, or nil if it is not set.
func (x *executor) userAttr(name string) ([]byte, error) {
	if err := checkXattrName(name); err != nil {
		return nil, err
	}
	if err := x.mustExist(); err != nil {
		return nil, err
	}
	if x.pending() {
		v, set, err := x.pendingAttr(UserAttrPrefix + name)
		if set && v == nil {
			v = []byte{}
		}
		return v, err
	}
	v, err := x.env.Store.GetAttr(x.ctx, x.env.Collection, x.env.Object, UserAttrPrefix+name)
	switch {
	case errors.Is(err, objectstore.ErrNoAttr):
		return nil, nil
	case err != nil:
		return nil, x.storeErr("getxattr", err)
	case v == nil:
		v = []byte{}
	}
	return v, nil
}

func (x *executor) getXattrs(*wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	var attrs map[string][]byte
	var err error
	if x.pending() {
		attrs, err = x.pendingAttrs()
	} else if attrs, err = x.env.Store.GetAttrs(x.ctx, x.env.Collection, x.env.Object); err != nil {
		err = x.storeErr("getxattrs", err)
	}
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	var out wire.ObjectOpResult
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		if name, ok := strings.CutPrefix(k, UserAttrPrefix); ok {
			out.Pairs = append(out.Pairs, wire.KV{Key: name, Value: attrs[k]})
		}
	}
	return out, nil
}

// cmpXattr compares the stored value (empty if unset, as Ceph does) with
// op.Data; a false comparison is ECANCELED.
func (x *executor) cmpXattr(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	v, err := x.userAttr(op.Name)
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	ok, err := compare(wire.CmpOp(op.Flags), v, op.Data)
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	if !ok {
		return wire.ObjectOpResult{}, fail(wire.ECANCELED, "attribute %q comparison failed", op.Name)
	}
	return wire.ObjectOpResult{}, nil
}

// compare applies c to stored and given, bytewise.
func compare(c wire.CmpOp, stored, given []byte) (bool, error) {
	r := bytes.Compare(stored, given)
	switch c {
	case wire.CmpEQ:
		return r == 0, nil
	case wire.CmpNE:
		return r != 0, nil
	case wire.CmpGT:
		return r > 0, nil
	case wire.CmpGTE:
		return r >= 0, nil
	case wire.CmpLT:
		return r < 0, nil
	case wire.CmpLTE:
		return r <= 0, nil
	}
	return false, fail(wire.EINVAL, "unknown comparison %d", c)
}

func (x *executor) setXattr(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := checkXattrName(op.Name); err != nil {
		return wire.ObjectOpResult{}, err
	}
	x.created()
	x.txn().SetAttr(x.env.Collection, x.env.Object, UserAttrPrefix+op.Name, op.Data)
	return wire.ObjectOpResult{}, nil
}

func (x *executor) rmXattr(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	v, err := x.userAttr(op.Name)
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	if v == nil {
		return wire.ObjectOpResult{}, fail(wire.ENODATA, "no attribute %q", op.Name)
	}
	x.infoDirty = true
	x.txn().RmAttr(x.env.Collection, x.env.Object, UserAttrPrefix+op.Name)
	return wire.ObjectOpResult{}, nil
}

package ops

import (
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Omap ops: header, keys, values, values by key, compare, set, remove,
// clear, set header.

// defaultOmapMax is how many entries an omap listing returns when the op
// asks for none in particular, and maxOmapList the most it returns.
const (
	defaultOmapMax = 512
	maxOmapList    = 1 << 16
)

func (x *executor) omapGetHeader(*wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	if x.pending() {
		h, err := x.pendingOmapHeader()
		return wire.ObjectOpResult{Data: h}, err
	}
	h, err := x.env.Store.OmapGetHeader(x.ctx, x.env.Collection, x.env.Object)
	if err != nil {
		return wire.ObjectOpResult{}, x.storeErr("omap header", err)
	}
	return wire.ObjectOpResult{Data: h}, nil
}

// omapList returns up to op.Length entries after op.Name with prefix
// op.Prefix.
func (x *executor) omapList(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	limit := int(min(op.Length, maxOmapList))
	if limit == 0 {
		limit = defaultOmapMax
	}
	var kvs []objectstore.KV
	var more bool
	var err error
	if x.pending() {
		kvs, more, err = x.pendingOmapList(op.Name, op.Prefix, limit)
	} else if kvs, more, err = x.env.Store.OmapIterate(x.ctx, x.env.Collection, x.env.Object, op.Name, op.Prefix, limit); err != nil {
		err = x.storeErr("omap iterate", err)
	}
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	out := wire.ObjectOpResult{More: more, Pairs: make([]wire.KV, len(kvs))}
	for i, kv := range kvs {
		out.Pairs[i] = wire.KV{Key: kv.Key, Value: kv.Value}
	}
	return out, nil
}

func (x *executor) omapGetKeys(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	out, err := x.omapList(op)
	if err != nil {
		return out, err
	}
	out.Keys = make([]string, len(out.Pairs))
	for i, kv := range out.Pairs {
		out.Keys[i] = kv.Key
	}
	out.Pairs = nil
	return out, nil
}

func (x *executor) omapGetVals(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	return x.omapList(op)
}

// omapValues returns the entries of keys that exist.
func (x *executor) omapValues(keys []string) (map[string][]byte, error) {
	if x.pending() {
		return x.pendingOmapValues(keys)
	}
	vals, err := x.env.Store.OmapGetValues(x.ctx, x.env.Collection, x.env.Object, keys)
	if err != nil {
		return nil, x.storeErr("omap get", err)
	}
	return vals, nil
}

func (x *executor) omapGetByKeys(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	vals, err := x.omapValues(op.Keys)
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	var out wire.ObjectOpResult
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		out.Pairs = append(out.Pairs, wire.KV{Key: k, Value: vals[k]})
	}
	return out, nil
}

// omapCmp compares each stored value with the given one; a missing key
// fails the comparison, as in Ceph.
func (x *executor) omapCmp(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	keys := make([]string, len(op.Pairs))
	for i, kv := range op.Pairs {
		keys[i] = kv.Key
	}
	vals, err := x.omapValues(keys)
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	for _, kv := range op.Pairs {
		stored, present := vals[kv.Key]
		if !present {
			return wire.ObjectOpResult{}, fail(wire.ECANCELED, "omap key %q is missing", kv.Key)
		}
		ok, err := compare(wire.CmpOp(op.Flags), stored, kv.Value)
		if err != nil {
			return wire.ObjectOpResult{}, err
		}
		if !ok {
			return wire.ObjectOpResult{}, fail(wire.ECANCELED, "omap key %q comparison failed", kv.Key)
		}
	}
	return wire.ObjectOpResult{}, nil
}

func (x *executor) omapSet(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	x.created()
	kv := make(map[string][]byte, len(op.Pairs))
	for _, p := range op.Pairs {
		if p.Value == nil {
			p.Value = []byte{}
		}
		kv[p.Key] = p.Value
	}
	x.txn().OmapSetKeys(x.env.Collection, x.env.Object, kv)
	return wire.ObjectOpResult{}, nil
}

func (x *executor) omapRmKeys(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	x.infoDirty = true
	x.txn().OmapRmKeys(x.env.Collection, x.env.Object, op.Keys...)
	return wire.ObjectOpResult{}, nil
}

func (x *executor) omapClear(*wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	x.infoDirty = true
	x.txn().OmapClear(x.env.Collection, x.env.Object)
	return wire.ObjectOpResult{}, nil
}

func (x *executor) omapSetHeader(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	x.created()
	x.txn().OmapSetHeader(x.env.Collection, x.env.Object, op.Data)
	return wire.ObjectOpResult{}, nil
}

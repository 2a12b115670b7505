package rados

import (
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// CmpOp is how CmpXattr and CmpOmap compare the stored value with the
// given one, bytewise.
type CmpOp uint32

// Comparisons: the stored value OP the given value.
const (
	CmpEq  = CmpOp(wire.CmpEQ)
	CmpNe  = CmpOp(wire.CmpNE)
	CmpGt  = CmpOp(wire.CmpGT)
	CmpGte = CmpOp(wire.CmpGTE)
	CmpLt  = CmpOp(wire.CmpLT)
	CmpLte = CmpOp(wire.CmpLTE)
)

// WriteOp is a compound write: its operations apply to one object
// atomically, all or none, in order, when IOContext.OperateWrite (or
// OperateWriteAsync) runs it. Build it with the methods, which append one
// operation each; a WriteOp may be run more than once. The byte slices
// given must not change until the operation completes (a resend sends
// them again). Asserts and comparisons fail the whole operation, so
// they guard the writes after them.
type WriteOp struct {
	ops   []wire.ObjectOp
	steps []func(*wire.ObjectOpResult)
}

// NewWriteOp returns an empty WriteOp.
func NewWriteOp() *WriteOp { return &WriteOp{} }

func (w *WriteOp) add(op wire.ObjectOp) { w.ops = append(w.ops, op); w.steps = append(w.steps, nil) }

// Create creates the object; if exclusive, the operation fails with
// ErrExists when it already exists.
func (w *WriteOp) Create(exclusive bool) {
	var f uint32
	if exclusive {
		f = wire.CreateExclusive
	}
	w.add(wire.ObjectOp{Code: wire.OpCreate, Flags: f})
}

// Write writes data at offset.
func (w *WriteOp) Write(data []byte, offset uint64) {
	w.add(wire.ObjectOp{Code: wire.OpWrite, Offset: offset, Data: data})
}

// WriteFull replaces the object's data with data.
func (w *WriteOp) WriteFull(data []byte) { w.add(wire.ObjectOp{Code: wire.OpWriteFull, Data: data}) }

// Append writes data at the end of the object.
func (w *WriteOp) Append(data []byte) { w.add(wire.ObjectOp{Code: wire.OpAppend, Data: data}) }

// Truncate sets the object's size.
func (w *WriteOp) Truncate(size uint64) { w.add(wire.ObjectOp{Code: wire.OpTruncate, Offset: size}) }

// Zero zeroes length bytes at offset.
func (w *WriteOp) Zero(offset, length uint64) {
	w.add(wire.ObjectOp{Code: wire.OpZero, Offset: offset, Length: length})
}

// Remove deletes the object (ErrNotFound if it does not exist).
func (w *WriteOp) Remove() { w.add(wire.ObjectOp{Code: wire.OpDelete}) }

// SetXattr sets an extended attribute.
func (w *WriteOp) SetXattr(name string, value []byte) {
	w.add(wire.ObjectOp{Code: wire.OpSetXattr, Name: name, Data: value})
}

// RmXattr removes an extended attribute (ErrNoAttr if it is absent).
func (w *WriteOp) RmXattr(name string) { w.add(wire.ObjectOp{Code: wire.OpRmXattr, Name: name}) }

// SetOmap sets omap entries.
func (w *WriteOp) SetOmap(pairs map[string][]byte) {
	w.add(wire.ObjectOp{Code: wire.OpOmapSet, Pairs: sortedPairs(pairs)})
}

// RmOmapKeys removes omap entries.
func (w *WriteOp) RmOmapKeys(keys []string) {
	w.add(wire.ObjectOp{Code: wire.OpOmapRmKeys, Keys: slices.Clone(keys)})
}

// ClearOmap removes every omap entry.
func (w *WriteOp) ClearOmap() { w.add(wire.ObjectOp{Code: wire.OpOmapClear}) }

// SetOmapHeader sets the omap header.
func (w *WriteOp) SetOmapHeader(header []byte) {
	w.add(wire.ObjectOp{Code: wire.OpOmapSetHeader, Data: header})
}

// AssertExists fails the operation with ErrNotFound if the object does
// not exist.
func (w *WriteOp) AssertExists() { w.add(wire.ObjectOp{Code: wire.OpAssertExists}) }

// AssertVersion fails the operation with ErrVersionMismatch unless the
// object's version (Completion.Version, IOContext.Stat) is version.
func (w *WriteOp) AssertVersion(version uint64) {
	w.add(wire.ObjectOp{Code: wire.OpAssertVersion, Version: version})
}

// CmpXattr fails the operation with ErrCompareFailed unless the stored
// attribute compares to value as op says.
func (w *WriteOp) CmpXattr(name string, op CmpOp, value []byte) {
	w.add(wire.ObjectOp{Code: wire.OpCmpXattr, Name: name, Flags: uint32(op), Data: value})
}

// CmpOmap fails the operation with ErrCompareFailed unless every given
// omap entry exists and compares to its value as op says.
func (w *WriteOp) CmpOmap(op CmpOp, pairs map[string][]byte) {
	w.add(wire.ObjectOp{Code: wire.OpOmapCmp, Flags: uint32(op), Pairs: sortedPairs(pairs)})
}

// Exec calls an object-class method ("class.method" on the OSD) with
// input in; its output is in the step once the operation completes.
func (w *WriteOp) Exec(class, method string, in []byte) *ExecStep {
	st := &ExecStep{}
	w.ops = append(w.ops, wire.ObjectOp{Code: wire.OpCall, Name: class + "." + method, Data: in})
	w.steps = append(w.steps, func(r *wire.ObjectOpResult) { st.Output = r.Data })
	return st
}

func sortedPairs(m map[string][]byte) []wire.KV {
	keys := slices.Sorted(maps.Keys(m))
	kvs := make([]wire.KV, len(keys))
	for i, k := range keys {
		kvs[i] = wire.KV{Key: k, Value: m[k]}
	}
	return kvs
}

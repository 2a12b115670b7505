package rados

import (
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// ReadOp is a compound read of one object: its operations run in order
// on the same version of the object, and their results land in the steps
// the methods return once IOContext.OperateRead (or OperateReadAsync)
// succeeds. Asserts and comparisons fail the whole operation. A ReadOp
// may be run more than once; each run overwrites its steps.
type ReadOp struct {
	ops   []wire.ObjectOp
	steps []func(*wire.ObjectOpResult)
	// keeps counts the steps that keep slices of the reply; with none,
	// the reply's buffer goes back to the messenger once they ran.
	keeps int
}

// NewReadOp returns an empty ReadOp.
func NewReadOp() *ReadOp { return &ReadOp{} }

// add appends an op whose step may keep slices of the reply.
func (r *ReadOp) add(op wire.ObjectOp, step func(*wire.ObjectOpResult)) {
	r.addCopying(op, step)
	r.keeps++
}

// addCopying appends an op whose step keeps nothing of the reply.
func (r *ReadOp) addCopying(op wire.ObjectOp, step func(*wire.ObjectOpResult)) {
	r.ops = append(r.ops, op)
	r.steps = append(r.steps, step)
}

// ReadStep holds the bytes an op returned.
type ReadStep struct{ Data []byte }

// ExecStep holds an object-class method's output.
type ExecStep struct{ Output []byte }

// Extent is an allocated range of an object.
type Extent struct{ Offset, Length uint64 }

// SparseReadStep holds a sparse read's allocated extents and their
// bytes, concatenated in extent order.
type SparseReadStep struct {
	Extents []Extent
	Data    []byte
}

// StatStep holds an object's size and modification time.
type StatStep struct {
	Size    uint64
	ModTime time.Time
}

// XattrsStep holds an object's extended attributes.
type XattrsStep struct{ Attrs map[string][]byte }

// KeyValue is one omap entry.
type KeyValue struct {
	Key   string
	Value []byte
}

// OmapKeysStep holds omap keys in order, and whether more follow.
type OmapKeysStep struct {
	Keys []string
	More bool
}

// OmapStep holds omap entries in key order, and whether more follow.
type OmapStep struct {
	Pairs []KeyValue
	More  bool
}

// Map returns the entries as a map.
func (s *OmapStep) Map() map[string][]byte {
	m := make(map[string][]byte, len(s.Pairs))
	for _, kv := range s.Pairs {
		m[kv.Key] = kv.Value
	}
	return m
}

// Read reads length bytes at offset (0: to the end of the object).
func (r *ReadOp) Read(offset, length uint64) *ReadStep {
	st := &ReadStep{}
	r.add(wire.ObjectOp{Code: wire.OpRead, Offset: offset, Length: length}, func(res *wire.ObjectOpResult) { st.Data = res.Data })
	return st
}

// ReadInto reads up to len(buf) bytes at offset into buf, as librados'
// rados_read does: the step's Data is the part of buf filled (shorter at
// the end of the object; empty, for an empty buf, if the object exists).
// A ReadOp whose steps all copy (ReadInto, Stat) hands the reply's buffer
// back to the messenger at once, so a reader that reuses its buffers
// allocates nothing per read.
func (r *ReadOp) ReadInto(offset uint64, buf []byte) *ReadStep {
	st := &ReadStep{}
	if len(buf) == 0 {
		// A read of length 0 reads to the end: ask whether it exists.
		r.addCopying(wire.ObjectOp{Code: wire.OpStat}, func(*wire.ObjectOpResult) { st.Data = buf[:0] })
		return st
	}
	r.addCopying(wire.ObjectOp{Code: wire.OpRead, Offset: offset, Length: uint64(len(buf))}, func(res *wire.ObjectOpResult) {
		st.Data = buf[:copy(buf, res.Data)]
	})
	return st
}

// SparseRead reads the allocated parts of length bytes at offset.
func (r *ReadOp) SparseRead(offset, length uint64) *SparseReadStep {
	st := &SparseReadStep{}
	r.add(wire.ObjectOp{Code: wire.OpSparseRead, Offset: offset, Length: length}, func(res *wire.ObjectOpResult) {
		st.Extents = make([]Extent, len(res.Extents))
		for i, e := range res.Extents {
			st.Extents[i] = Extent{Offset: e.Offset, Length: e.Length}
		}
		st.Data = res.Data
	})
	return st
}

// Stat reads the object's size and modification time.
func (r *ReadOp) Stat() *StatStep {
	st := &StatStep{}
	r.addCopying(wire.ObjectOp{Code: wire.OpStat}, func(res *wire.ObjectOpResult) {
		st.Size, st.ModTime = res.Size, time.Unix(0, res.Mtime)
	})
	return st
}

// GetXattr reads one extended attribute (ErrNoAttr if absent).
func (r *ReadOp) GetXattr(name string) *ReadStep {
	st := &ReadStep{}
	r.add(wire.ObjectOp{Code: wire.OpGetXattr, Name: name}, func(res *wire.ObjectOpResult) { st.Data = res.Data })
	return st
}

// GetXattrs reads every extended attribute.
func (r *ReadOp) GetXattrs() *XattrsStep {
	st := &XattrsStep{}
	r.add(wire.ObjectOp{Code: wire.OpGetXattrs}, func(res *wire.ObjectOpResult) {
		st.Attrs = make(map[string][]byte, len(res.Pairs))
		for _, kv := range res.Pairs {
			st.Attrs[kv.Key] = kv.Value
		}
	})
	return st
}

// GetOmapHeader reads the omap header.
func (r *ReadOp) GetOmapHeader() *ReadStep {
	st := &ReadStep{}
	r.add(wire.ObjectOp{Code: wire.OpOmapGetHeader}, func(res *wire.ObjectOpResult) { st.Data = res.Data })
	return st
}

// GetOmapKeys reads up to max omap keys after startAfter ("" for the
// first) that begin with prefix.
func (r *ReadOp) GetOmapKeys(startAfter, prefix string, max uint64) *OmapKeysStep {
	st := &OmapKeysStep{}
	r.add(wire.ObjectOp{Code: wire.OpOmapGetKeys, Name: startAfter, Prefix: prefix, Length: max}, func(res *wire.ObjectOpResult) {
		st.Keys, st.More = res.Keys, res.More
	})
	return st
}

// GetOmapVals reads up to max omap entries after startAfter ("" for the
// first) whose keys begin with prefix.
func (r *ReadOp) GetOmapVals(startAfter, prefix string, max uint64) *OmapStep {
	st := &OmapStep{}
	r.add(wire.ObjectOp{Code: wire.OpOmapGetVals, Name: startAfter, Prefix: prefix, Length: max}, func(res *wire.ObjectOpResult) {
		st.Pairs, st.More = kvs(res.Pairs), res.More
	})
	return st
}

// GetOmapValsByKeys reads the omap entries of the given keys that exist.
func (r *ReadOp) GetOmapValsByKeys(keys ...string) *OmapStep {
	st := &OmapStep{}
	r.add(wire.ObjectOp{Code: wire.OpOmapGetByKeys, Keys: slices.Clone(keys)}, func(res *wire.ObjectOpResult) {
		st.Pairs, st.More = kvs(res.Pairs), false
	})
	return st
}

// CmpXattr fails the operation with ErrCompareFailed unless the stored
// attribute compares to value as op says.
func (r *ReadOp) CmpXattr(name string, op CmpOp, value []byte) {
	r.add(wire.ObjectOp{Code: wire.OpCmpXattr, Name: name, Flags: uint32(op), Data: value}, nil)
}

// CmpOmap fails the operation with ErrCompareFailed unless every given
// omap entry exists and compares to its value as op says.
func (r *ReadOp) CmpOmap(op CmpOp, pairs map[string][]byte) {
	r.add(wire.ObjectOp{Code: wire.OpOmapCmp, Flags: uint32(op), Pairs: sortedPairs(pairs)}, nil)
}

// AssertExists fails the operation with ErrNotFound if the object does
// not exist.
func (r *ReadOp) AssertExists() { r.add(wire.ObjectOp{Code: wire.OpAssertExists}, nil) }

// AssertVersion fails the operation with ErrVersionMismatch unless the
// object's version is version.
func (r *ReadOp) AssertVersion(version uint64) {
	r.add(wire.ObjectOp{Code: wire.OpAssertVersion, Version: version}, nil)
}

// Exec calls a read-only object-class method ("class.method").
func (r *ReadOp) Exec(class, method string, in []byte) *ExecStep {
	st := &ExecStep{}
	r.add(wire.ObjectOp{Code: wire.OpCall, Name: class + "." + method, Data: in}, func(res *wire.ObjectOpResult) { st.Output = res.Data })
	return st
}

func kvs(in []wire.KV) []KeyValue {
	out := make([]KeyValue, len(in))
	for i, kv := range in {
		out[i] = KeyValue{Key: kv.Key, Value: kv.Value}
	}
	return out
}

// fillSteps stores a reply's per-op results in the steps.
func fillSteps(steps []func(*wire.ObjectOpResult), r *wire.OSDOpReply) {
	for i, f := range steps {
		if f != nil && i < len(r.Ops) {
			f(&r.Ops[i])
		}
	}
}

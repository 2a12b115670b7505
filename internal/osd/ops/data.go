package ops

import (
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Data ops: read, sparse read, stat, write, write full, append, truncate,
// zero, delete, create.

func (x *executor) read(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	if x.pending() {
		b, err := x.pendingRead(op.Offset, op.Length)
		return wire.ObjectOpResult{Data: b}, err
	}
	var b []byte
	var crc uint32
	var err error
	cr, known := x.env.Store.(objectstore.CRCReader)
	if known {
		b, crc, err = cr.ReadCRC(x.ctx, x.env.Collection, x.env.Object, op.Offset, op.Length)
	} else {
		b, err = x.env.Store.Read(x.ctx, x.env.Collection, x.env.Object, op.Offset, op.Length)
	}
	if err != nil {
		return wire.ObjectOpResult{}, x.storeErr("read", err)
	}
	x.res.Buffers = append(x.res.Buffers, b)
	if known {
		x.res.CRCs = append(x.res.CRCs, DataCRC{b, crc})
	}
	return wire.ObjectOpResult{Data: b}, nil
}

func (x *executor) sparseRead(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	if x.pending() {
		// The whole range reads as data (holes as zeros), one extent.
		b, err := x.pendingRead(op.Offset, op.Length)
		if err != nil || len(b) == 0 {
			return wire.ObjectOpResult{}, err
		}
		return wire.ObjectOpResult{Extents: []wire.Extent{{Offset: op.Offset, Length: uint64(len(b))}}, Data: b}, nil
	}
	exts, err := x.env.Store.ExtentMap(x.ctx, x.env.Collection, x.env.Object, op.Offset, op.Length)
	if err != nil {
		return wire.ObjectOpResult{}, x.storeErr("extent map", err)
	}
	var out wire.ObjectOpResult
	for _, e := range exts {
		b, err := x.env.Store.Read(x.ctx, x.env.Collection, x.env.Object, e.Offset, e.Length)
		if err != nil {
			return wire.ObjectOpResult{}, x.storeErr("sparse read", err)
		}
		out.Extents = append(out.Extents, wire.Extent{Offset: e.Offset, Length: uint64(len(b))})
		out.Data = append(out.Data, b...)
	}
	return out, nil
}

func (x *executor) stat(*wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	mtime := x.info.Mtime
	if x.infoDirty { // an earlier op wrote: the time it records
		mtime = x.env.Now.UnixNano()
	}
	return wire.ObjectOpResult{Size: x.size, Mtime: mtime}, nil
}

// checkExtent fails with EFBIG for a range past the largest object size
// and EINVAL for one that overflows.
func checkExtent(off, length uint64) error {
	end := off + length
	if end < off {
		return fail(wire.EINVAL, "range %d+%d overflows", off, length)
	}
	if end > objectstore.MaxObjectSize {
		return fail(wire.EFBIG, "range %d+%d past the largest object size %d", off, length, uint64(objectstore.MaxObjectSize))
	}
	return nil
}

func (x *executor) write(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := checkExtent(op.Offset, uint64(len(op.Data))); err != nil {
		return wire.ObjectOpResult{}, err
	}
	x.created()
	x.txn().Write(x.env.Collection, x.env.Object, op.Offset, op.Data)
	x.size = max(x.size, op.Offset+uint64(len(op.Data)))
	return wire.ObjectOpResult{}, nil
}

func (x *executor) writeFull(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := checkExtent(0, uint64(len(op.Data))); err != nil {
		return wire.ObjectOpResult{}, err
	}
	existed := x.exists
	x.created()
	if existed {
		x.txn().Truncate(x.env.Collection, x.env.Object, 0)
	}
	x.txn().Write(x.env.Collection, x.env.Object, 0, op.Data)
	x.size = uint64(len(op.Data))
	return wire.ObjectOpResult{}, nil
}

func (x *executor) appendData(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	x.created()
	op2 := *op
	op2.Offset = x.size
	return x.write(&op2)
}

func (x *executor) truncate(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := checkExtent(op.Offset, 0); err != nil {
		return wire.ObjectOpResult{}, err
	}
	x.created()
	x.txn().Truncate(x.env.Collection, x.env.Object, op.Offset)
	x.size = op.Offset
	return wire.ObjectOpResult{}, nil
}

// zero zeroes within the object only: like Ceph's, it never extends it,
// and on a missing object it does nothing.
func (x *executor) zero(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := checkExtent(op.Offset, op.Length); err != nil {
		return wire.ObjectOpResult{}, err
	}
	if !x.exists || op.Offset >= x.size || op.Length == 0 {
		return wire.ObjectOpResult{}, nil
	}
	length := min(op.Length, x.size-op.Offset)
	x.infoDirty = true
	x.txn().Zero(x.env.Collection, x.env.Object, op.Offset, length)
	return wire.ObjectOpResult{}, nil
}

func (x *executor) remove(*wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	x.txn().Remove(x.env.Collection, x.env.Object)
	x.exists, x.size, x.info, x.infoDirty = false, 0, Info{}, false
	return wire.ObjectOpResult{}, nil
}

func (x *executor) create(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if x.exists && op.Flags&wire.CreateExclusive != 0 {
		return wire.ObjectOpResult{}, fail(wire.EEXIST, "%v exists", x.env.Object)
	}
	x.created()
	return wire.ObjectOpResult{}, nil
}

func (x *executor) assertExists(*wire.ObjectOp) (wire.ObjectOpResult, error) {
	return wire.ObjectOpResult{}, x.mustExist()
}

// assertVersion compares with the counter of the object's version (its
// user-visible version; counters grow within the PG): ERANGE if the
// given one is older, EOVERFLOW if newer, as Ceph's assert_ver.
func (x *executor) assertVersion(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	cur := x.info.Version.Counter
	switch {
	case op.Version < cur:
		return wire.ObjectOpResult{}, fail(wire.ERANGE, "version %d is older than %d", op.Version, cur)
	case op.Version > cur:
		return wire.ObjectOpResult{}, fail(wire.EOVERFLOW, "version %d is newer than %d", op.Version, cur)
	}
	return wire.ObjectOpResult{}, nil
}

package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// Env is what one execution needs: the store to read, the object and its
// collection, and the values a write stamps on the object.
type Env struct {
	Store      objectstore.Store
	Collection objectstore.CollectionID
	Object     objid.ID
	Classes    *objclass.Registry // nil: OpCall fails with ENOTSUP
	// Version is what a write makes the object's version; the primary
	// assigns it. Now is the modification time a write records.
	Version wire.Version
	Now     time.Time
	// Caller is the requesting entity, for class methods (locks record
	// their owner); callers may leave it empty for requests with no
	// OpCall.
	Caller string
	// Loaded, if not nil, is the object as Load read it for this
	// execution: Execute starts from it instead of reading the object
	// again (the primary reads the snap set in the same load).
	Loaded *State
}

// State is what an execution starts from: the object's existence, size
// and info attribute (raw: Execute decodes it; HasInfo false if the
// object has none), and the extra attribute Load was asked for (nil if
// absent or the object does not exist).
type State struct {
	Exists  bool
	Size    uint64
	HasInfo bool
	Info    []byte
	Extra   []byte
}

// Load reads what Execute starts from, and the attribute extra too if
// it is not empty, in one lookup of the object's metadata where the
// store can (objectstore.AttrStater).
func Load(ctx context.Context, store objectstore.Store, c objectstore.CollectionID, o objid.ID, extra string) (State, error) {
	var st State
	got, err := objectstore.StatAttrsOf(ctx, store, c, o, [2]string{InfoAttr, extra})
	switch {
	case errors.Is(err, objectstore.ErrNotFound):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("ops: stat %v: %w", o, err)
	}
	st.Exists, st.Size = true, got.Info.Size
	st.HasInfo, st.Info = got.Has[0], got.Vals[0] // none: created by a bare store write (recovery tools); version 0
	if got.Has[1] {
		st.Extra = got.Vals[1]
	}
	return st, nil
}

// Result is the outcome of one execution.
type Result struct {
	// Code is 0, or the errno of the op that failed (FailedOp); then Txn
	// must not be applied.
	Code     int32
	FailedOp int
	Ops      []wire.ObjectOpResult
	// Txn holds the changes; it is empty for a read-only request.
	Txn objectstore.Transaction
	// Info is the object's info after the request (its version is the
	// current one for reads). Exists and Size likewise; Existed and
	// SizeBefore are the object's before it, for the PG's statistics.
	Info       Info
	Exists     bool
	Size       uint64
	Existed    bool
	SizeBefore uint64
	// Buffers are the store's read buffers the Ops' data sits in; once
	// the reply is sent they can go back to the store
	// (objectstore.Recycler).
	Buffers [][]byte
	// CRCs are the crc32c of read data the store returned with it
	// (objectstore.CRCReader), for the messenger to use instead of
	// hashing the data again (ReplyCRC).
	CRCs []DataCRC
}

// DataCRC is the crc32c of one op's result data.
type DataCRC struct {
	Data []byte
	CRC  uint32
}

// TailCRC returns the crc32c of b if b is the very data (the same bytes
// in memory, not equal ones) of a read whose checksum the store gave: it
// suits msgr.Message.TailCRC.
func (r *Result) TailCRC(b []byte) (uint32, bool) {
	for _, d := range r.CRCs {
		if len(b) == len(d.Data) && len(b) > 0 && &b[0] == &d.Data[0] {
			return d.CRC, true
		}
	}
	return 0, false
}

// Wrote reports whether the request changes the object.
func (r *Result) Wrote() bool { return r.Code == 0 && !r.Txn.Empty() }

// fail returns an op's failure as an errno: the objclass.Error that
// class methods return too, so that one Code reads both.
func fail(code int32, format string, args ...any) error {
	return objclass.Errorf(code, format, args...)
}

// Code returns the errno an op error carries, and ok false for errors
// that are not op results (store failures).
func Code(err error) (int32, bool) { return objclass.Code(err) }

// executor is one running execution: the environment, the object's state
// as the ops have left it so far, and the transaction being built.
type executor struct {
	ctx    context.Context
	env    *Env
	res    *Result
	exists bool
	size   uint64
	info   Info
	// infoDirty: a write ran, so the info attribute is rewritten at the
	// end with the new version and time.
	infoDirty bool
}

// Execute runs ops on env.Object. Op failures are reported in the
// Result's Code (and the failing op's Result); the error is for failures
// of the store itself (I/O errors, corruption), which the OSD reports as
// EIO.
func Execute(ctx context.Context, env *Env, ops []wire.ObjectOp) (*Result, error) {
	res := &Result{Ops: make([]wire.ObjectOpResult, len(ops)), FailedOp: -1}
	x := &executor{ctx: ctx, env: env, res: res}
	if err := x.load(); err != nil {
		return nil, err
	}
	res.Existed, res.SizeBefore = x.exists, x.size
	for i := range ops {
		out, err := x.run(&ops[i])
		res.Ops[i] = out
		if err != nil {
			code, ok := Code(err)
			if !ok {
				return nil, err
			}
			res.Code, res.FailedOp = code, i
			res.Ops[i].Result = -code
			res.Txn = objectstore.Transaction{}
			return res, nil
		}
	}
	if x.infoDirty && x.exists {
		x.info.Version, x.info.Mtime = env.Version, env.Now.UnixNano()
		res.Txn.SetAttr(env.Collection, env.Object, InfoAttr, x.info.Encode())
	}
	res.Info, res.Exists, res.Size = x.info, x.exists, x.size
	return res, nil
}

// load starts from the object's existence, size and info: env.Loaded,
// or read now.
func (x *executor) load() error {
	st := x.env.Loaded
	if st == nil {
		loaded, err := Load(x.ctx, x.env.Store, x.env.Collection, x.env.Object, "")
		if err != nil {
			return err
		}
		st = &loaded
	}
	x.exists, x.size = st.Exists, st.Size
	if !st.HasInfo {
		return nil // absent, or created by a bare store write; version 0
	}
	var err error
	if x.info, err = DecodeInfo(st.Info); err != nil {
		return fmt.Errorf("ops: object info of %v: %w", x.env.Object, err)
	}
	return nil
}

// run executes one op.
func (x *executor) run(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	h, ok := handlers[op.Code]
	if !ok {
		return wire.ObjectOpResult{}, fail(wire.ENOTSUP, "%v is not supported", op.Code)
	}
	return h(x, op)
}

// handlers maps each op to its implementation, one file per family.
var handlers map[wire.ObjectOpCode]func(*executor, *wire.ObjectOp) (wire.ObjectOpResult, error)

func init() {
	handlers = map[wire.ObjectOpCode]func(*executor, *wire.ObjectOp) (wire.ObjectOpResult, error){
		wire.OpRead: (*executor).read, wire.OpSparseRead: (*executor).sparseRead, wire.OpStat: (*executor).stat,
		wire.OpWrite: (*executor).write, wire.OpWriteFull: (*executor).writeFull, wire.OpAppend: (*executor).appendData,
		wire.OpTruncate: (*executor).truncate, wire.OpZero: (*executor).zero, wire.OpDelete: (*executor).remove,
		wire.OpCreate: (*executor).create, wire.OpAssertExists: (*executor).assertExists,
		wire.OpAssertVersion: (*executor).assertVersion,
		wire.OpGetXattr:      (*executor).getXattr, wire.OpGetXattrs: (*executor).getXattrs,
		wire.OpCmpXattr: (*executor).cmpXattr, wire.OpSetXattr: (*executor).setXattr, wire.OpRmXattr: (*executor).rmXattr,
		wire.OpOmapGetHeader: (*executor).omapGetHeader, wire.OpOmapGetKeys: (*executor).omapGetKeys,
		wire.OpOmapGetVals: (*executor).omapGetVals, wire.OpOmapGetByKeys: (*executor).omapGetByKeys,
		wire.OpOmapCmp: (*executor).omapCmp, wire.OpOmapSet: (*executor).omapSet, wire.OpOmapRmKeys: (*executor).omapRmKeys,
		wire.OpOmapClear: (*executor).omapClear, wire.OpOmapSetHeader: (*executor).omapSetHeader,
		wire.OpCall: (*executor).call, wire.OpWatch: (*executor).watch,
	}
}

// mustExist fails with ENOENT when the object does not exist (now).
func (x *executor) mustExist() error {
	if !x.exists {
		return fail(wire.ENOENT, "%v does not exist", x.env.Object)
	}
	return nil
}

// storeErr turns a store read error into an op error where it is one
// (a missing object) and wraps it otherwise.
func (x *executor) storeErr(what string, err error) error {
	switch {
	case errors.Is(err, objectstore.ErrNotFound):
		return fail(wire.ENOENT, "%v does not exist", x.env.Object)
	case errors.Is(err, objectstore.ErrInvalid):
		return fail(wire.EINVAL, "%s: %v", what, err)
	}
	return fmt.Errorf("ops: %s %v: %w", what, x.env.Object, err)
}

// created marks the object as existing, with a touch if it did not.
func (x *executor) created() {
	if !x.exists {
		x.res.Txn.Touch(x.env.Collection, x.env.Object)
		x.exists, x.size = true, 0
	}
	x.infoDirty = true
}

// txn is the transaction being built.
func (x *executor) txn() *objectstore.Transaction { return &x.res.Txn }

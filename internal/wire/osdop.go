package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// ObjectOpCode names one operation on an object in an OSDOp. The numbers
// are part of the wire format and never reused.
type ObjectOpCode uint16

// Object operations. Reads fill their ObjectOpResult; writes change the
// object. Every op of one OSDOp applies atomically: all or none.
const (
	// Reads.
	OpRead          ObjectOpCode = 1  // Offset, Length (0: to the end) -> Data
	OpSparseRead    ObjectOpCode = 2  // Offset, Length -> Extents, Data (the extents' bytes, concatenated)
	OpStat          ObjectOpCode = 3  // -> Size, Mtime
	OpGetXattr      ObjectOpCode = 4  // Name -> Data
	OpGetXattrs     ObjectOpCode = 5  // -> Pairs
	OpCmpXattr      ObjectOpCode = 6  // Name, Data, Flags (a CmpOp): ECANCELED if the comparison fails
	OpOmapGetHeader ObjectOpCode = 7  // -> Data
	OpOmapGetKeys   ObjectOpCode = 8  // Name (start after), Prefix, Length (max) -> Keys, More
	OpOmapGetVals   ObjectOpCode = 9  // Name (start after), Prefix, Length (max) -> Pairs, More
	OpOmapGetByKeys ObjectOpCode = 10 // Keys -> Pairs (those present)
	OpOmapCmp       ObjectOpCode = 11 // Pairs, Flags (a CmpOp): ECANCELED if any comparison fails
	OpAssertExists  ObjectOpCode = 12 // ENOENT if the object does not exist
	OpAssertVersion ObjectOpCode = 13 // Version: ERANGE if older, EOVERFLOW if newer than the object's
	OpListObjects   ObjectOpCode = 14 // PG listing from the OSDOp's Object (the cursor): Name (namespace), Length (max) -> Objects, More, Cursor (in this PG if More, else the next PG's first position; zero after the last PG)

	// Watch/notify (watch.go): served by the primary's watch state, not
	// the object's data; each alone in its OSDOp.
	OpWatchPing    ObjectOpCode = 24 // Version (cookie): ENOTCONN if the primary has no such watch
	OpNotify       ObjectOpCode = 25 // Data (payload), Length (timeout, ms; 0: the default) -> Data (NotifyResult)
	OpNotifyAck    ObjectOpCode = 26 // Version (cookie), Offset (notify id), Data (reply payload)
	OpListWatchers ObjectOpCode = 27 // -> Data (EncodeWatchers)

	// Writes.
	OpWrite         ObjectOpCode = 32 // Offset, Data
	OpWriteFull     ObjectOpCode = 33 // Data replaces the object's data
	OpAppend        ObjectOpCode = 34 // Data at the end
	OpTruncate      ObjectOpCode = 35 // Offset is the new size
	OpZero          ObjectOpCode = 36 // Offset, Length
	OpDelete        ObjectOpCode = 37 // ENOENT if missing
	OpCreate        ObjectOpCode = 38 // Flags&CreateExclusive: EEXIST if it exists
	OpSetXattr      ObjectOpCode = 39 // Name, Data
	OpRmXattr       ObjectOpCode = 40 // Name: ENODATA if missing
	OpOmapSet       ObjectOpCode = 41 // Pairs
	OpOmapRmKeys    ObjectOpCode = 42 // Keys
	OpOmapClear     ObjectOpCode = 43
	OpOmapSetHeader ObjectOpCode = 44 // Data
	OpWatch         ObjectOpCode = 56 // Flags (WatchRegister, WatchReconnect, WatchUnregister), Version (cookie), Length (timeout, s)

	// Object-class methods, on the primary, inside the op's transaction.
	OpCall ObjectOpCode = 64 // Name "class.method", Data (input) -> Data (output)
)

var objectOpNames = map[ObjectOpCode]string{
	OpRead: "read", OpSparseRead: "sparse-read", OpStat: "stat", OpGetXattr: "getxattr",
	OpGetXattrs: "getxattrs", OpCmpXattr: "cmpxattr", OpOmapGetHeader: "omap-get-header",
	OpOmapGetKeys: "omap-get-keys", OpOmapGetVals: "omap-get-vals", OpOmapGetByKeys: "omap-get-vals-by-keys",
	OpOmapCmp: "omap-cmp", OpAssertExists: "assert-exists", OpAssertVersion: "assert-version",
	OpListObjects: "list-objects", OpWrite: "write", OpWriteFull: "writefull", OpAppend: "append",
	OpTruncate: "truncate", OpZero: "zero", OpDelete: "delete", OpCreate: "create",
	OpSetXattr: "setxattr", OpRmXattr: "rmxattr", OpOmapSet: "omap-set", OpOmapRmKeys: "omap-rm-keys",
	OpOmapClear: "omap-clear", OpOmapSetHeader: "omap-set-header", OpCall: "call",
	OpListSnaps: "list-snaps", OpRollback: "rollback",
	OpWatchPing: "watch-ping", OpNotify: "notify", OpNotifyAck: "notify-ack", OpListWatchers: "list-watchers",
	OpWatch: "watch",
}

func (c ObjectOpCode) String() string {
	if n, ok := objectOpNames[c]; ok {
		return n
	}
	return fmt.Sprintf("op(%d)", uint16(c))
}

// Known reports whether c is an operation this version defines.
func (c ObjectOpCode) Known() bool { _, ok := objectOpNames[c]; return ok }

// IsWrite reports whether c changes the object (OpCall may or may not;
// the class method's registration says).
func (c ObjectOpCode) IsWrite() bool { return c >= OpWrite && c < OpCall }

// CmpOp is the comparison of OpCmpXattr and OpOmapCmp, in Flags: the
// stored value compared with the given one, bytewise.
type CmpOp uint32

// Comparisons.
const (
	CmpEQ CmpOp = iota + 1
	CmpNE
	CmpGT
	CmpGTE
	CmpLT
	CmpLTE
)

// CreateExclusive in an OpCreate's Flags makes it fail with EEXIST if the
// object exists.
const CreateExclusive = 1

// ListAllNamespaces in an OpListObjects' Flags lists every namespace, not
// only the one in Name.
const ListAllNamespaces = 1

// KV is one key and value: an omap entry or an extended attribute.
type KV struct {
	Key   string
	Value []byte
}

// Extent is an allocated range of an object, as OpSparseRead reports it.
type Extent struct {
	Offset, Length uint64
}

// ObjectOp is one operation of an OSDOp. Which fields matter depends on
// Code (see the constants).
type ObjectOp struct {
	Code    ObjectOpCode
	Flags   uint32
	Offset  uint64
	Length  uint64
	Version uint64
	Name    string
	Prefix  string
	Data    []byte
	Keys    []string
	Pairs   []KV
}

// ReqID names a client request across resends: the client's entity name
// and incarnation (a random number per client instance, so a restarted
// client's tids do not collide with its previous life's) and the tid.
// OSDs remember recent ReqIDs in the PG log to apply a resent write once.
type ReqID struct {
	Client      string
	Incarnation uint64
	Tid         uint64
}

func (r ReqID) String() string {
	return fmt.Sprintf("%s.%x:%d", r.Client, r.Incarnation, r.Tid)
}

// OSDOp flags.
const (
	// FlagWantApplied asks for a reply when the write is applied on every
	// replica, before the one that says it is committed.
	FlagWantApplied = 1 << iota
	// FlagBalanceReads marks a read-only op sent to an acting member that
	// may not be the primary (read_policy balance or score: docs/OSD.md,
	// "Reading from replicas"). A replica serves it only if it holds
	// everything the read may need (ReadAtLeast and the PG's committed
	// watermark), else it answers ENOTCURRENT and the client asks the
	// primary; the primary serves it as any read.
	FlagBalanceReads
)

// OSDOp is a client's request to the acting primary of the object's PG:
// the ops to apply atomically to one object. Epoch is the client's OSD
// map epoch; an OSD whose PG changed since, or that is not the primary,
// answers ESTALE with its own epoch and the client resends after a map
// refresh.
type OSDOp struct {
	Req     ReqID
	Epoch   uint64
	PG      osdmap.PG
	Object  objid.ID
	Flags   uint32
	Attempt uint32 // 0 on the first send, counted up on resends
	Ops     []ObjectOp
	// SnapSeq and Snaps are a write's snap context (docs/SNAPSHOTS.md):
	// the newest snap id the client knows of and the live snapshots,
	// newest first. A read at a snapshot names it in Object.Snap.
	SnapSeq uint64
	Snaps   []uint64
	// ReadAtLeast, on a read with FlagBalanceReads, is the newest version
	// of the PG the client has seen acknowledged or read (its session's
	// writes and reads): a replica whose PG has not applied it answers
	// ENOTCURRENT, so a client reads its own writes wherever it reads.
	ReadAtLeast Version
}

// ReplicaReadable reports whether ops on obj may go to a replica as a
// balanced read (FlagBalanceReads): reads of the head's data, attributes
// and omap, which change nothing and need nothing only the primary has
// (watches, class methods, snapshots). Clients and OSDs apply the same
// rule (docs/OSD.md, "Reading from replicas").
func ReplicaReadable(obj objid.ID, ops []ObjectOp) bool {
	if obj.Snap != objid.NoSnap || len(ops) == 0 {
		return false
	}
	for _, op := range ops {
		switch op.Code {
		case OpRead, OpSparseRead, OpStat, OpGetXattr, OpGetXattrs, OpCmpXattr, OpOmapGetHeader, OpOmapGetKeys,
			OpOmapGetVals, OpOmapGetByKeys, OpOmapCmp, OpAssertExists, OpAssertVersion:
		default:
			return false
		}
	}
	return true
}

// Version is an object or PG log version: the map epoch in which the
// primary assigned it and a counter that increases within the PG.
type Version struct {
	Epoch   uint64
	Counter uint64
}

// Less orders versions by epoch, then counter.
func (v Version) Less(w Version) bool {
	return v.Epoch < w.Epoch || v.Epoch == w.Epoch && v.Counter < w.Counter
}

func (v Version) String() string { return fmt.Sprintf("%d'%d", v.Epoch, v.Counter) }

// Further result codes of object ops, beside those of moncommand.go.
const (
	EIO       = 5
	E2BIG     = 7
	EFBIG     = 27
	ENOSPC    = 28
	ENODATA   = 61
	EOVERFLOW = 75
	ESTALE    = 116
	ECANCELED = 125
	ETIMEDOUT = 110
	// EROFS: a write to a snapshot (only the head is writable).
	EROFS = 30
	// EMLINK: a write that would give its object more clones than an
	// object may have (docs/SNAPSHOTS.md).
	EMLINK = 31
	// EBLOCKLISTED: the client is in the OSD map's blocklist (Ceph's
	// EBLOCKLISTED, which is ESHUTDOWN): the OSD refuses its ops.
	EBLOCKLISTED = 108
	// ENOTCURRENT: a replica asked for a read (FlagBalanceReads) is not
	// current for it (docs/OSD.md, "Reading from replicas"): the client
	// sends the read to the primary. It is Ceph's answer to a balanced
	// read a replica cannot serve, EAGAIN; no other object op returns it.
	ENOTCURRENT = EAGAIN
)

// ObjectOpResult is what one op returned. Which fields are set depends on
// the op's code.
type ObjectOpResult struct {
	Result  int32 // 0 or a negated errno value, as Ceph returns them
	Data    []byte
	Size    uint64
	Mtime   int64 // Unix nanoseconds
	Keys    []string
	Pairs   []KV
	Extents []Extent
	Objects []objid.ID
	Cursor  objid.ID
	More    bool
}

// Reply kinds, in OSDOpReply.Flags.
const (
	// ReplyApplied: the write is applied (readable) on every replica.
	ReplyApplied = 1 << iota
	// ReplyCommitted: the write is durable on every replica; the last
	// reply of a write, and the only one of a read.
	ReplyCommitted
)

// OSDOpReply answers an OSDOp with the same Req.Tid. Result is 0 or the
// negated errno value of the first op that failed (then nothing was
// applied); -ESTALE means "refresh your map to at least Epoch and
// resend".
type OSDOpReply struct {
	Tid     uint64
	Epoch   uint64
	Result  int32
	Flags   uint32
	Version Version // the object's version after the write, or when read
	Ops     []ObjectOpResult
	// Attempt echoes the OSDOp's Attempt: a client that sent an op again
	// takes only the answer to its latest send (an ESTALE to an earlier
	// one names an epoch it has already moved past).
	Attempt uint32
}

// Limits on decoded OSD ops.
const (
	maxOps     = 1024
	maxKeyLen  = 64 << 10
	maxOpData  = 1 << 30
	maxEntries = 1 << 20
	maxClient  = 256
	// maxSnaps bounds a snap context (osdmap.MaxPoolSnaps).
	maxSnaps = osdmap.MaxPoolSnaps
)

// Encode encodes m: version 1: req (client, incarnation, tid), epoch,
// pg (pool varint, seed u32), object, flags, attempt, ops; version 2
// appends the snap context (seq, count, ids; uvarints). An op with a snap
// context carries compat 2, so that a decoder that would drop it refuses
// it; one without carries compat 1. Version 3 appends ReadAtLeast (epoch,
// counter; uvarints); an older OSD skips it, and as it serves no read
// off its primaries it answers such a read ESTALE.
func (m OSDOp) Encode() []byte {
	return encodeCopied(m.encode)
}

// EncodeSegments encodes m as Encode does, as slices whose concatenation
// is the encoding: ops' data of objectstore.RefData bytes or more are slices of their
// own, not copied (a client's 4 MiB write goes to the socket from the
// caller's buffer). The first slice is never empty.
func (m OSDOp) EncodeSegments() [][]byte {
	return encodeSegments(m.encode)
}

func (m OSDOp) encode(e *encoding.Encoder, byRef bool) {
	e.Grow(m.sizeHint(byRef))
	compat := uint8(1)
	if m.SnapSeq != 0 || len(m.Snaps) > 0 {
		compat = 2
	}
	mk := e.Begin(3, compat)
	e.String(m.Req.Client)
	e.Uint64(m.Req.Incarnation)
	e.Uint64(m.Req.Tid)
	e.Uvarint(m.Epoch)
	e.Varint(m.PG.Pool)
	e.Uint32(m.PG.Seed)
	m.Object.Encode(e)
	e.Uint32(m.Flags)
	e.Uvarint(uint64(m.Attempt))
	e.Uvarint(uint64(len(m.Ops)))
	for i := range m.Ops {
		encodeObjectOp(e, &m.Ops[i], byRef)
	}
	e.Uvarint(m.SnapSeq)
	e.Uvarint(uint64(len(m.Snaps)))
	for _, s := range m.Snaps {
		e.Uvarint(s)
	}
	e.Uvarint(m.ReadAtLeast.Epoch)
	e.Uvarint(m.ReadAtLeast.Counter)
	e.End(mk)
}

// sizeHint is about the length of m's encoding without the data placed
// by reference: one allocation for the encoder, not one per growth (a
// 4 KiB write's data outgrows its first buffer).
func (m OSDOp) sizeHint(byRef bool) int {
	n := 64 + len(m.Req.Client) + len(m.Object.Name) + len(m.Object.Key) + len(m.Object.Namespace)
	for i := range m.Ops {
		op := &m.Ops[i]
		n += 32 + len(op.Name) + len(op.Prefix)
		if len(op.Data) >= objectstore.MinAlignedData {
			n += objectstore.DataAlign
		}
		if !byRef || len(op.Data) < objectstore.RefData {
			n += len(op.Data)
		}
		for _, k := range op.Keys {
			n += 2 + len(k)
		}
		for _, kv := range op.Pairs {
			n += 4 + len(kv.Key) + len(kv.Value)
		}
	}
	return n
}

func encodeObjectOp(e *encoding.Encoder, op *ObjectOp, byRef bool) {
	e.Uint16(uint16(op.Code))
	e.Uint32(op.Flags)
	e.Uvarint(op.Offset)
	e.Uvarint(op.Length)
	e.Uvarint(op.Version)
	e.String(op.Name)
	e.String(op.Prefix)
	objectstore.AppendData(e, op.Data, byRef)
	encodeStrings(e, op.Keys)
	encodeKVs(e, op.Pairs)
}

func encodeStrings(e *encoding.Encoder, ss []string) {
	e.Uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.String(s)
	}
}

func encodeKVs(e *encoding.Encoder, kvs []KV) {
	e.Uvarint(uint64(len(kvs)))
	for _, kv := range kvs {
		e.String(kv.Key)
		e.Bytes(kv.Value)
	}
}

// DecodeOSDOp decodes an OSDOp. Unknown op codes decode (the OSD answers
// them with ENOTSUP); malformed bytes are an error. The ops' Data alias b
// (object data is not copied): keep b unchanged while the op is used.
func DecodeOSDOp(b []byte) (OSDOp, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(3)
	var m OSDOp
	m.Req = ReqID{Client: d.String(maxClient), Incarnation: d.Uint64(), Tid: d.Uint64()}
	m.Epoch = d.Uvarint()
	m.PG = osdmap.PG{Pool: d.Varint(), Seed: d.Uint32()}
	m.Object = objid.Decode(d)
	m.Flags = d.Uint32()
	m.Attempt = uint32(min(d.Uvarint(), 1<<32-1))
	n := d.Count(minObjectOpLen)
	if n > maxOps {
		d.Fail(fmt.Errorf("%w: %d ops", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		m.Ops = make([]ObjectOp, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Ops[i] = decodeObjectOp(d)
		}
	}
	if version >= 2 && d.Err() == nil {
		m.SnapSeq = d.Uvarint()
		ns := d.Count(1)
		if ns > maxSnaps {
			d.Fail(fmt.Errorf("%w: %d snaps in a snap context", encoding.ErrCorrupt, ns))
		}
		if ns > 0 && d.Err() == nil {
			m.Snaps = make([]uint64, ns)
			for i := range m.Snaps {
				m.Snaps[i] = d.Uvarint()
			}
		}
	}
	if version >= 3 && d.Err() == nil {
		m.ReadAtLeast = Version{Epoch: d.Uvarint(), Counter: d.Uvarint()}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return OSDOp{}, fmt.Errorf("wire: osd op: %w", err)
	}
	if m.Object.IsMax() {
		return OSDOp{}, fmt.Errorf("wire: osd op: %w: the max object id names no object", encoding.ErrCorrupt)
	}
	return m, nil
}

// minObjectOpLen is the fewest bytes an encoded ObjectOp takes.
const minObjectOpLen = 2 + 4 + 3 + 6

func decodeObjectOp(d *encoding.Decoder) ObjectOp {
	return ObjectOp{
		Code:    ObjectOpCode(d.Uint16()),
		Flags:   d.Uint32(),
		Offset:  d.Uvarint(),
		Length:  d.Uvarint(),
		Version: d.Uvarint(),
		Name:    d.String(maxKeyLen),
		Prefix:  d.String(maxKeyLen),
		Data:    d.AlignedBytesRef(maxOpData),
		Keys:    decodeStrings(d),
		Pairs:   decodeKVs(d),
	}
}

func decodeStrings(d *encoding.Decoder) []string {
	n := d.Count(1)
	if n > maxEntries {
		d.Fail(fmt.Errorf("%w: %d keys", encoding.ErrCorrupt, n))
	}
	if n == 0 || d.Err() != nil {
		return nil
	}
	ss := make([]string, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		ss[i] = d.String(maxKeyLen)
	}
	return ss
}

func decodeKVs(d *encoding.Decoder) []KV {
	n := d.Count(2)
	if n > maxEntries {
		d.Fail(fmt.Errorf("%w: %d pairs", encoding.ErrCorrupt, n))
	}
	if n == 0 || d.Err() != nil {
		return nil
	}
	kvs := make([]KV, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		kvs[i] = KV{Key: d.String(maxKeyLen), Value: d.Bytes(maxOpData)}
	}
	return kvs
}

// Encode encodes m: version 1: tid, epoch, result varint, flags,
// version (epoch, counter), op results; version 2 adds attempt.
func (m OSDOpReply) Encode() []byte {
	return encodeCopied(m.encode)
}

// encodeCopied runs a message's encode with every byte copied into one
// buffer, which it returns.
func encodeCopied(encode func(e *encoding.Encoder, byRef bool)) []byte {
	var e encoding.Encoder
	encode(&e, false)
	return e.Data()
}

// encodeSegments runs a message's encode with large data placed by
// reference and returns the segments.
func encodeSegments(encode func(e *encoding.Encoder, byRef bool)) [][]byte {
	var e encoding.Encoder
	encode(&e, true)
	return e.Segments()
}

// refData is the size from which EncodeSegments passes an op result's
// data by reference: below it, a copy costs less than the extra slice.
const refData = 64 << 10

// EncodeSegments encodes m as Encode does, as slices whose concatenation
// is the encoding: op results' data of refData bytes or more are slices
// of their own, not copied (a 4 MiB read reaches the socket from the
// buffer the store read it into). The first slice is never empty.
func (m OSDOpReply) EncodeSegments() [][]byte {
	return encodeSegments(m.encode)
}

func (m OSDOpReply) encode(e *encoding.Encoder, byRef bool) {
	mk := e.Begin(2, 1)
	e.Uint64(m.Tid)
	e.Uvarint(m.Epoch)
	e.Varint(int64(m.Result))
	e.Uint32(m.Flags)
	e.Uvarint(m.Version.Epoch)
	e.Uvarint(m.Version.Counter)
	e.Uvarint(uint64(len(m.Ops)))
	for i := range m.Ops {
		encodeObjectOpResult(e, &m.Ops[i], byRef)
	}
	e.Uvarint(uint64(m.Attempt))
	e.End(mk)
}

func encodeObjectOpResult(e *encoding.Encoder, r *ObjectOpResult, byRef bool) {
	e.Varint(int64(r.Result))
	if byRef && len(r.Data) >= refData {
		e.BytesRef(r.Data)
	} else {
		e.Bytes(r.Data)
	}
	e.Uvarint(r.Size)
	e.Varint(r.Mtime)
	encodeStrings(e, r.Keys)
	encodeKVs(e, r.Pairs)
	e.Uvarint(uint64(len(r.Extents)))
	for _, x := range r.Extents {
		e.Uvarint(x.Offset)
		e.Uvarint(x.Length)
	}
	e.Uvarint(uint64(len(r.Objects)))
	for _, id := range r.Objects {
		id.Encode(e)
	}
	r.Cursor.Encode(e)
	e.Bool(r.More)
}

// DecodeOSDOpReply decodes an OSDOpReply. The results' Data alias b.
func DecodeOSDOpReply(b []byte) (OSDOpReply, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	var m OSDOpReply
	m.Tid = d.Uint64()
	m.Epoch = d.Uvarint()
	m.Result = decodeResult(d)
	m.Flags = d.Uint32()
	m.Version = Version{Epoch: d.Uvarint(), Counter: d.Uvarint()}
	n := d.Count(minObjectOpResultLen)
	if n > maxOps {
		d.Fail(fmt.Errorf("%w: %d op results", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		m.Ops = make([]ObjectOpResult, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Ops[i] = decodeObjectOpResult(d)
		}
	}
	if v >= 2 {
		m.Attempt = uint32(min(d.Uvarint(), 1<<32-1))
	}
	d.End()
	if err := d.Finish(); err != nil {
		return OSDOpReply{}, fmt.Errorf("wire: osd op reply: %w", err)
	}
	return m, nil
}

// minObjectOpResultLen is the fewest bytes an encoded ObjectOpResult
// takes.
const minObjectOpResultLen = 8 + 6 + 1

func decodeResult(d *encoding.Decoder) int32 {
	v := d.Varint()
	if v < -1<<31 || v > 1<<31-1 {
		d.Fail(fmt.Errorf("%w: result %d out of range", encoding.ErrCorrupt, v))
	}
	return int32(v)
}

func decodeObjectOpResult(d *encoding.Decoder) ObjectOpResult {
	r := ObjectOpResult{
		Result: decodeResult(d),
		Data:   d.BytesRef(maxOpData),
		Size:   d.Uvarint(),
		Mtime:  d.Varint(),
		Keys:   decodeStrings(d),
		Pairs:  decodeKVs(d),
	}
	if n := d.Count(2); n > maxEntries {
		d.Fail(fmt.Errorf("%w: %d extents", encoding.ErrCorrupt, n))
	} else if n > 0 {
		r.Extents = make([]Extent, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			r.Extents[i] = Extent{Offset: d.Uvarint(), Length: d.Uvarint()}
		}
	}
	if n := d.Count(7); n > maxEntries {
		d.Fail(fmt.Errorf("%w: %d objects", encoding.ErrCorrupt, n))
	} else if n > 0 {
		r.Objects = make([]objid.ID, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			r.Objects[i] = objid.Decode(d)
		}
	}
	r.Cursor = objid.Decode(d)
	r.More = d.Bool()
	return r
}

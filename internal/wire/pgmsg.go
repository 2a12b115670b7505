package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/osdmap"
)

// RepOp carries one write from a PG's primary to a replica: the
// object-store transaction the primary built (data, attributes, omap,
// and the PG log entry and info in the PG's meta object) and the log
// entry itself, for the replica's in-memory log. Replicas apply RepOps
// in the order they arrive, which is the order the primary assigned
// versions, and answer with RepOpReply: once applied (if asked) and once
// committed.
type RepOp struct {
	PG            osdmap.PG
	Epoch         uint64 // the primary's map epoch
	IntervalStart uint64 // the epoch the PG's current interval began, as the primary sees it
	Tid           uint64 // the primary's id for this write
	Version       Version
	WantApplied   bool
	Entry         []byte // an encoded pglog.Entry
	Info          []byte // the PG's encoded pglog.Info after the write
	Txn           *objectstore.Transaction
	// Extra are the encoded log entries the same write makes for other
	// objects (a snapshot's clone, the snapdir: docs/SNAPSHOTS.md), each
	// with a version of its own next to Entry's; the replica appends
	// them all in version order.
	Extra [][]byte
	// CommittedBelow is the primary's committed watermark when it sent
	// the op: every write of the interval with a version below it is
	// committed on every member of the acting set (this one is not yet).
	// A replica serves a balanced read of an object whose version here is
	// below it (docs/OSD.md, "Reading from replicas"); zero says nothing.
	CommittedBelow Version
}

// RepOpReply answers a RepOp with the same PG and Tid: Flags holds
// ReplyApplied and/or ReplyCommitted; a non-zero Result (a negated
// errno) means the replica could not apply it.
type RepOpReply struct {
	PG     osdmap.PG
	Tid    uint64
	Epoch  uint64 // the replica's map epoch
	Flags  uint32
	Result int32
}

// RepIdle gives a replica the primary's committed watermark once the PG
// has gone quiet with every write committed by every member (docs/OSD.md,
// "Reading from replicas"): without it a replica learns the watermark
// only from the next RepOp, and the PG's last write stays unreadable
// there until another write comes. A replica takes it only from its
// primary, in the interval it names, as it takes RepOps.
type RepIdle struct {
	PG            osdmap.PG
	Epoch         uint64 // the primary's map epoch
	IntervalStart uint64 // the epoch the PG's current interval began, as the primary sees it
	// CommittedBelow is the watermark, as RepOp's: every write of the
	// interval below it is committed on every member.
	CommittedBelow Version
}

// Limits on decoded PG messages.
const (
	maxEntryBytes = 64 << 10
	// maxExtraEntries bounds the extra entries of one rep op: a write
	// makes at most a clone and a snapdir entry beside its own, a snap
	// trim one entry per clone it deletes (at most an object's clones,
	// osdmap.MaxPoolSnaps).
	maxExtraEntries = osdmap.MaxPoolSnaps + 2
)

// Encode encodes m (version 3 appends CommittedBelow, epoch and counter
// as uvarints, which an older replica skips; an older rep op decodes
// with a zero one): version 1: pg, epoch, interval start, tid, version,
// want-applied, entry, info, then the transaction's own envelope
// (objectstore's encoding), written in place so its data is copied once;
// version 2 appends the extra entries (count, then bytes each). A rep op
// with extra entries carries compat 2, so that a replica that would drop
// them refuses it.
func (m RepOp) Encode() []byte {
	return encodeCopied(m.encode)
}

// EncodeSegments encodes m as Encode does, as slices whose concatenation
// is the encoding: write data of objectstore.RefData bytes or more are
// slices of their own, not copied (a 4 MiB write goes to each replica
// from the buffer the client's op arrived in), and must not change until
// the messenger is done with the message. The first slice is never empty.
func (m RepOp) EncodeSegments() [][]byte {
	return encodeSegments(m.encode)
}

func (m RepOp) encode(e *encoding.Encoder, byRef bool) {
	compat := uint8(1)
	if len(m.Extra) > 0 {
		compat = 2
	}
	mk := e.Begin(3, compat)
	e.Varint(m.PG.Pool)
	e.Uint32(m.PG.Seed)
	e.Uvarint(m.Epoch)
	e.Uvarint(m.IntervalStart)
	e.Uint64(m.Tid)
	e.Uvarint(m.Version.Epoch)
	e.Uvarint(m.Version.Counter)
	e.Bool(m.WantApplied)
	e.Bytes(m.Entry)
	e.Bytes(m.Info)
	txn := m.Txn
	if txn == nil {
		txn = &objectstore.Transaction{}
	}
	if byRef {
		txn.EncodeRefTo(e)
	} else {
		txn.EncodeTo(e)
	}
	e.Uvarint(uint64(len(m.Extra)))
	for _, x := range m.Extra {
		e.Bytes(x)
	}
	e.Uvarint(m.CommittedBelow.Epoch)
	e.Uvarint(m.CommittedBelow.Counter)
	e.End(mk)
}

// DecodeRepOp decodes a RepOp; the entry and info stay encoded, and the
// transaction, not yet validated, has its write data alias b.
func DecodeRepOp(b []byte) (RepOp, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(3)
	m := RepOp{
		PG:            osdmap.PG{Pool: d.Varint(), Seed: d.Uint32()},
		Epoch:         d.Uvarint(),
		IntervalStart: d.Uvarint(),
		Tid:           d.Uint64(),
		Version:       Version{Epoch: d.Uvarint(), Counter: d.Uvarint()},
		WantApplied:   d.Bool(),
		Entry:         d.Bytes(maxEntryBytes),
		Info:          d.Bytes(maxEntryBytes),
		Txn:           objectstore.DecodeTransactionFrom(d),
	}
	if version >= 2 && d.Err() == nil {
		n := d.Count(1)
		if n > maxExtraEntries {
			d.Fail(fmt.Errorf("%w: %d extra entries", encoding.ErrCorrupt, n))
		}
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Extra = append(m.Extra, d.Bytes(maxEntryBytes))
		}
	}
	if version >= 3 && d.Err() == nil {
		m.CommittedBelow = Version{Epoch: d.Uvarint(), Counter: d.Uvarint()}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return RepOp{}, fmt.Errorf("wire: rep op: %w", err)
	}
	return m, nil
}

// Encode encodes m: version 1: pg, tid, epoch, flags, result.
func (m RepOpReply) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Varint(m.PG.Pool)
	e.Uint32(m.PG.Seed)
	e.Uint64(m.Tid)
	e.Uvarint(m.Epoch)
	e.Uint32(m.Flags)
	e.Varint(int64(m.Result))
	e.End(mk)
	return e.Data()
}

// Encode encodes m: version 1: pg, epoch, interval start, then the
// watermark's epoch and counter, all but the seed as uvarints.
func (m RepIdle) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Varint(m.PG.Pool)
	e.Uint32(m.PG.Seed)
	e.Uvarint(m.Epoch)
	e.Uvarint(m.IntervalStart)
	e.Uvarint(m.CommittedBelow.Epoch)
	e.Uvarint(m.CommittedBelow.Counter)
	e.End(mk)
	return e.Data()
}

// DecodeRepIdle decodes a RepIdle.
func DecodeRepIdle(b []byte) (RepIdle, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := RepIdle{PG: osdmap.PG{Pool: d.Varint(), Seed: d.Uint32()}, Epoch: d.Uvarint(), IntervalStart: d.Uvarint()}
	m.CommittedBelow = Version{Epoch: d.Uvarint(), Counter: d.Uvarint()}
	d.End()
	if err := d.Finish(); err != nil {
		return RepIdle{}, fmt.Errorf("wire: rep idle: %w", err)
	}
	return m, nil
}

// DecodeRepOpReply decodes a RepOpReply.
func DecodeRepOpReply(b []byte) (RepOpReply, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := RepOpReply{PG: osdmap.PG{Pool: d.Varint(), Seed: d.Uint32()}, Tid: d.Uint64(), Epoch: d.Uvarint(), Flags: d.Uint32()}
	m.Result = decodeResult(d)
	d.End()
	if err := d.Finish(); err != nil {
		return RepOpReply{}, fmt.Errorf("wire: rep op reply: %w", err)
	}
	return m, nil
}

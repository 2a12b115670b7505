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

// Limits on decoded PG messages.
const (
	maxEntryBytes = 64 << 10
)

// Encode encodes m: version 1: pg, epoch, interval start, tid, version,
// want-applied, entry, info, then the transaction's own envelope
// (objectstore's encoding), written in place so its data is copied once.
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
	mk := e.Begin(1, 1)
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
	e.End(mk)
}

// DecodeRepOp decodes a RepOp; the entry and info stay encoded, and the
// transaction, not yet validated, has its write data alias b.
func DecodeRepOp(b []byte) (RepOp, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
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

package objectstore

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
)

// Encoding of transactions, so that a primary OSD can send the
// transaction it built to its replicas, which apply the same one.

// Write data travels the same way in a replicated transaction and in an
// OSD op (package wire): as aligned bytes (encoding.Encoder.AlignedBytes),
// so that an OSD that receives it into an aligned buffer can write it
// with O_DIRECT straight from there.
const (
	// DataAlign is the alignment of write data within an encoding
	// (relative to its start).
	DataAlign = 4096
	// MinAlignedData is the least write data that is aligned: smaller
	// writes go through the store's WAL and the page cache, never with
	// O_DIRECT from the received buffer, so padding would only add zeros
	// to copy (it doubled a 4 KiB write's message).
	MinAlignedData = 64 << 10
)

// AppendData appends write data to e as aligned bytes: padded from
// MinAlignedData, and placed by reference (encoding.Encoder.BytesRef)
// from RefData if byRef.
func AppendData(e *encoding.Encoder, data []byte, byRef bool) {
	switch {
	case len(data) < MinAlignedData:
		e.AlignedBytes(data, 1) // a pad count of 0
	case byRef && len(data) >= RefData:
		e.AlignedBytesRef(data, DataAlign)
	default:
		e.AlignedBytes(data, DataAlign)
	}
}

// Limits on decoded transactions: they bound what a hostile peer can make
// a decoder allocate, not what a store accepts.
const (
	maxTxnOps     = 1 << 16
	maxTxnData    = 1 << 30
	maxTxnKey     = 64 << 10
	maxTxnEntries = 1 << 20
)

// Encode encodes t: version 1: op count, then per op: code u8,
// collection, object, destination collection, destination object,
// offset, length, destination offset (uvarints), data, attributes or
// entries (count, then key and value each, keys sorted), keys (count,
// strings), key, end key. A collection is kind u8, pool varint, seed u32.
// A split_collection op (code 18) carries its bits in offset and their
// value in length; decoders that predate it reject it as an unknown op.
func (t *Transaction) Encode() []byte {
	var e encoding.Encoder
	t.EncodeTo(&e)
	return e.Data()
}

// EncodeTo appends t's encoding to e.
func (t *Transaction) EncodeTo(e *encoding.Encoder) { t.encodeTo(e, false) }

// EncodeRefTo appends t's encoding to e as EncodeTo does, with write data
// of RefData bytes or more placed by reference (encoding.Encoder.BytesRef):
// e's Segments then carry it without a copy, and it must not change until
// they have been used.
func (t *Transaction) EncodeRefTo(e *encoding.Encoder) { t.encodeTo(e, true) }

// RefData is the size from which EncodeRefTo places write data by
// reference: below it a copy costs less than another slice to write.
const RefData = 64 << 10

func (t *Transaction) encodeTo(e *encoding.Encoder, byRef bool) {
	mk := e.Begin(1, 1)
	e.Uvarint(uint64(len(t.Ops)))
	for i := range t.Ops {
		encodeOp(e, &t.Ops[i], byRef)
	}
	e.End(mk)
}

func encodeCollection(e *encoding.Encoder, c CollectionID) {
	e.Uint8(uint8(c.Kind))
	e.Varint(c.Pool)
	e.Uint32(c.Seed)
}

func encodeOp(e *encoding.Encoder, op *Op, byRef bool) {
	e.Uint8(uint8(op.Code))
	encodeCollection(e, op.Collection)
	op.Object.Encode(e)
	encodeCollection(e, op.DestCollection)
	op.Dest.Encode(e)
	e.Uvarint(op.Offset)
	e.Uvarint(op.Length)
	e.Uvarint(op.DestOffset)
	AppendData(e, op.Data, byRef)
	e.Uvarint(uint64(len(op.Attrs)))
	for _, k := range slices.Sorted(maps.Keys(op.Attrs)) {
		e.String(k)
		e.Bytes(op.Attrs[k])
	}
	e.Uvarint(uint64(len(op.Keys)))
	for _, k := range op.Keys {
		e.String(k)
	}
	e.String(op.Key)
	e.String(op.EndKey)
}

// DecodeTransaction decodes what Encode wrote and validates the result
// (Validate), so a transaction from the network is well-formed before a
// store sees it. Write data aliases b: keep b unchanged until the
// transaction has applied.
func DecodeTransaction(b []byte) (*Transaction, error) {
	d := encoding.NewDecoder(b)
	t := DecodeTransactionFrom(d)
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("objectstore: transaction: %w", err)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("objectstore: decoded transaction: %w", err)
	}
	return t, nil
}

// DecodeTransactionFrom reads a transaction from d; errors stay in d
// (check d.Finish), and the result is not validated. Write data aliases
// d's input.
func DecodeTransactionFrom(d *encoding.Decoder) *Transaction {
	d.Begin(1)
	t := &Transaction{}
	n := d.Count(minOpLen)
	if n > maxTxnOps {
		d.Fail(fmt.Errorf("%w: %d ops", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		t.Ops = make([]Op, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			t.Ops[i] = decodeOp(d)
		}
	}
	d.End()
	return t
}

// minOpLen is the fewest bytes an encoded Op takes.
const minOpLen = 1 + 2*(1+1+4+7) + 3 + 2 + 1 + 1 + 1 + 1

func decodeCollection(d *encoding.Decoder) CollectionID {
	return CollectionID{Kind: CollectionKind(d.Uint8()), Pool: d.Varint(), Seed: d.Uint32()}
}

func decodeOp(d *encoding.Decoder) Op {
	op := Op{
		Code:           OpCode(d.Uint8()),
		Collection:     decodeCollection(d),
		Object:         objid.Decode(d),
		DestCollection: decodeCollection(d),
		Dest:           objid.Decode(d),
		Offset:         d.Uvarint(),
		Length:         d.Uvarint(),
		DestOffset:     d.Uvarint(),
		Data:           d.AlignedBytesRef(maxTxnData),
	}
	if n := d.Count(2); n > maxTxnEntries {
		d.Fail(fmt.Errorf("%w: %d attributes", encoding.ErrCorrupt, n))
	} else if n > 0 {
		op.Attrs = make(map[string][]byte, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			k := d.String(maxTxnKey)
			v := d.Bytes(maxTxnData)
			if v == nil {
				v = []byte{}
			}
			op.Attrs[k] = v
		}
	}
	if n := d.Count(1); n > maxTxnEntries {
		d.Fail(fmt.Errorf("%w: %d keys", encoding.ErrCorrupt, n))
	} else if n > 0 {
		op.Keys = make([]string, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			op.Keys[i] = d.String(maxTxnKey)
		}
	}
	op.Key = d.String(maxTxnKey)
	op.EndKey = d.String(maxTxnKey)
	return op
}

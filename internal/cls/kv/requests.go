package kv

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Pair is a key and its value.
type Pair struct {
	Key   string
	Value []byte
}

// WriteRequest is kv.write's input: puts and removes applied together,
// only if every condition holds.
type WriteRequest struct {
	Puts    []Pair
	Removes []string
	Conds   []Cond
}

// Cond is a condition on a key's value when a write applies: absent, or
// present with exactly Value.
type Cond struct {
	Key    string
	Absent bool
	Value  []byte
}

// Encode encodes r: version 2: puts (key, value), removes, v2: conds
// (key, absent, value). A request without conditions is written as
// version 1, which every leaf's class reads.
func (r WriteRequest) Encode() []byte {
	var e encoding.Encoder
	v := uint8(1)
	if len(r.Conds) > 0 {
		v = 2
	}
	mk := e.Begin(v, v)
	encodePairs(&e, r.Puts)
	encodeKeys(&e, r.Removes)
	if v >= 2 {
		e.Uvarint(uint64(len(r.Conds)))
		for _, c := range r.Conds {
			e.String(c.Key)
			e.Bool(c.Absent)
			e.Bytes(c.Value)
		}
	}
	e.End(mk)
	return e.Data()
}

// DecodeWriteRequest decodes what Encode wrote.
func DecodeWriteRequest(b []byte) (WriteRequest, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	r := WriteRequest{Puts: decodePairs(d), Removes: decodeKeys(d)}
	if v >= 2 {
		n := d.Count(3)
		if n > MaxBatch {
			d.Fail(fmt.Errorf("%d conditions over %d", n, MaxBatch))
		}
		for i := 0; i < n && d.Err() == nil; i++ {
			r.Conds = append(r.Conds, Cond{Key: d.String(MaxKeyLen), Absent: d.Bool(), Value: d.Bytes(MaxValueLen)})
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return WriteRequest{}, fmt.Errorf("kv write request: %w", err)
	}
	return r, nil
}

// ReadRequest is kv.read's input: the values of Keys, or with Scan up to
// Limit entries from From (inclusive) in key order.
type ReadRequest struct {
	Keys  []string
	Scan  bool
	From  string
	Limit uint32
}

// Encode encodes r: version 1: keys, scan, from, limit.
func (r ReadRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	encodeKeys(&e, r.Keys)
	e.Bool(r.Scan)
	e.String(r.From)
	e.Uvarint(uint64(r.Limit))
	e.End(mk)
	return e.Data()
}

// DecodeReadRequest decodes what Encode wrote.
func DecodeReadRequest(b []byte) (ReadRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := ReadRequest{Keys: decodeKeys(d), Scan: d.Bool(), From: d.String(MaxKeyLen)}
	limit := d.Uvarint()
	d.End()
	if limit > MaxBatch {
		d.Fail(fmt.Errorf("limit %d over %d", limit, MaxBatch))
	}
	r.Limit = uint32(limit)
	if err := d.Finish(); err != nil {
		return ReadRequest{}, fmt.Errorf("kv read request: %w", err)
	}
	return r, nil
}

// ReadReply is kv.read's output: the leaf's bounds, the pairs found (in
// key order), and for a scan whether the leaf holds more after them.
type ReadReply struct {
	Bounds Bounds
	Pairs  []Pair
	More   bool
}

// Encode encodes r: version 1: low, high, pairs, more.
func (r ReadReply) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	r.Bounds.encode(&e)
	encodePairs(&e, r.Pairs)
	e.Bool(r.More)
	e.End(mk)
	return e.Data()
}

// DecodeReadReply decodes what Encode wrote.
func DecodeReadReply(b []byte) (ReadReply, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := ReadReply{Bounds: decodeBounds(d), Pairs: decodePairs(d), More: d.Bool()}
	d.End()
	if err := d.Finish(); err != nil {
		return ReadReply{}, fmt.Errorf("kv read reply: %w", err)
	}
	return r, nil
}

// FreezeRequest is kv.freeze's input: the operation freezing the leaf,
// and how many of its entries (0: none) the reply is to carry, so the
// operation need not read the frozen leaf again.
type FreezeRequest struct {
	ID      string
	Entries uint32
}

// Encode encodes r: version 1: id; version 2 (compat 1: a class that
// reads version 1 answers the leaf alone) adds entries.
func (r FreezeRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.String(r.ID)
	e.Uvarint(uint64(r.Entries))
	e.End(mk)
	return e.Data()
}

// DecodeFreezeRequest decodes what Encode wrote (versions 1 and 2).
func DecodeFreezeRequest(b []byte) (FreezeRequest, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	r := FreezeRequest{ID: d.String(maxNameLen)}
	if v >= 2 {
		n := d.Uvarint()
		if n > MaxBatch {
			d.Fail(fmt.Errorf("entries %d over %d", n, MaxBatch))
		}
		r.Entries = uint32(n)
	}
	d.End()
	if r.ID == "" {
		d.Fail(fmt.Errorf("empty id"))
	}
	if err := d.Finish(); err != nil {
		return FreezeRequest{}, fmt.Errorf("kv freeze request: %w", err)
	}
	return r, nil
}

// FreezeReply is kv.freeze's output: the leaf's Leaf (as frozen) and,
// if the request asked for entries (FreezeRequest.Entries), its first
// entries in key order (Pairs: at most that many, and fewer once they
// pass FreezeReplyBytes) and whether more follow them (More). A class
// older than the entries answers the Leaf alone: Entries false, and the
// client reads the entries itself.
type FreezeReply struct {
	Leaf    Leaf
	Entries bool
	Pairs   []Pair
	More    bool
}

// FreezeReplyBytes is about the most key and value bytes a FreezeReply
// carries: past it the class stops adding entries and says More.
const FreezeReplyBytes = 4 << 20

// Encode encodes r. Without entries it is the Leaf's encoding (version
// 1); with them, version 2 of the same envelope (compat 1, so DecodeLeaf
// reads its Leaf): the Leaf's fields, then pairs (key, value) and more.
func (r FreezeReply) Encode() []byte {
	if !r.Entries {
		return r.Leaf.Encode()
	}
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	r.Leaf.encodeFields(&e)
	encodePairs(&e, r.Pairs)
	e.Bool(r.More)
	e.End(mk)
	return e.Data()
}

// DecodeFreezeReply decodes what Encode wrote, or a Leaf alone (Entries
// false).
func DecodeFreezeReply(b []byte) (FreezeReply, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	r := FreezeReply{Leaf: decodeLeafFields(d)}
	if v >= 2 {
		r.Entries = true
		r.Pairs = decodePairs(d)
		r.More = d.Bool()
	}
	d.End()
	if err := d.Finish(); err != nil {
		return FreezeReply{}, fmt.Errorf("kv freeze reply: %w", err)
	}
	return r, nil
}

// MarkRequest is kv.mark's input: mark the index entries Mark.Entries
// (or, if it has none, the entry of the leaf whose range ends at High)
// with Mark, all or none: only if each names its leaf and carries no
// mark. The OSD sets the mark's Created, and its Entries to the entries
// marked.
//
// With TakeOver (cleanup), each entry must instead carry the mark of
// that ID (ECANCELED otherwise), made at least OlderThan nanoseconds ago
// by the OSD's clock (EBUSY otherwise): the request's Mark replaces it.
type MarkRequest struct {
	High      string
	Leaf      string
	Mark      Mark
	TakeOver  string
	OlderThan int64
}

// Encode encodes r: version 1: high, leaf, mark; version 2 adds the
// mark's entries (high, leaf); version 3 the mark's takes, take-over and
// older-than.
func (r MarkRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(3, 1)
	e.String(r.High)
	e.String(r.Leaf)
	r.Mark.encode(&e)
	r.Mark.encodeEntries(&e)
	e.String(r.TakeOver)
	e.Varint(r.OlderThan)
	e.End(mk)
	return e.Data()
}

// DecodeMarkRequest decodes what Encode wrote (versions 1 to 3).
func DecodeMarkRequest(b []byte) (MarkRequest, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(3)
	r := MarkRequest{High: d.String(MaxKeyLen), Leaf: d.String(maxNameLen), Mark: decodeMark(d)}
	r.Mark.decodeEntries(d, v)
	if v >= 3 {
		r.TakeOver = d.String(maxNameLen)
		r.OlderThan = d.Varint()
	}
	d.End()
	if r.Mark.ID == "" {
		d.Fail(fmt.Errorf("empty mark id"))
	}
	if err := d.Finish(); err != nil {
		return MarkRequest{}, fmt.Errorf("kv mark request: %w", err)
	}
	return r, nil
}

// IndexEntry is an index entry with its key: the leaf whose range ends
// at High ("" no bound).
type IndexEntry struct {
	High string
	Leaf string
}

// SwapRequest is kv.swap's input: remove the entries ending at Remove
// (each must carry the mark ID) and add Add, unmarked.
type SwapRequest struct {
	ID     string
	Remove []string
	Add    []IndexEntry
}

// Encode encodes r: version 1: id, remove (highs), add (high, leaf).
func (r SwapRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(r.ID)
	encodeKeys(&e, r.Remove)
	encodeIndexEntries(&e, r.Add)
	e.End(mk)
	return e.Data()
}

// DecodeSwapRequest decodes what Encode wrote.
func DecodeSwapRequest(b []byte) (SwapRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := SwapRequest{ID: d.String(maxNameLen), Remove: decodeKeys(d), Add: decodeIndexEntries(d)}
	d.End()
	if err := d.Finish(); err != nil {
		return SwapRequest{}, fmt.Errorf("kv swap request: %w", err)
	}
	return r, nil
}

// UnmarkRequest is kv.unmark's input: clear the mark ID from the entry
// ending at High, and from the other entries that mark names.
type UnmarkRequest struct {
	High string
	ID   string
}

// Encode encodes r: version 1: high, id.
func (r UnmarkRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(r.High)
	e.String(r.ID)
	e.End(mk)
	return e.Data()
}

// DecodeUnmarkRequest decodes what Encode wrote.
func DecodeUnmarkRequest(b []byte) (UnmarkRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := UnmarkRequest{High: d.String(MaxKeyLen), ID: d.String(maxNameLen)}
	d.End()
	if err := d.Finish(); err != nil {
		return UnmarkRequest{}, fmt.Errorf("kv unmark request: %w", err)
	}
	return r, nil
}

func encodePairs(e *encoding.Encoder, ps []Pair) {
	e.Uvarint(uint64(len(ps)))
	for _, p := range ps {
		e.String(p.Key)
		e.Bytes(p.Value)
	}
}

func decodePairs(d *encoding.Decoder) []Pair {
	n := d.Count(2)
	if n > MaxBatch {
		d.Fail(fmt.Errorf("%d pairs over %d", n, MaxBatch))
		return nil
	}
	var ps []Pair
	for i := 0; i < n && d.Err() == nil; i++ {
		ps = append(ps, Pair{Key: d.String(MaxKeyLen), Value: d.Bytes(MaxValueLen)})
	}
	return ps
}

func encodeKeys(e *encoding.Encoder, ks []string) {
	e.Uvarint(uint64(len(ks)))
	for _, k := range ks {
		e.String(k)
	}
}

func decodeKeys(d *encoding.Decoder) []string {
	n := d.Count(1)
	if n > MaxBatch {
		d.Fail(fmt.Errorf("%d keys over %d", n, MaxBatch))
		return nil
	}
	var ks []string
	for i := 0; i < n && d.Err() == nil; i++ {
		ks = append(ks, d.String(MaxKeyLen))
	}
	return ks
}

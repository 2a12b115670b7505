package kv

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Class is the class name the methods are registered under.
const Class = "kv"

// LeafAttr is the attribute of a leaf object that holds its Leaf.
const LeafAttr = "kv.leaf"

// Limits. A key is 1 to MaxKeyLen bytes, a value 0 to MaxValueLen; a
// request holds at most MaxBatch keys.
const (
	MaxKeyLen   = 1024
	MaxValueLen = 64 << 10
	MaxBatch    = 1 << 16
	maxNameLen  = 256
)

// Errnos of a failed guard (see the package comment).
const (
	ErrnoNotMine  int32 = 18  // EXDEV (not ESTALE, which the rados client takes for a stale map)
	ErrnoFull     int32 = 27  // EFBIG
	ErrnoTooSmall int32 = 34  // ERANGE
	ErrnoBusy     int32 = 16  // EBUSY
	ErrnoNoMark   int32 = 125 // ECANCELED
	// ErrnoMismatch: a write's condition did not hold (kv.write only;
	// ECANCELED, as Ceph's cmpxattr answers).
	ErrnoMismatch int32 = 125
)

// Bounds is a key range [Low, High). Low "" is the smallest key; High ""
// is no upper bound (keys are never empty, so no finite bound is "").
type Bounds struct {
	Low, High string
}

// Contains reports whether key is in b.
func (b Bounds) Contains(key string) bool {
	return key >= b.Low && (b.High == "" || key < b.High)
}

// Everything reports whether b holds every key (the only leaf).
func (b Bounds) Everything() bool { return b.Low == "" && b.High == "" }

func (b Bounds) String() string {
	high := fmt.Sprintf("%q", b.High)
	if b.High == "" {
		high = "+inf"
	}
	return fmt.Sprintf("[%q, %s)", b.Low, high)
}

func (b Bounds) encode(e *encoding.Encoder) { e.String(b.Low); e.String(b.High) }

func decodeBounds(d *encoding.Decoder) Bounds {
	return Bounds{Low: d.String(MaxKeyLen), High: d.String(MaxKeyLen)}
}

// Leaf is what a leaf object's LeafAttr holds: its bounds, the store's k
// (a leaf holds at most 2k entries, and at least k unless it is the only
// leaf), its entry count, and the operation that froze it ("" none).
type Leaf struct {
	Bounds Bounds
	K      uint32
	Count  uint64
	Frozen string
}

// Encode encodes l: version 1: low, high, k, count, frozen.
func (l Leaf) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	l.encodeFields(&e)
	e.End(mk)
	return e.Data()
}

func (l Leaf) encodeFields(e *encoding.Encoder) {
	l.Bounds.encode(e)
	e.Uvarint(uint64(l.K))
	e.Uvarint(l.Count)
	e.String(l.Frozen)
}

// DecodeLeaf decodes what Encode wrote (and the Leaf of a FreezeReply:
// a later version of the same envelope).
func DecodeLeaf(b []byte) (Leaf, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	l := decodeLeafFields(d)
	d.End()
	if err := d.Finish(); err != nil {
		return Leaf{}, fmt.Errorf("kv leaf: %w", err)
	}
	return l, nil
}

func decodeLeafFields(d *encoding.Decoder) Leaf {
	l := Leaf{Bounds: decodeBounds(d)}
	k := d.Uvarint()
	l.Count = d.Uvarint()
	l.Frozen = d.String(maxNameLen)
	if k == 0 || k > 1<<30 {
		d.Fail(fmt.Errorf("k %d out of range", k))
	}
	l.K = uint32(k)
	return l
}

// IndexKey is the index omap key of the leaf whose range ends at high:
// "\x01"+high for a finite bound, "\x02" for none, so the index lists the
// leaves in key order.
func IndexKey(high string) string {
	if high == "" {
		return "\x02"
	}
	return "\x01" + high
}

// HighOf inverts IndexKey.
func HighOf(indexKey string) (string, error) {
	switch {
	case indexKey == "\x02":
		return "", nil
	case len(indexKey) > 1 && indexKey[0] == 1:
		return indexKey[1:], nil
	}
	return "", fmt.Errorf("kv: bad index key %q", indexKey)
}

// Mark kinds.
const (
	// MarkSplit: one full leaf into two.
	MarkSplit uint8 = 1
	// MarkJoin: two adjacent leaves into one (a merge) or into two with
	// the entries shared anew (a rebalance). Which one is decided once
	// both leaves are frozen; the new leaves' bounds say which.
	MarkJoin uint8 = 2
)

// NewLeaf is a leaf a marked operation creates.
type NewLeaf struct {
	Name   string
	Bounds Bounds
}

// Mark is a pending operation on index entries (the document's prefix):
// what it does, when it began (the OSD's time, Unix nanoseconds), the
// leaf it replaces and the leaves it creates, and every index entry it
// marks, so a client that finds it abandoned can roll it back or
// forward.
type Mark struct {
	ID      string
	Kind    uint8
	Created int64
	Old     string
	New     []NewLeaf
	// Entries are the index entries the operation marks, in key order
	// (version 2; a mark of version 1 marks one entry, its own).
	Entries []IndexEntry
	// Takes is, for a mark that took over an abandoned one (cleanup),
	// the operation that froze the old leaves ("" for a mark of its own
	// operation; version 3).
	Takes string
}

// FreezeID is the operation the mark's old leaves are frozen by.
func (m Mark) FreezeID() string {
	if m.Takes != "" {
		return m.Takes
	}
	return m.ID
}

func (m Mark) encode(e *encoding.Encoder) {
	e.String(m.ID)
	e.Uint8(m.Kind)
	e.Varint(m.Created)
	e.String(m.Old)
	e.Uvarint(uint64(len(m.New)))
	for _, n := range m.New {
		e.String(n.Name)
		n.Bounds.encode(e)
	}
}

// encodeEntries writes the mark's version 2 and 3 fields, which follow
// the version 1 fields of the envelope it is in.
func (m Mark) encodeEntries(e *encoding.Encoder) {
	encodeIndexEntries(e, m.Entries)
	e.String(m.Takes)
}

// decodeEntries reads what encodeEntries wrote, as of envelope version v.
func (m *Mark) decodeEntries(d *encoding.Decoder, v uint8) {
	if v >= 2 {
		m.Entries = decodeIndexEntries(d)
	}
	if v >= 3 {
		m.Takes = d.String(maxNameLen)
	}
}

func encodeIndexEntries(e *encoding.Encoder, es []IndexEntry) {
	e.Uvarint(uint64(len(es)))
	for _, x := range es {
		e.String(x.High)
		e.String(x.Leaf)
	}
}

func decodeIndexEntries(d *encoding.Decoder) []IndexEntry {
	n := d.Count(2)
	if n > MaxBatch {
		d.Fail(fmt.Errorf("%d index entries over %d", n, MaxBatch))
		return nil
	}
	var es []IndexEntry
	for i := 0; i < n && d.Err() == nil; i++ {
		es = append(es, IndexEntry{High: d.String(MaxKeyLen), Leaf: d.String(maxNameLen)})
	}
	return es
}

func decodeMark(d *encoding.Decoder) Mark {
	m := Mark{ID: d.String(maxNameLen), Kind: d.Uint8(), Created: d.Varint(), Old: d.String(maxNameLen)}
	n := d.Count(3)
	for i := 0; i < n && d.Err() == nil; i++ {
		m.New = append(m.New, NewLeaf{Name: d.String(maxNameLen), Bounds: decodeBounds(d)})
	}
	return m
}

// Entry is an index entry's value: the leaf, and the pending operation's
// mark if there is one.
type Entry struct {
	Leaf string
	Mark *Mark
}

// Encode encodes x: version 1: leaf, has-mark, mark (id, kind, created,
// old leaf, new leaves (name, low, high)); version 2 adds, with a mark,
// the mark's entries (high, leaf); version 3 its takes.
func (x Entry) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(3, 1)
	e.String(x.Leaf)
	e.Bool(x.Mark != nil)
	if x.Mark != nil {
		x.Mark.encode(&e)
		x.Mark.encodeEntries(&e)
	}
	e.End(mk)
	return e.Data()
}

// DecodeEntry decodes what Encode wrote (versions 1 to 3).
func DecodeEntry(b []byte) (Entry, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(3)
	x := Entry{Leaf: d.String(maxNameLen)}
	if d.Bool() {
		m := decodeMark(d)
		m.decodeEntries(d, v)
		x.Mark = &m
	}
	d.End()
	if x.Leaf == "" {
		d.Fail(fmt.Errorf("no leaf"))
	}
	if err := d.Finish(); err != nil {
		return Entry{}, fmt.Errorf("kv index entry: %w", err)
	}
	return x, nil
}

package encoding

import (
	"encoding/binary"
	"math"
	"slices"
)

// envelopeHeaderSize is the size of version u8, compat u8 and length u32.
const envelopeHeaderSize = 6

// An Encoder appends encoded values to a growing buffer. The zero value is an
// empty Encoder ready to use.
type Encoder struct {
	buf []byte
	// refs are the slices BytesRef placed by reference, in order: each
	// comes after buf[:at] in the encoding.
	refs   []ref
	refLen int // their total length
}

// ref is a slice placed by reference at offset at of buf.
type ref struct {
	at int
	b  []byte
}

// Grow makes room for n more bytes, so that encoding that many appends
// without reallocating.
func (e *Encoder) Grow(n int) { e.buf = slices.Grow(e.buf, n) }

// Uint8 appends v.
func (e *Encoder) Uint8(v uint8) { e.buf = append(e.buf, v) }

// Uint16 appends v, little-endian.
func (e *Encoder) Uint16(v uint16) { e.buf = binary.LittleEndian.AppendUint16(e.buf, v) }

// Uint32 appends v, little-endian.
func (e *Encoder) Uint32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }

// Uint64 appends v, little-endian.
func (e *Encoder) Uint64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }

// Int32 appends v as its two's-complement uint32.
func (e *Encoder) Int32(v int32) { e.Uint32(uint32(v)) }

// Int64 appends v as its two's-complement uint64.
func (e *Encoder) Int64(v int64) { e.Uint64(uint64(v)) }

// Bool appends 1 for true and 0 for false.
func (e *Encoder) Bool(v bool) {
	var b uint8
	if v {
		b = 1
	}
	e.Uint8(b)
}

// Uvarint appends v as an unsigned varint (1 to 10 bytes).
func (e *Encoder) Uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

// Varint appends v as a zig-zag signed varint (1 to 10 bytes).
func (e *Encoder) Varint(v int64) { e.buf = binary.AppendVarint(e.buf, v) }

// Bytes appends the length of b as a uvarint, then b. A nil and an empty
// slice encode the same way.
func (e *Encoder) Bytes(b []byte) {
	e.Uvarint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

// BytesRef appends b as Bytes does, but by reference: b is not copied,
// and the encoding is then only to be had as Segments, with b as one of
// them. It suits large data the caller holds already, such as an object
// read from disk, that is written out with writev. b must not change
// until the segments have been used.
func (e *Encoder) BytesRef(b []byte) {
	e.Uvarint(uint64(len(b)))
	if len(b) == 0 {
		return
	}
	e.refs = append(e.refs, ref{at: len(e.buf), b: b})
	e.refLen += len(b)
}

// Len returns the length of the encoding so far, referenced bytes
// included.
func (e *Encoder) Len() int { return len(e.buf) + e.refLen }

// AlignedBytes appends b as Bytes does, preceded by padding: a uvarint
// count and that many zero bytes, chosen so that b starts at a multiple of
// align bytes from the start of the Encoder's data. A receiver that reads
// the encoding into an aligned buffer then holds b aligned, which lets
// object data go to disk with O_DIRECT straight from the network buffer.
// Data shorter than align gets no padding (a count of 0). align must be a
// power of two no larger than MaxAlign.
func (e *Encoder) AlignedBytes(b []byte, align int) {
	e.alignFor(b, align)
	e.Bytes(b)
}

// AlignedBytesRef is AlignedBytes with b placed by reference, as BytesRef
// places it: b must not change until the encoding has been used.
func (e *Encoder) AlignedBytesRef(b []byte, align int) {
	e.alignFor(b, align)
	e.BytesRef(b)
}

// alignFor appends the padding count and padding that make b, appended
// next with its length, start at a multiple of align.
func (e *Encoder) alignFor(b []byte, align int) {
	pad := 0
	if len(b) >= align && align > 1 {
		pad = alignPad(e.Len()+uvarintLen(uint64(len(b))), align)
	}
	e.Uvarint(uint64(pad))
	e.buf = append(e.buf, make([]byte, pad)...)
}

// alignPad returns the least pad for which base, then pad's uvarint,
// then pad bytes end at a multiple of align. The pad's uvarint takes k
// bytes for pads in [lo, hi]; for each k the least pad of that length
// that lines up follows from the remainder, and the least of those wins.
// (Trying pads one by one cost up to align steps, 2% of the CPU of a
// cluster under 4 KiB writes.)
func alignPad(base, align int) int {
	best := -1
	lo := 0
	for k := 1; k <= 10; k++ {
		hi := 1<<(7*k) - 1
		r := (align - (base+k)%align) % align // pad ≡ r (mod align)
		pad := r
		if pad < lo {
			pad += (lo - pad + align - 1) / align * align
		}
		if pad <= hi && (best < 0 || pad < best) {
			best = pad
		}
		if best >= 0 && best < lo {
			break // longer uvarints only give larger pads
		}
		lo = hi + 1
	}
	return best
}

// MaxAlign bounds the alignment AlignedBytes may ask for.
const MaxAlign = 64 << 10

// maxPad bounds the padding a decoder accepts: alignPad's result is less
// than align plus the 128 a longer uvarint of the count can cost.
const maxPad = MaxAlign + 128

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// String appends s exactly as Bytes would append []byte(s).
func (e *Encoder) String(s string) {
	e.Uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// Begin starts an envelope: it appends version, compat and a placeholder for
// the body length, and returns a mark to pass to End once the body has been
// appended. Envelopes nest; each Begin needs its own End. Begin panics if
// compat > version, which no decoder could make sense of.
func (e *Encoder) Begin(version, compat uint8) int {
	if compat > version {
		panic("encoding: Begin: compat version is newer than version")
	}
	mark := len(e.buf)
	e.buf = append(e.buf, version, compat, 0, 0, 0, 0)
	return mark
}

// End finishes the envelope begun at mark by writing its body length. It
// panics if mark did not come from Begin on this Encoder or if the body is
// longer than 4 GiB - 1, both programming errors.
func (e *Encoder) End(mark int) {
	if mark < 0 || mark+envelopeHeaderSize > len(e.buf) {
		panic("encoding: End: mark does not belong to this Encoder")
	}
	n := len(e.buf) - (mark + envelopeHeaderSize)
	for i := len(e.refs) - 1; i >= 0 && e.refs[i].at >= mark+envelopeHeaderSize; i-- {
		n += len(e.refs[i].b)
	}
	if uint64(n) > math.MaxUint32 {
		panic("encoding: End: envelope body exceeds 4 GiB")
	}
	binary.LittleEndian.PutUint32(e.buf[mark+2:], uint32(n))
}

// Reset empties e for another encoding, keeping its buffer's memory: a
// scratch Encoder for values that are copied once encoded.
func (e *Encoder) Reset() {
	e.buf = e.buf[:0]
	clear(e.refs)
	e.refs = e.refs[:0]
	e.refLen = 0
}

// Data returns the bytes encoded so far. The slice aliases the Encoder's
// buffer: it is valid until the next append, and modifying it modifies what
// the Encoder holds. It panics if BytesRef placed data by reference: use
// Segments then.
func (e *Encoder) Data() []byte {
	if len(e.refs) > 0 {
		panic("encoding: Data of an Encoder holding data by reference; use Segments")
	}
	return e.buf
}

// Segments returns the encoding so far as the slices whose concatenation
// it is: the Encoder's buffer, split where BytesRef placed data by
// reference, with that data between the pieces. Without such data it is
// Data alone. The slices alias the Encoder's buffer and the referenced
// data.
func (e *Encoder) Segments() [][]byte {
	out := make([][]byte, 0, 2*len(e.refs)+1)
	start := 0
	for _, r := range e.refs {
		if r.at > start {
			out = append(out, e.buf[start:r.at])
		}
		out = append(out, r.b)
		start = r.at
	}
	if start < len(e.buf) || len(out) == 0 {
		out = append(out, e.buf[start:])
	}
	return out
}

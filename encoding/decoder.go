package encoding

import (
	"encoding/binary"
	"fmt"
)

// A Decoder reads values from a byte slice. Its error is sticky: after the
// first error every read returns the zero value and Err reports that error.
// Use NewDecoder to create one.
type Decoder struct {
	buf  []byte
	off  int   // next byte to read
	end  int   // end of the innermost open envelope, or len(buf)
	ends []int // end in force outside each open envelope, innermost last
	err  error
}

// NewDecoder returns a Decoder that reads b. The Decoder does not modify b,
// and every slice or string it returns is a copy, except BytesRef's.
func NewDecoder(b []byte) *Decoder {
	return &Decoder{buf: b, end: len(b)}
}

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Fail records err as the Decoder's error unless an error is already
// recorded; the first error wins. Callers use it for semantic validation
// ("pool id out of range") so that one Err check covers both kinds of
// failure. Fail(nil) does nothing.
func (d *Decoder) Fail(err error) {
	if d.err == nil && err != nil {
		d.err = err
	}
}

// Remaining returns the number of bytes left in the innermost open envelope,
// or in the buffer if no envelope is open. It returns 0 after an error.
func (d *Decoder) Remaining() int {
	if d.err != nil {
		return 0
	}
	return d.end - d.off
}

// Finish returns Err, or an ErrCorrupt error if bytes remain after the
// top-level value. Call it once the whole input has been decoded; every Begin
// must have been matched by End.
func (d *Decoder) Finish() error {
	if d.err != nil {
		return d.err
	}
	if len(d.ends) != 0 {
		return fmt.Errorf("encoding: Finish with %d envelopes still open", len(d.ends))
	}
	if n := len(d.buf) - d.off; n != 0 {
		return fmt.Errorf("%w: %d trailing bytes at offset %d", ErrCorrupt, n, d.off)
	}
	return nil
}

// Begin reads an envelope header and returns its version. supported is the
// newest version this decoder understands: an envelope whose compat exceeds
// it fails with ErrUnsupportedVersion. An envelope whose length exceeds the
// bytes left fails with ErrTruncated. Until the matching End, reads cannot
// pass the end of the envelope's body; a read that tries fails with
// ErrCorrupt.
//
// Every Begin must be matched by an End, even after an error.
func (d *Decoder) Begin(supported uint8) uint8 {
	start := d.off
	version := d.Uint8()
	compat := d.Uint8()
	length := d.Uint32()
	// Push even on error so that Begin and End stay balanced.
	d.ends = append(d.ends, d.end)
	if d.err != nil {
		return 0
	}
	switch {
	case compat > version:
		d.err = fmt.Errorf("%w: envelope at offset %d has compat %d > version %d",
			ErrCorrupt, start, compat, version)
		return 0
	case compat > supported:
		d.err = fmt.Errorf("%w: envelope at offset %d is version %d (compat %d); decoder supports up to %d",
			ErrUnsupportedVersion, start, version, compat, supported)
		return 0
	case uint64(length) > uint64(d.end-d.off):
		d.err = fmt.Errorf("%w: envelope at offset %d has length %d, only %d bytes left",
			ErrTruncated, start, length, d.end-d.off)
		return 0
	}
	d.end = d.off + int(length)
	return version
}

// End closes the innermost envelope: it skips whatever the body holds beyond
// what was read (fields appended by newer encoders) and restores the
// enclosing limit. End panics if no envelope is open, a programming error.
func (d *Decoder) End() {
	if len(d.ends) == 0 {
		panic("encoding: Decoder.End without matching Begin")
	}
	if d.err == nil {
		d.off = d.end
	}
	d.end = d.ends[len(d.ends)-1]
	d.ends = d.ends[:len(d.ends)-1]
}

// take returns the next n bytes and advances past them, or records an error
// and returns nil if fewer than n bytes are left.
func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > d.end-d.off {
		d.short(fmt.Sprintf("%d-byte value", n))
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

// short records that reading what at the current offset ran out of input:
// ErrCorrupt inside an envelope (its length disagrees with its contents),
// ErrTruncated otherwise.
func (d *Decoder) short(what string) {
	if len(d.ends) > 0 {
		d.err = fmt.Errorf("%w: %s at offset %d passes the end of its envelope (%d bytes left)",
			ErrCorrupt, what, d.off, d.end-d.off)
		return
	}
	d.err = fmt.Errorf("%w: %s at offset %d (%d bytes left)", ErrTruncated, what, d.off, d.end-d.off)
}

// Uint8 reads one byte.
func (d *Decoder) Uint8() uint8 {
	b := d.take(1)
	if b == nil {
		return 0
	}
	return b[0]
}

// Uint16 reads a little-endian uint16.
func (d *Decoder) Uint16() uint16 {
	b := d.take(2)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

// Uint32 reads a little-endian uint32.
func (d *Decoder) Uint32() uint32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// Uint64 reads a little-endian uint64.
func (d *Decoder) Uint64() uint64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// Int32 reads a little-endian two's-complement int32.
func (d *Decoder) Int32() int32 { return int32(d.Uint32()) }

// Int64 reads a little-endian two's-complement int64.
func (d *Decoder) Int64() int64 { return int64(d.Uint64()) }

// Bool reads one byte; any value other than 0 or 1 is ErrCorrupt.
func (d *Decoder) Bool() bool {
	off := d.off
	switch b := d.Uint8(); b {
	case 0:
		return false
	case 1:
		return true
	default:
		if d.err == nil {
			d.err = fmt.Errorf("%w: bool at offset %d is %d", ErrCorrupt, off, b)
		}
		return false
	}
}

// Uvarint reads an unsigned varint. A varint that overflows 64 bits is
// ErrCorrupt.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.off:d.end])
	return d.varint(v, n)
}

// Varint reads a zig-zag signed varint. A varint that overflows 64 bits is
// ErrCorrupt.
func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf[d.off:d.end])
	return int64(d.varint(uint64(v), n))
}

// varint advances past a varint decoded by encoding/binary, translating its
// result n (bytes read, 0 for short input, negative for overflow).
func (d *Decoder) varint(v uint64, n int) uint64 {
	switch {
	case n > 0:
		d.off += n
		return v
	case n == 0:
		d.short("varint")
	default:
		d.err = fmt.Errorf("%w: varint at offset %d overflows 64 bits", ErrCorrupt, d.off)
	}
	return 0
}

// length reads a uvarint byte length for Bytes or String and checks it
// against max and against the bytes left.
func (d *Decoder) length(max int) (int, bool) {
	off := d.off
	n := d.Uvarint()
	if d.err != nil {
		return 0, false
	}
	if max < 0 {
		max = 0
	}
	if n > uint64(max) {
		d.err = fmt.Errorf("%w: length %d at offset %d exceeds limit %d", ErrCorrupt, n, off, max)
		return 0, false
	}
	if n > uint64(d.end-d.off) {
		d.err = fmt.Errorf("%w: length %d at offset %d exceeds the %d bytes left", ErrCorrupt, n, off, d.end-d.off)
		return 0, false
	}
	return int(n), true
}

// Bytes reads a uvarint length and that many bytes, and returns a copy of
// them. A length above max (a negative max counts as 0) or above the bytes
// left is ErrCorrupt. An empty byte string decodes as nil.
func (d *Decoder) Bytes(max int) []byte {
	n, ok := d.length(max)
	if !ok || n == 0 {
		return nil
	}
	b := make([]byte, n)
	copy(b, d.take(n))
	return b
}

// BytesRef reads a byte string as Bytes does but returns a slice of the
// input instead of a copy: it saves copying large payloads (object data
// in a message), and the caller must keep the input unchanged for as long
// as it uses the result.
func (d *Decoder) BytesRef(max int) []byte {
	n, ok := d.length(max)
	if !ok || n == 0 {
		return nil
	}
	return d.take(n)
}

// AlignedBytesRef reads what Encoder.AlignedBytes wrote: it skips the
// padding (ErrCorrupt if longer than maxPad) and returns the bytes as
// BytesRef does, aliasing the input.
func (d *Decoder) AlignedBytesRef(max int) []byte {
	off := d.off
	pad := d.Uvarint()
	if d.err != nil {
		return nil
	}
	if pad > maxPad {
		d.err = fmt.Errorf("%w: padding of %d bytes at offset %d exceeds %d", ErrCorrupt, pad, off, maxPad)
		return nil
	}
	d.take(int(pad))
	return d.BytesRef(max)
}

// String reads a byte string as Bytes does and returns it as a string.
func (d *Decoder) String(max int) string {
	n, ok := d.length(max)
	if !ok || n == 0 {
		return ""
	}
	return string(d.take(n))
}

// Count reads a uvarint element count for a collection whose elements each
// encode to at least minElemSize bytes (values below 1 count as 1). It is
// ErrCorrupt unless count*minElemSize fits in the bytes left in the current
// envelope, so a hostile count cannot force a huge allocation: the result
// is safe to pass to make.
func (d *Decoder) Count(minElemSize int) int {
	off := d.off
	n := d.Uvarint()
	if d.err != nil {
		return 0
	}
	if minElemSize < 1 {
		minElemSize = 1
	}
	left := d.end - d.off
	if n > uint64(left/minElemSize) {
		d.err = fmt.Errorf("%w: count %d at offset %d of elements of at least %d bytes exceeds the %d bytes left",
			ErrCorrupt, n, off, minElemSize, left)
		return 0
	}
	return int(n)
}

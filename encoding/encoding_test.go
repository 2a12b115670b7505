package encoding

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestFixedWidthLittleEndian(t *testing.T) {
	var e Encoder
	e.Uint8(0x01)
	e.Uint16(0x0302)
	e.Uint32(0x07060504)
	e.Uint64(0x0f0e0d0c0b0a0908)
	e.Int32(-2)
	e.Int64(-3)
	e.Bool(true)
	e.Bool(false)
	want := []byte{
		0x01,
		0x02, 0x03,
		0x04, 0x05, 0x06, 0x07,
		0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
		0xfe, 0xff, 0xff, 0xff,
		0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x01,
		0x00,
	}
	if !bytes.Equal(e.Data(), want) {
		t.Fatalf("encoded\n%x\nwant\n%x", e.Data(), want)
	}

	d := NewDecoder(want)
	if got := d.Uint8(); got != 0x01 {
		t.Errorf("Uint8 = %#x", got)
	}
	if got := d.Uint16(); got != 0x0302 {
		t.Errorf("Uint16 = %#x", got)
	}
	if got := d.Uint32(); got != 0x07060504 {
		t.Errorf("Uint32 = %#x", got)
	}
	if got := d.Uint64(); got != 0x0f0e0d0c0b0a0908 {
		t.Errorf("Uint64 = %#x", got)
	}
	if got := d.Int32(); got != -2 {
		t.Errorf("Int32 = %d", got)
	}
	if got := d.Int64(); got != -3 {
		t.Errorf("Int64 = %d", got)
	}
	if got := d.Bool(); got != true {
		t.Errorf("Bool = %v", got)
	}
	if got := d.Bool(); got != false {
		t.Errorf("Bool = %v", got)
	}
	if err := d.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
}

func TestVarintsAndStrings(t *testing.T) {
	uvals := []uint64{0, 1, 127, 128, 300, math.MaxUint32, math.MaxUint64}
	vals := []int64{0, -1, 1, -64, 64, math.MinInt64, math.MaxInt64}
	strs := []string{"", "a", strings.Repeat("x", 200)}

	var e Encoder
	for _, v := range uvals {
		e.Uvarint(v)
	}
	for _, v := range vals {
		e.Varint(v)
	}
	for _, s := range strs {
		e.String(s)
		e.Bytes([]byte(s))
	}

	d := NewDecoder(e.Data())
	for _, want := range uvals {
		if got := d.Uvarint(); got != want {
			t.Errorf("Uvarint = %d, want %d", got, want)
		}
	}
	for _, want := range vals {
		if got := d.Varint(); got != want {
			t.Errorf("Varint = %d, want %d", got, want)
		}
	}
	for _, want := range strs {
		if got := d.String(1000); got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
		if got := d.Bytes(1000); string(got) != want {
			t.Errorf("Bytes = %q, want %q", got, want)
		}
	}
	if err := d.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
}

func TestBytesReturnsCopy(t *testing.T) {
	var e Encoder
	e.Bytes([]byte("abc"))
	buf := e.Data()
	got := NewDecoder(buf).Bytes(10)
	got[0] = 'z'
	if buf[1] != 'a' {
		t.Fatal("Bytes aliases the input buffer")
	}
}

func TestBytesRefAliases(t *testing.T) {
	var e Encoder
	e.Bytes([]byte("abc"))
	e.Bytes(nil)
	buf := e.Data()
	d := NewDecoder(buf)
	got := d.BytesRef(10)
	if string(got) != "abc" || d.BytesRef(10) != nil {
		t.Fatalf("BytesRef read %q", got)
	}
	got[0] = 'z'
	if buf[1] != 'z' {
		t.Fatal("BytesRef copied the input")
	}
	d = NewDecoder(buf)
	if d.BytesRef(2); d.Err() == nil {
		t.Fatal("BytesRef read past its limit")
	}
}

func TestAlignedBytes(t *testing.T) {
	for _, prefix := range []int{0, 1, 5, 127, 4090, 4095, 4096, 9000} {
		for _, n := range []int{0, 100, 4096, 5000, 1 << 20} {
			var e Encoder
			e.Uint8(7)
			for range prefix {
				e.Uint8(1)
			}
			data := bytes.Repeat([]byte{0xab}, n)
			e.AlignedBytes(data, 4096)
			e.Uint8(9)
			buf := e.Data()
			d := NewDecoder(buf)
			d.Uint8()
			for range prefix {
				d.Uint8()
			}
			got := d.AlignedBytesRef(1 << 21)
			if !bytes.Equal(got, data) || d.Uint8() != 9 || d.Finish() != nil {
				t.Fatalf("prefix %d, %d bytes: round trip failed", prefix, n)
			}
			if n >= 4096 {
				start := len(buf) - 1 - n
				if start%4096 != 0 || &buf[start] != &got[0] {
					t.Fatalf("prefix %d, %d bytes: data at offset %d, not aligned", prefix, n, start)
				}
			} else if len(buf) != 1+prefix+1+uvarintLen(uint64(n))+n+1 {
				t.Fatalf("prefix %d: %d bytes of data were padded", prefix, n)
			}
		}
	}
	var e Encoder
	e.Uvarint(maxPad + 1)
	if d := NewDecoder(e.Data()); d.AlignedBytesRef(10) != nil || !errors.Is(d.Err(), ErrCorrupt) {
		t.Fatalf("oversized padding: %v", d.Err())
	}
}

func TestEnvelopeLayout(t *testing.T) {
	var e Encoder
	m := e.Begin(3, 2)
	e.Uint16(0xbeef)
	e.End(m)
	want := []byte{3, 2, 2, 0, 0, 0, 0xef, 0xbe}
	if !bytes.Equal(e.Data(), want) {
		t.Fatalf("encoded %x, want %x", e.Data(), want)
	}
}

// TestEnvelopeForwardCompat checks that an old decoder skips fields a newer
// encoder appended, and that a newer decoder sees them.
func TestEnvelopeForwardCompat(t *testing.T) {
	var e Encoder
	outer := e.Begin(2, 1)
	e.Uint32(7)
	inner := e.Begin(5, 1)
	e.String("v1 field")
	e.Uint64(42) // appended in v5
	e.End(inner)
	e.Uint8(9) // appended in v2 of the outer structure
	e.End(outer)
	e.Uint8(0xaa) // next top-level value

	d := NewDecoder(e.Data())
	if v := d.Begin(1); v != 2 {
		t.Fatalf("outer version = %d, want 2", v)
	}
	if got := d.Uint32(); got != 7 {
		t.Errorf("Uint32 = %d", got)
	}
	if v := d.Begin(1); v != 5 {
		t.Fatalf("inner version = %d, want 5", v)
	}
	if got := d.String(64); got != "v1 field" {
		t.Errorf("String = %q", got)
	}
	d.End() // skips the v5 Uint64
	d.End() // skips the v2 Uint8
	if got := d.Uint8(); got != 0xaa {
		t.Errorf("after envelope got %#x, want 0xaa", got)
	}
	if err := d.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
}

func TestRemainingAndLimit(t *testing.T) {
	var e Encoder
	m := e.Begin(1, 1)
	e.Uint16(1)
	e.End(m)
	e.Uint64(2)

	d := NewDecoder(e.Data())
	if got, want := d.Remaining(), 6+2+8; got != want {
		t.Errorf("Remaining = %d, want %d", got, want)
	}
	d.Begin(1)
	if got := d.Remaining(); got != 2 {
		t.Errorf("Remaining in envelope = %d, want 2", got)
	}
	d.Uint32() // passes the envelope's end although the buffer has bytes
	if err := d.Err(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("read past envelope: err = %v, want ErrCorrupt", err)
	}
	if got := d.Remaining(); got != 0 {
		t.Errorf("Remaining after error = %d, want 0", got)
	}
	d.End()
}

func TestDecodeErrors(t *testing.T) {
	header := func(version, compat uint8, length uint32) []byte {
		var e Encoder
		e.Uint8(version)
		e.Uint8(compat)
		e.Uint32(length)
		return e.Data()
	}
	tests := []struct {
		name   string
		in     []byte
		decode func(d *Decoder)
		want   error
	}{
		{"empty uint32", nil, func(d *Decoder) { d.Uint32() }, ErrTruncated},
		{"short uint64", make([]byte, 7), func(d *Decoder) { d.Uint64() }, ErrTruncated},
		{"short uvarint", []byte{0x80, 0x80}, func(d *Decoder) { d.Uvarint() }, ErrTruncated},
		{"overlong uvarint", bytes.Repeat([]byte{0xff}, 11), func(d *Decoder) { d.Uvarint() }, ErrCorrupt},
		{"overflow varint", append(bytes.Repeat([]byte{0xff}, 9), 0x7f), func(d *Decoder) { d.Varint() }, ErrCorrupt},
		{"bad bool", []byte{2}, func(d *Decoder) { d.Bool() }, ErrCorrupt},
		{"bytes over max", []byte{5, 1, 2, 3, 4, 5}, func(d *Decoder) { d.Bytes(4) }, ErrCorrupt},
		{"bytes over remaining", []byte{5, 1, 2}, func(d *Decoder) { d.Bytes(100) }, ErrCorrupt},
		{"string negative max", []byte{1, 'a'}, func(d *Decoder) { d.String(-1) }, ErrCorrupt},
		{"huge bytes length", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, func(d *Decoder) { d.Bytes(math.MaxInt) }, ErrCorrupt},
		{"count over remaining", []byte{3, 0, 0, 0, 0, 0}, func(d *Decoder) { d.Count(2) }, ErrCorrupt},
		{"huge count", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, func(d *Decoder) { d.Count(0) }, ErrCorrupt},
		{"envelope too long", append(header(1, 1, 10), 1, 2, 3), func(d *Decoder) { d.Begin(1); d.End() }, ErrTruncated},
		{"envelope header short", []byte{1, 1, 0}, func(d *Decoder) { d.Begin(1); d.End() }, ErrTruncated},
		{"envelope compat too new", header(4, 3, 0), func(d *Decoder) { d.Begin(2); d.End() }, ErrUnsupportedVersion},
		{"envelope compat above version", header(1, 2, 0), func(d *Decoder) { d.Begin(9); d.End() }, ErrCorrupt},
		{"trailing bytes", []byte{1, 2}, func(d *Decoder) { d.Uint8() }, ErrCorrupt},
		{"failed by caller", []byte{1}, func(d *Decoder) { d.Uint8(); d.Fail(errTest) }, errTest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(tt.in)
			tt.decode(d)
			err := d.Finish()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

var errTest = errors.New("test: semantic error")

func TestUnsupportedVersionMessage(t *testing.T) {
	var e Encoder
	e.End(e.Begin(7, 4))
	d := NewDecoder(e.Data())
	d.Begin(3)
	d.End()
	err := d.Err()
	if !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"version 7", "compat 4", "up to 3"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func TestStickyError(t *testing.T) {
	d := NewDecoder([]byte{2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	d.Bool() // fails: 2 is not a bool
	first := d.Err()
	if !errors.Is(first, ErrCorrupt) {
		t.Fatalf("err = %v", first)
	}
	if d.Uint8() != 0 || d.Uint64() != 0 || d.Uvarint() != 0 || d.Varint() != 0 ||
		d.Bytes(10) != nil || d.String(10) != "" || d.Count(1) != 0 || d.Begin(9) != 0 {
		t.Error("read after error returned a non-zero value")
	}
	d.End()
	d.Fail(errTest)
	if d.Err() != first {
		t.Errorf("err changed to %v", d.Err())
	}
}

func TestFailFirstWins(t *testing.T) {
	d := NewDecoder(nil)
	d.Fail(nil)
	if d.Err() != nil {
		t.Fatal("Fail(nil) recorded an error")
	}
	d.Fail(errTest)
	d.Fail(ErrCorrupt)
	if d.Err() != errTest {
		t.Fatalf("err = %v, want %v", d.Err(), errTest)
	}
}

func TestErrorsCarryOffset(t *testing.T) {
	d := NewDecoder([]byte{0, 0, 0, 7})
	d.Uint16()
	d.Uint8()
	d.Bool()
	if err := d.Err(); err == nil || !strings.Contains(err.Error(), "offset 3") {
		t.Fatalf("err = %v, want mention of offset 3", err)
	}
}

func TestCount(t *testing.T) {
	var e Encoder
	m := e.Begin(1, 1)
	e.Uvarint(3)
	e.Uint32(1)
	e.Uint32(2)
	e.Uint32(3)
	e.End(m)
	d := NewDecoder(e.Data())
	d.Begin(1)
	if n := d.Count(4); n != 3 {
		t.Fatalf("Count = %d, want 3", n)
	}
	d.End()
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}

	// The same count is too large for elements of 5 bytes.
	d = NewDecoder(e.Data())
	d.Begin(1)
	d.Count(5)
	d.End()
	if err := d.Finish(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}

func TestFinishWithOpenEnvelope(t *testing.T) {
	var e Encoder
	e.End(e.Begin(1, 1))
	d := NewDecoder(e.Data())
	d.Begin(1)
	if err := d.Finish(); err == nil {
		t.Fatal("Finish with an open envelope succeeded")
	}
}

func TestEncoderPanicsOnMisuse(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	mustPanic("Begin compat>version", func() { new(Encoder).Begin(1, 2) })
	mustPanic("End bad mark", func() { new(Encoder).End(0) })
	mustPanic("Decoder.End without Begin", func() { NewDecoder(nil).End() })
}

func TestDecodeAllocs(t *testing.T) {
	var e Encoder
	m := e.Begin(1, 1)
	e.Uint64(1)
	e.Uvarint(300)
	e.Bool(true)
	e.End(m)
	buf := e.Data()
	allocs := testing.AllocsPerRun(100, func() {
		d := Decoder{buf: buf, end: len(buf), ends: make([]int, 0, 4)}
		d.Begin(1)
		d.Uint64()
		d.Uvarint()
		d.Bool()
		d.End()
		if d.Finish() != nil {
			t.Fatal(d.Err())
		}
	})
	if allocs > 1 {
		t.Errorf("decode allocated %v times, want at most 1", allocs)
	}
}

func BenchmarkEncodeDecode(b *testing.B) {
	var e Encoder
	payload := bytes.Repeat([]byte{1}, 64)
	b.ReportAllocs()
	for b.Loop() {
		e = Encoder{buf: e.buf[:0]}
		m := e.Begin(1, 1)
		e.Uint64(123)
		e.Uvarint(456)
		e.Bytes(payload)
		e.End(m)
		d := NewDecoder(e.Data())
		d.Begin(1)
		d.Uint64()
		d.Uvarint()
		d.Bytes(128)
		d.End()
		if err := d.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestGrowKeepsDataAndMakesRoom(t *testing.T) {
	var e Encoder
	e.Uint8(7)
	e.Grow(4096)
	before := &e.Data()[0]
	if got := e.Data(); len(got) != 1 || got[0] != 7 {
		t.Fatalf("Grow changed the data: %v", got)
	}
	e.Bytes(make([]byte, 4000))
	if &e.Data()[0] != before {
		t.Error("appending within the grown room reallocated the buffer")
	}
}

// Data placed by reference encodes exactly as copied data does: the
// segments joined are the same bytes, envelope lengths and alignment
// padding count it, and the data is not copied.
func TestEncoderBytesRef(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	small := []byte("tail")
	encode := func(byRef bool) *Encoder {
		var e Encoder
		outer := e.Begin(2, 1)
		e.Uint32(7)
		inner := e.Begin(1, 1)
		if byRef {
			e.BytesRef(big)
		} else {
			e.Bytes(big)
		}
		e.String("after")
		e.End(inner)
		if byRef {
			e.BytesRef(nil) // nothing by reference: just the length
			e.BytesRef(small)
		} else {
			e.Bytes(nil)
			e.Bytes(small)
		}
		e.AlignedBytes(bytes.Repeat([]byte{9}, 8192), 4096)
		e.End(outer)
		return &e
	}
	want := encode(false).Data()
	e := encode(true)
	segs := e.Segments()
	if got := bytes.Join(segs, nil); !bytes.Equal(got, want) {
		t.Fatalf("segments joined differ from the copied encoding (%d vs %d bytes)", len(got), len(want))
	}
	if e.Len() != len(want) {
		t.Errorf("Len %d, want %d", e.Len(), len(want))
	}
	if len(segs) != 5 || &segs[1][0] != &big[0] || &segs[3][0] != &small[0] {
		t.Errorf("the referenced data is not its own segment: %d segments", len(segs))
	}
	defer func() {
		if recover() == nil {
			t.Error("Data of an encoder holding data by reference did not panic")
		}
	}()
	e.Data()
}

// AlignedBytesRef encodes exactly as AlignedBytes does, after data placed
// by reference too, and leaves the data where it is.
func TestAlignedBytesRef(t *testing.T) {
	first := bytes.Repeat([]byte{1}, 5000)
	data := bytes.Repeat([]byte{0xab}, 3*4096+7)
	encode := func(byRef bool) *Encoder {
		var e Encoder
		e.Uint8(7)
		if byRef {
			e.AlignedBytesRef(first, 4096)
			e.AlignedBytesRef(data, 4096)
		} else {
			e.AlignedBytes(first, 4096)
			e.AlignedBytes(data, 4096)
		}
		e.Uint8(9)
		return &e
	}
	want := encode(false).Data()
	segs := encode(true).Segments()
	if got := bytes.Join(segs, nil); !bytes.Equal(got, want) {
		t.Fatalf("segments joined differ from the copied encoding (%d vs %d bytes)", len(got), len(want))
	}
	if len(segs) != 5 || &segs[1][0] != &first[0] || &segs[3][0] != &data[0] {
		t.Fatalf("the data are not segments of their own: %d segments", len(segs))
	}
	if off := len(segs[0]) + len(segs[1]) + len(segs[2]); off%4096 != 0 {
		t.Fatalf("the second data start at %d, not aligned", off)
	}
}

// alignPad finds the least padding that lines data up, as trying every
// padding in turn does, for every offset and alignment (and it finds one
// where that search, stopped at align as the encoder's once was, found
// none).
func TestAlignPadIsTheLeast(t *testing.T) {
	for align := 2; align <= MaxAlign; align *= 2 {
		for base := 0; base < 3*align+300; base++ {
			if align > 256 && base%97 != 0 && base%align < align-300 && base%align > 300 {
				continue // spot-check the middle of large alignments
			}
			want := -1
			for pad := 0; pad <= align+256; pad++ {
				if (base+uvarintLen(uint64(pad))+pad)%align == 0 {
					want = pad
					break
				}
			}
			got := alignPad(base, align)
			if got != want || got < 0 || got > MaxAlign+128 {
				t.Fatalf("alignPad(%d, %d) = %d, want %d", base, align, got, want)
			}
		}
	}
}

// An OSD op's 4 KiB of data placed at a 4 KiB boundary after a header of
// varying length, as each replicated small write is encoded three times.
func BenchmarkAlignedBytes4K(b *testing.B) {
	data := make([]byte, 4096)
	for i := 0; b.Loop(); i++ {
		var e Encoder
		e.Bytes(data[:i%4096])
		e.AlignedBytesRef(data, 4096)
	}
}

// Reset starts a new encoding in the same memory, with nothing left of
// the previous one, references included.
func TestEncoderReset(t *testing.T) {
	var e Encoder
	e.Uint32(7)
	e.BytesRef(make([]byte, 10))
	e.Reset()
	if e.Len() != 0 {
		t.Fatalf("Len after Reset = %d", e.Len())
	}
	e.Uint8(1)
	if got := e.Data(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("Data after Reset = %v", got)
	}
}

package layout

import (
	"errors"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// Reference: Ceph's ceph_file_layout_is_valid (src/common/fs_types.cc,
// and the kernel client's net/ceph/ceph_fs.c): stripe unit and object size
// non-zero multiples of 64 KiB, object size a multiple of the stripe
// unit, stripe count non-zero.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    Layout
		want string // "" valid, else a substring of the error
	}{
		{"default", Default(1), ""},
		{"ceph example", Layout{ObjectSize: 4 * mib, StripeUnit: mib, StripeCount: 3}, ""},
		{"smallest", Layout{ObjectSize: 64 * kib, StripeUnit: 64 * kib, StripeCount: 1}, ""},
		{"not a power of two", Layout{ObjectSize: 192 * kib, StripeUnit: 64 * kib, StripeCount: 7}, ""},
		{"zero unit", Layout{ObjectSize: 4 * mib, StripeCount: 1}, "stripe_unit 0"},
		{"unit not 64k", Layout{ObjectSize: 4 * mib, StripeUnit: 4096, StripeCount: 1}, "stripe_unit 4096"},
		{"zero object", Layout{StripeUnit: mib, StripeCount: 1}, "object_size 0"},
		{"object not 64k", Layout{ObjectSize: 4*mib + 1, StripeUnit: mib, StripeCount: 1}, "object_size 4194305"},
		{"object not a multiple", Layout{ObjectSize: 3 * 64 * kib, StripeUnit: 128 * kib, StripeCount: 1}, "not a multiple of stripe_unit"},
		{"unit above object", Layout{ObjectSize: mib, StripeUnit: 2 * mib, StripeCount: 1}, "not a multiple of stripe_unit"},
		{"zero count", Layout{ObjectSize: mib, StripeUnit: mib}, "stripe_count is 0"},
		{"negative pool", Layout{ObjectSize: mib, StripeUnit: mib, StripeCount: 1, Pool: -1}, "pool -1"},
	} {
		err := tc.l.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an ErrInvalid saying %q", tc.name, err, tc.want)
		}
	}
}

func TestObjectName(t *testing.T) {
	for _, tc := range []struct {
		ino, no uint64
		want    string
	}{
		{0x10000000000, 2, "10000000000.00000002"},
		{0x200, 0, "200.00000000"},
		{0x1, 0x123456789, "1.123456789"},
	} {
		if got := ObjectName(tc.ino, tc.no); got != tc.want {
			t.Errorf("ObjectName(%#x, %d) = %q, want %q", tc.ino, tc.no, got, tc.want)
		}
	}
}

// The worked example of Ceph's architecture documentation ("Data
// Striping"): stripe unit 1 MiB, stripe count 3, object size 4 MiB, so an
// object set of 3 objects holds 12 MiB and units go round-robin 0, 1, 2,
// 0, 1, 2, ...
func TestLocateCephExample(t *testing.T) {
	l := Layout{ObjectSize: 4 * mib, StripeUnit: mib, StripeCount: 3}
	for _, tc := range []struct {
		off              uint64
		no, objOff, left uint64
	}{
		{0, 0, 0, mib},
		{mib, 1, 0, mib},
		{2 * mib, 2, 0, mib},
		{3 * mib, 0, mib, mib},
		{4*mib + 10, 1, mib + 10, mib - 10},
		{11*mib + 5, 2, 3*mib + 5, mib - 5},
		{12 * mib, 3, 0, mib},
		{25*mib + 7, 7, 7, mib - 7},
		{36 * mib, 9, 0, mib},
	} {
		no, off, left := l.Locate(tc.off)
		if no != tc.no || off != tc.objOff || left != tc.left {
			t.Errorf("Locate(%d) = object %d offset %d left %d, want %d %d %d", tc.off, no, off, left, tc.no, tc.objOff, tc.left)
		}
		if back := l.FileOffset(no, off); back != tc.off {
			t.Errorf("FileOffset(%d, %d) = %d, want %d", no, off, back, tc.off)
		}
	}
	if l.Period() != 12*mib || l.StripeWidth() != 3*mib {
		t.Errorf("period %d, stripe width %d", l.Period(), l.StripeWidth())
	}
}

func TestFileToExtentsCephExample(t *testing.T) {
	l := Layout{ObjectSize: 4 * mib, StripeUnit: mib, StripeCount: 3}
	got := l.FileToExtents(0, 12*mib)
	want := []ObjectExtent{
		{0, 0, 4 * mib, []BufferExtent{{0, mib}, {3 * mib, mib}, {6 * mib, mib}, {9 * mib, mib}}},
		{1, 0, 4 * mib, []BufferExtent{{mib, mib}, {4 * mib, mib}, {7 * mib, mib}, {10 * mib, mib}}},
		{2, 0, 4 * mib, []BufferExtent{{2 * mib, mib}, {5 * mib, mib}, {8 * mib, mib}, {11 * mib, mib}}},
	}
	checkExtents(t, got, want)

	// A range from inside unit 2 of set 0 into set 1.
	got = l.FileToExtents(11*mib+100, mib+200)
	want = []ObjectExtent{
		{2, 3*mib + 100, mib - 100, []BufferExtent{{0, mib - 100}}},
		{3, 0, 300, []BufferExtent{{mib - 100, 300}}},
	}
	checkExtents(t, got, want)

	// With one stripe, a range is one extent per object.
	l1 := Default(0)
	got = l1.FileToExtents(3*mib, 6*mib)
	want = []ObjectExtent{
		{0, 3 * mib, mib, []BufferExtent{{0, mib}}},
		{1, 0, 4 * mib, []BufferExtent{{mib, 4 * mib}}},
		{2, 0, mib, []BufferExtent{{5 * mib, mib}}},
	}
	checkExtents(t, got, want)
	if got := l1.FileToExtents(5, 0); len(got) != 0 {
		t.Errorf("empty range: %v", got)
	}
}

func checkExtents(t *testing.T, got, want []ObjectExtent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d extents %+v, want %+v", len(got), got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.ObjectNo != w.ObjectNo || g.Offset != w.Offset || g.Length != w.Length || len(g.Buffer) != len(w.Buffer) {
			t.Fatalf("extent %d: got %+v, want %+v", i, g, w)
		}
		for j := range g.Buffer {
			if g.Buffer[j] != w.Buffer[j] {
				t.Fatalf("extent %d buffer %d: got %+v, want %+v", i, j, g.Buffer[j], w.Buffer[j])
			}
		}
	}
}

func TestObjectToFile(t *testing.T) {
	l := Layout{ObjectSize: 4 * mib, StripeUnit: mib, StripeCount: 3}
	got := l.ObjectToFile(4, mib-10, 2*mib)
	want := []Piece{
		{4, mib - 10, 14*mib - 10, 10},   // object 4 is set 1 column 1: unit 0 is block 13
		{4, mib, 16 * mib, mib},          // unit 1: block 16
		{4, 2 * mib, 19 * mib, mib - 10}, // unit 2: block 19
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("piece %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestObjectLenAndCount(t *testing.T) {
	l := Layout{ObjectSize: 4 * mib, StripeUnit: mib, StripeCount: 3}
	size := uint64(5*mib + 10)
	for no, want := range []uint64{2 * mib, 2 * mib, mib + 10, 0, 0, 0} {
		if got := l.ObjectLen(size, uint64(no)); got != want {
			t.Errorf("ObjectLen(%d, %d) = %d, want %d", size, no, got, want)
		}
	}
	for _, tc := range []struct{ size, count uint64 }{
		{0, 0}, {1, 1}, {mib, 1}, {mib + 1, 2}, {3 * mib, 3}, {12 * mib, 3}, {12*mib + 1, 4}, {14*mib + 1, 6}, {100 * mib, 27},
	} {
		if got := l.ObjectCount(tc.size); got != tc.count {
			t.Errorf("ObjectCount(%d) = %d, want %d", tc.size, got, tc.count)
		}
	}
}

// ObjectLen and ObjectCount against the object lengths that writing the
// file from byte 0 to size produces, for small layouts and every size.
func TestObjectLenBruteForce(t *testing.T) {
	for _, l := range smallLayouts() {
		lens := map[uint64]uint64{}
		maxSize := 3*l.Period() + 2*uint64(l.StripeUnit)
		for size := uint64(0); size <= maxSize; size += uint64(l.StripeUnit) / 4 {
			if size > 0 {
				for _, p := range l.Pieces(size-uint64(l.StripeUnit)/4, uint64(l.StripeUnit)/4) {
					lens[p.ObjectNo] = max(lens[p.ObjectNo], p.ObjectOff+p.Length)
				}
			}
			var count uint64
			for no := uint64(0); no < 4*uint64(l.StripeCount)+4; no++ {
				if got := l.ObjectLen(size, no); got != lens[no] {
					t.Fatalf("%v: ObjectLen(%d, %d) = %d, want %d", l, size, no, got, lens[no])
				}
				if lens[no] > 0 {
					count = no + 1
				}
			}
			if got := l.ObjectCount(size); got != count {
				t.Fatalf("%v: ObjectCount(%d) = %d, want %d", l, size, got, count)
			}
		}
	}
}

// smallLayouts are layouts with units scaled down (the math does not need
// 64 KiB units, and small ones make brute force quick).
func smallLayouts() []Layout {
	var out []Layout
	for _, su := range []uint32{4, 8} {
		for _, spo := range []uint32{1, 2, 3} {
			for _, sc := range []uint32{1, 2, 3, 5} {
				out = append(out, Layout{ObjectSize: su * spo, StripeUnit: su, StripeCount: sc})
			}
		}
	}
	return out
}

func TestEncodeDecode(t *testing.T) {
	in := Layout{ObjectSize: 4 * mib, StripeUnit: mib, StripeCount: 3, Pool: 7, Namespace: "fs"}
	var e encoding.Encoder
	in.Encode(&e)
	var out Layout
	d := encoding.NewDecoder(e.Data())
	out.Decode(d)
	if err := d.Finish(); err != nil || out != in {
		t.Fatalf("got %+v %v, want %+v", out, err, in)
	}
	bad := Layout{ObjectSize: 4 * mib, StripeUnit: 3 * mib, StripeCount: 1}
	e.Reset()
	bad.Encode(&e)
	d = encoding.NewDecoder(e.Data())
	out.Decode(d)
	if err := d.Finish(); !errors.Is(err, encoding.ErrCorrupt) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid layout decoded: %v", err)
	}
}

package alloc

import (
	"errors"
	"slices"
	"testing"
)

const unit = 4096

// x returns the extent of length units at unit offset off.
func x(off, length uint64) Extent { return Extent{Offset: off * unit, Length: length * unit} }

// withFree returns an allocator of size units whose free extents are
// exactly free.
func withFree(t *testing.T, size uint64, free ...Extent) *Allocator {
	t.Helper()
	a, err := New(size*unit, unit)
	if err != nil {
		t.Fatal(err)
	}
	var used []Extent
	at := uint64(0)
	for _, f := range append(free, x(size, 0)) {
		if f.Offset > at {
			used = append(used, Extent{Offset: at, Length: f.Offset - at})
		}
		at = f.End()
	}
	if err := a.MarkUsed(used...); err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(a.FreeExtents); !slices.Equal(got, free) {
		t.Fatalf("free extents %v, want %v", got, free)
	}
	return a
}

func TestNew(t *testing.T) {
	for _, c := range []struct {
		size, unit, wantSize uint64
		err                  error
	}{
		{size: 1 << 30, unit: 4096, wantSize: 1 << 30},
		{size: 1<<30 + 4095, unit: 4096, wantSize: 1 << 30}, // rounded down
		{size: 1, unit: 1, wantSize: 1},
		{size: ^uint64(0), unit: 64 << 10, wantSize: ^uint64(0) &^ (64<<10 - 1)},
		{size: 1 << 30, unit: 0, err: ErrInvalid},
		{size: 1 << 30, unit: 3, err: ErrInvalid},
		{size: 4095, unit: 4096, err: ErrInvalid},
		{size: 0, unit: 4096, err: ErrInvalid},
	} {
		a, err := New(c.size, c.unit)
		if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Errorf("New(%d, %d): err %v, want %v", c.size, c.unit, err, c.err)
			continue
		}
		if err != nil {
			continue
		}
		if a.Size() != c.wantSize || a.Free() != c.wantSize || a.Unit() != c.unit || a.Fragments() != 1 {
			t.Errorf("New(%d, %d): size %d free %d unit %d fragments %d, want size and free %d, 1 fragment",
				c.size, c.unit, a.Size(), a.Free(), a.Unit(), a.Fragments(), c.wantSize)
		}
	}
}

// TestAllocatePolicy checks where Allocate puts data: at the hint, then by
// best fit over the size bins, then split, largest first.
func TestAllocatePolicy(t *testing.T) {
	// Bins in units: 1 is bin 0, 2-3 bin 1, 4-7 bin 2, 8-15 bin 3, ...
	for _, c := range []struct {
		name       string
		size       uint64
		free       []Extent
		want, hint uint64 // bytes
		got        []Extent
	}{
		{
			name: "empty device", size: 100, free: []Extent{x(0, 100)},
			want: 3 * unit, got: []Extent{x(0, 3)},
		},
		{
			name: "rounded up to the unit", size: 100, free: []Extent{x(0, 100)},
			want: 3*unit + 1, got: []Extent{x(0, 4)},
		},
		{
			name: "at the hint, inside a free extent", size: 100, free: []Extent{x(0, 100)},
			want: 2 * unit, hint: 10 * unit, got: []Extent{x(10, 2)},
		},
		{
			name: "unaligned hint rounds up", size: 100, free: []Extent{x(0, 100)},
			want: unit, hint: 10*unit + 1, got: []Extent{x(11, 1)},
		},
		{
			name: "no room at the hint: next free extent after it that fits",
			size: 100, free: []Extent{x(0, 50), x(60, 1), x(70, 2), x(80, 20)},
			want: 2 * unit, hint: 55 * unit, got: []Extent{x(70, 2)},
		},
		{
			name: "hint extent too short: not split across it",
			size: 100, free: []Extent{x(0, 50), x(60, 2), x(70, 10)},
			want: 3 * unit, hint: 60 * unit, got: []Extent{x(70, 3)},
		},
		{
			name: "hint beyond the device: ignored", size: 100, free: []Extent{x(0, 100)},
			want: unit, hint: 1 << 40, got: []Extent{x(0, 1)},
		},
		{
			name: "best fit: smallest bin that fits, not the first extent",
			size: 100, free: []Extent{x(0, 20), x(30, 9), x(50, 5), x(60, 2)},
			want: 4 * unit, got: []Extent{x(50, 4)},
		},
		{
			name: "best fit: lowest offset within the bin",
			size: 100, free: []Extent{x(0, 20), x(30, 6), x(50, 5), x(60, 7)},
			want: 5 * unit, got: []Extent{x(30, 5)},
		},
		{
			name: "best fit: extents of the bin that are too short are skipped",
			size: 100, free: []Extent{x(0, 20), x(30, 4), x(50, 6), x(60, 5)},
			want: 5 * unit, got: []Extent{x(50, 5)},
		},
		{
			name: "best fit: the bin has none that fits, next bin",
			size: 100, free: []Extent{x(0, 4), x(10, 5), x(20, 20), x(50, 9)},
			want: 6 * unit, got: []Extent{x(50, 6)},
		},
		{
			name: "split: largest first, the rest by best fit",
			size: 100, free: []Extent{x(0, 1), x(10, 2), x(20, 5), x(30, 3), x(40, 1)},
			want: 7 * unit, got: []Extent{x(10, 2), x(20, 5)},
		},
		{
			name: "split: several pieces",
			size: 100, free: []Extent{x(0, 1), x(10, 2), x(20, 5), x(30, 3), x(40, 1)},
			want: 11 * unit, got: []Extent{x(0, 1), x(10, 2), x(20, 5), x(30, 3)},
		},
		{
			name: "split: everything", size: 100, free: []Extent{x(0, 1), x(10, 2), x(99, 1)},
			want: 4 * unit, got: []Extent{x(0, 1), x(10, 2), x(99, 1)},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := withFree(t, c.size, c.free...)
			before := a.Free()
			got, err := a.Allocate(c.want, c.hint)
			if err != nil || !slices.Equal(got, c.got) {
				t.Fatalf("Allocate(%d, %d) = %v, %v; want %v", c.want, c.hint, got, err, c.got)
			}
			var n uint64
			for _, e := range got {
				n += e.Length
			}
			if a.Free() != before-n {
				t.Fatalf("Free() = %d after taking %d of %d", a.Free(), n, before)
			}
		})
	}
}

// TestAllocateBinScanLimit checks the bound on the search of the request's
// own bin: after binScan extents too short for the request it takes the
// first extent of a larger bin, even if one further in its own bin fits.
func TestAllocateBinScanLimit(t *testing.T) {
	var free []Extent
	for i := range uint64(binScan) {
		free = append(free, x(10*i, 4)) // bin 2, too short for 5
	}
	free = append(free, x(10*binScan, 7), x(10*binScan+10, 8))
	a := withFree(t, 10*binScan+20, free...)
	got, err := a.Allocate(5*unit, 0)
	if want := []Extent{x(10*binScan+10, 5)}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("Allocate(5 units) = %v, %v; want %v", got, err, want)
	}
	// With no larger bin, Allocate splits rather than search the whole bin.
	got, err = a.Allocate(6*unit, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("Allocate(6 units) = %v, %v; want two extents", got, err)
	}
}

// TestSequentialWithHint writes two objects in turns, each hinting at the
// end of its previous extent: each comes out contiguous.
func TestSequentialWithHint(t *testing.T) {
	a, err := New(1<<30, unit)
	if err != nil {
		t.Fatal(err)
	}
	// The second object starts far from the first.
	objs := [][]Extent{nil, {{Offset: 512 << 20}}}
	for i := range 1000 {
		o := &objs[i%2]
		var hint uint64
		if n := len(*o); n > 0 {
			hint = (*o)[n-1].End()
		}
		got, err := a.Allocate(64<<10, hint)
		if err != nil || len(got) != 1 {
			t.Fatalf("Allocate(64 KiB, %d) = %v, %v", hint, got, err)
		}
		if len(*o) > 0 && got[0].Offset != hint {
			t.Fatalf("object %d: allocation %d at %v, want at %d", i%2, i, got[0], hint)
		}
		*o = append(*o, got[0])
	}
	if a.Fragments() != 2 {
		t.Fatalf("Fragments() = %d, want 2", a.Fragments())
	}
}

func TestAllocateNoSpace(t *testing.T) {
	a := withFree(t, 100, x(0, 10), x(20, 10), x(50, 10))
	for _, want := range []uint64{30*unit + 1, 31 * unit, 1 << 62, ^uint64(0)} {
		if got, err := a.Allocate(want, 0); !errors.Is(err, ErrNoSpace) || got != nil {
			t.Errorf("Allocate(%d) = %v, %v; want ErrNoSpace", want, got, err)
		}
	}
	if a.Free() != 30*unit || a.Fragments() != 3 {
		t.Fatalf("a failed Allocate changed the free space: %d bytes in %d extents", a.Free(), a.Fragments())
	}
	if got, err := a.Allocate(30*unit, 0); err != nil || len(got) != 3 || a.Free() != 0 {
		t.Fatalf("Allocate(all) = %v, %v, free %d", got, err, a.Free())
	}
	if _, err := a.Allocate(1, 0); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("Allocate on a full device: %v, want ErrNoSpace", err)
	}
	if _, err := a.Allocate(0, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Allocate(0): %v, want ErrInvalid", err)
	}
}

func TestReleaseMerges(t *testing.T) {
	for _, c := range []struct {
		name    string
		free    []Extent
		release []Extent
		after   []Extent
	}{
		{"both sides", []Extent{x(0, 10), x(20, 10)}, []Extent{x(10, 10)}, []Extent{x(0, 30)}},
		{"left", []Extent{x(0, 10), x(30, 10)}, []Extent{x(10, 10)}, []Extent{x(0, 20), x(30, 10)}},
		{"right", []Extent{x(0, 10), x(30, 10)}, []Extent{x(20, 10)}, []Extent{x(0, 10), x(20, 20)}},
		{"none", []Extent{x(0, 10), x(30, 10)}, []Extent{x(15, 5)}, []Extent{x(0, 10), x(15, 5), x(30, 10)}},
		{"device ends", []Extent{x(10, 80)}, []Extent{x(0, 10), x(90, 10)}, []Extent{x(0, 100)}},
		{"batch of neighbours", nil, []Extent{x(20, 10), x(0, 10), x(10, 10)}, []Extent{x(0, 30)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := withFree(t, 100, c.free...)
			if err := a.Release(c.release...); err != nil {
				t.Fatal(err)
			}
			if got := slices.Collect(a.FreeExtents); !slices.Equal(got, c.after) {
				t.Fatalf("free extents %v, want %v", got, c.after)
			}
		})
	}
}

// TestReleaseMarkUsedErrors checks the errors of Release and MarkUsed and
// that a failed call changes nothing.
func TestReleaseMarkUsedErrors(t *testing.T) {
	free := []Extent{x(10, 10), x(40, 10)} // of 100 units
	for _, c := range []struct {
		name              string
		exts              []Extent
		release, markUsed error
	}{
		{"ok release / not free", []Extent{x(0, 10)}, nil, ErrOverlap},
		{"double free / ok mark", []Extent{x(10, 10)}, ErrOverlap, nil},
		{"part free", []Extent{x(5, 10)}, ErrOverlap, ErrOverlap},
		{"covers a free extent", []Extent{x(30, 30)}, ErrOverlap, ErrOverlap},
		{"ends in a free extent", []Extent{x(20, 21)}, ErrOverlap, ErrOverlap},
		{"one of a batch", []Extent{x(0, 5), x(45, 1)}, ErrOverlap, ErrOverlap},
		{"batch overlaps itself", []Extent{x(0, 5), x(60, 5), x(4, 2)}, ErrOverlap, ErrOverlap},
		{"pair overlaps itself", []Extent{x(41, 2), x(42, 2)}, ErrOverlap, ErrOverlap},
		{"zero length", []Extent{x(0, 0)}, ErrInvalid, ErrInvalid},
		{"unaligned offset", []Extent{{Offset: 1, Length: unit}}, ErrInvalid, ErrInvalid},
		{"unaligned length", []Extent{{Offset: 0, Length: unit + 1}}, ErrInvalid, ErrInvalid},
		{"beyond the device", []Extent{x(99, 2)}, ErrInvalid, ErrInvalid},
		{"at the end of the device", []Extent{x(100, 1)}, ErrInvalid, ErrInvalid},
		{"end overflows", []Extent{{Offset: ^uint64(0) &^ (unit - 1), Length: 2 * unit}}, ErrInvalid, ErrInvalid},
		{"one invalid in a batch", []Extent{x(0, 1), x(0, 0)}, ErrInvalid, ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, op := range []struct {
				name string
				f    func(*Allocator) func(...Extent) error
				want error
			}{
				{"Release", func(a *Allocator) func(...Extent) error { return a.Release }, c.release},
				{"MarkUsed", func(a *Allocator) func(...Extent) error { return a.MarkUsed }, c.markUsed},
			} {
				a := withFree(t, 100, free...)
				err := op.f(a)(c.exts...)
				if (err == nil) != (op.want == nil) || !errors.Is(err, op.want) {
					t.Errorf("%s(%v): %v, want %v", op.name, c.exts, err, op.want)
				}
				if err != nil {
					if got := slices.Collect(a.FreeExtents); !slices.Equal(got, free) {
						t.Errorf("%s(%v) failed and changed the free extents to %v", op.name, c.exts, got)
					}
				}
			}
		})
	}
}

func TestEmptyCalls(t *testing.T) {
	a := withFree(t, 100, x(10, 10))
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.MarkUsed(); err != nil {
		t.Fatal(err)
	}
}

// TestZeroValue checks that the zero Allocator acts as an empty device
// rather than panicking.
func TestZeroValue(t *testing.T) {
	var a Allocator
	if _, err := a.Allocate(1, 0); !errors.Is(err, ErrNoSpace) {
		t.Errorf("Allocate: %v, want ErrNoSpace", err)
	}
	if err := a.Release(Extent{Offset: 0, Length: 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Release: %v, want ErrInvalid", err)
	}
	if err := a.MarkUsed(Extent{Offset: 0, Length: 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("MarkUsed: %v, want ErrInvalid", err)
	}
	if a.Fragments() != 0 || a.Free() != 0 || len(slices.Collect(a.FreeExtents)) != 0 {
		t.Errorf("zero Allocator has free space")
	}
}

package alloc

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"
)

// harness drives an Allocator and a naive model of it, a slice with one
// bool per unit, through the same operations and compares them after every
// step. TestModel drives it from a seeded random source and FuzzAllocator
// from the fuzzer's bytes, through randomOp.
type harness struct {
	tb   testing.TB
	a    *Allocator
	unit uint64
	free []bool     // the model: free[i] reports whether unit i is free
	live []Extent   // the used space, as disjoint extents
	ops  []loggedOp // the last operations, to report a failure
}

func newHarness(tb testing.TB, size, unit uint64) *harness {
	tb.Helper()
	a, err := New(size, unit)
	if err != nil {
		tb.Fatalf("New(%d, %d): %v", size, unit, err)
	}
	h := &harness{tb: tb, a: a, unit: unit, free: make([]bool, a.Size()/unit)}
	for i := range h.free {
		h.free[i] = true
	}
	h.logf("New(%d, %d)", size, unit)
	h.check()
	return h
}

// logf records an operation, formatted only on failure; the last 40 are
// kept.
func (h *harness) logf(format string, args ...any) {
	if len(h.ops) == 80 {
		h.ops = append(h.ops[:0], h.ops[40:]...)
	}
	h.ops = append(h.ops, loggedOp{format, args})
}

type loggedOp struct {
	format string
	args   []any
}

func (h *harness) fatalf(format string, args ...any) {
	h.tb.Helper()
	var ops strings.Builder
	for _, op := range h.ops[max(len(h.ops)-40, 0):] {
		fmt.Fprintf(&ops, "\n\t"+op.format, op.args...)
	}
	h.tb.Fatalf("%s\nlast operations:%s", fmt.Sprintf(format, args...), ops.String())
}

// modelFree returns the free bytes of the model.
func (h *harness) modelFree() uint64 {
	n := uint64(0)
	for _, f := range h.free {
		if f {
			n++
		}
	}
	return n * h.unit
}

// modelRuns returns the maximal runs of free units of the model, in bytes.
func (h *harness) modelRuns() []Extent {
	var runs []Extent
	for i := 0; i < len(h.free); {
		if !h.free[i] {
			i++
			continue
		}
		j := i
		for j < len(h.free) && h.free[j] {
			j++
		}
		runs = append(runs, Extent{Offset: uint64(i) * h.unit, Length: uint64(j-i) * h.unit})
		i = j
	}
	return runs
}

// modelValid reports whether e is a valid argument of Release or MarkUsed.
func (h *harness) modelValid(e Extent) bool {
	return e.Length > 0 && e.Offset%h.unit == 0 && e.Length%h.unit == 0 &&
		e.Offset+e.Length >= e.Offset && e.Offset+e.Length <= h.a.Size()
}

// modelAll reports whether every unit of e is free (want true) or used
// (want false) in the model.
func (h *harness) modelAll(e Extent, want bool) bool {
	for u := e.Offset / h.unit; u < e.End()/h.unit; u++ {
		if h.free[u] != want {
			return false
		}
	}
	return true
}

func (h *harness) modelSet(e Extent, free bool) {
	for u := e.Offset / h.unit; u < e.End()/h.unit; u++ {
		h.free[u] = free
	}
}

func overlapping(exts []Extent) bool {
	s := slices.Clone(exts)
	slices.SortFunc(s, byOffset)
	for i := 1; i < len(s); i++ {
		if s[i-1].End() > s[i].Offset {
			return true
		}
	}
	return false
}

// cutLive removes e from the used extents.
func (h *harness) cutLive(e Extent) {
	var out []Extent
	for _, l := range h.live {
		if l.End() <= e.Offset || e.End() <= l.Offset {
			out = append(out, l)
			continue
		}
		if l.Offset < e.Offset {
			out = append(out, Extent{Offset: l.Offset, Length: e.Offset - l.Offset})
		}
		if e.End() < l.End() {
			out = append(out, Extent{Offset: e.End(), Length: l.End() - e.End()})
		}
	}
	h.live = out
}

func (h *harness) allocate(want, hint uint64) []Extent {
	h.logf("Allocate(%d, %d)", want, hint)
	before := h.snapshot()
	got, err := h.a.Allocate(want, hint)
	rounded := (want + h.unit - 1) / h.unit * h.unit
	switch {
	case want == 0:
		if !errors.Is(err, ErrInvalid) {
			h.fatalf("Allocate(0): err %v, want ErrInvalid", err)
		}
	case want > h.modelFree():
		if !errors.Is(err, ErrNoSpace) {
			h.fatalf("Allocate(%d) with %d free: %v, %v; want ErrNoSpace", want, h.modelFree(), got, err)
		}
	case err != nil:
		h.fatalf("Allocate(%d, %d) with %d free: %v", want, hint, h.modelFree(), err)
	}
	if err != nil {
		h.sameAs(before)
		return nil
	}
	total := uint64(0)
	for i, e := range got {
		if !h.modelValid(e) || !h.modelAll(e, true) {
			h.fatalf("Allocate(%d, %d) = %v: %v was not free", want, hint, got, e)
		}
		if i > 0 && got[i-1].End() >= e.Offset {
			h.fatalf("Allocate(%d, %d) = %v: not in offset order, overlapping or adjacent", want, hint, got)
		}
		total += e.Length
	}
	if total != rounded {
		h.fatalf("Allocate(%d, %d) = %v: %d bytes, want %d", want, hint, got, total, rounded)
	}
	// Policy: room at the hint is used; a split only happens when no free
	// extent of a bin above want's exists (those always fit).
	if hint > 0 && hint < h.a.Size() {
		at := Extent{Offset: (hint + h.unit - 1) / h.unit * h.unit, Length: rounded}
		if h.modelValid(at) && h.modelAll(at, true) && !slices.Equal(got, []Extent{at}) {
			h.fatalf("Allocate(%d, %d) = %v: want %v, free at the hint", want, hint, got, at)
		}
	}
	if len(got) > 1 {
		for _, r := range h.modelRuns() {
			if bits.Len64(r.Length) > bits.Len64(rounded) {
				h.fatalf("Allocate(%d, %d) = %v: split although %v is free", want, hint, got, r)
			}
		}
	}
	for _, e := range got {
		h.modelSet(e, false)
		h.live = append(h.live, e)
	}
	h.check()
	return got
}

// expected returns the error class that Release (free false) or MarkUsed
// (free true) of exts must return according to the model.
func (h *harness) expected(exts []Extent, free bool) error {
	for _, e := range exts {
		if !h.modelValid(e) {
			return ErrInvalid
		}
	}
	if overlapping(exts) {
		return ErrOverlap
	}
	for _, e := range exts {
		if !h.modelAll(e, free) {
			return ErrOverlap
		}
	}
	return nil
}

func (h *harness) release(exts ...Extent) {
	h.logf("Release(%v)", slices.Clone(exts))
	h.apply("Release", exts, false, h.a.Release)
}

func (h *harness) markUsed(exts ...Extent) {
	h.logf("MarkUsed(%v)", slices.Clone(exts))
	h.apply("MarkUsed", exts, true, h.a.MarkUsed)
}

func (h *harness) apply(name string, exts []Extent, free bool, op func(...Extent) error) {
	before := h.snapshot()
	want := h.expected(exts, free)
	err := op(exts...)
	if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
		h.fatalf("%s(%v): err %v, want %v", name, exts, err, want)
	}
	if err != nil {
		h.sameAs(before)
		return
	}
	for _, e := range exts {
		h.modelSet(e, !free)
		if free {
			h.live = append(h.live, e)
		} else {
			h.cutLive(e)
		}
	}
	h.check()
}

// snapshot returns the free extents, to check that a failed call changed
// nothing.
func (h *harness) snapshot() []Extent { return slices.Collect(h.a.FreeExtents) }

func (h *harness) sameAs(before []Extent) {
	if after := h.snapshot(); !slices.Equal(before, after) {
		h.fatalf("a failed call changed the free extents from %v to %v", before, after)
	}
	h.check()
}

// check compares the allocator with the model and checks its invariants.
func (h *harness) check() {
	a := h.a
	if err := a.verify(); err != nil { // the structure, as -tags invariants checks after each call
		h.fatalf("%v", err)
	}
	got := slices.Collect(a.FreeExtents)
	sum := uint64(0)
	for _, e := range got {
		sum += e.Length
	}
	if a.Fragments() != len(got) {
		h.fatalf("Fragments() = %d; there are %d free extents", a.Fragments(), len(got))
	}
	if runs := h.modelRuns(); !slices.Equal(got, runs) {
		h.fatalf("free extents %v, model %v", got, runs)
	}
	used := uint64(0)
	for _, l := range h.live {
		if !h.modelAll(l, false) {
			h.fatalf("used extent %v is free in the model", l)
		}
		used += l.Length
	}
	if overlapping(h.live) {
		h.fatalf("used extents overlap: %v", h.live)
	}
	if used+sum != a.Size() {
		h.fatalf("used %d + free %d != size %d", used, sum, a.Size())
	}
}

// randomOp performs one operation chosen with next, which returns a number
// in [0, n) for n > 0.
func (h *harness) randomOp(next func(n uint64) uint64) {
	size, unit := h.a.Size(), h.unit
	units := size / unit
	// randExtent returns an aligned extent inside the device.
	randExtent := func() Extent {
		u := next(units)
		return Extent{Offset: u * unit, Length: (1 + next(min(units-u, 16))) * unit}
	}
	randLive := func() Extent { return h.live[next(uint64(len(h.live)))] }
	switch op := next(100); {
	case op < 40:
		want := 1 + next(max(size/4, 1))
		if next(4) == 0 {
			want = 1 + next(size+unit) // sometimes too much
		}
		var hint uint64
		switch next(3) {
		case 1:
			if len(h.live) > 0 {
				hint = randLive().End()
			}
		case 2:
			hint = next(size + 2*unit)
		}
		h.allocate(want, hint)
	case op < 70 && len(h.live) > 0:
		n := 1 + next(3)
		var exts []Extent
		for range n {
			e := randLive()
			if next(4) == 0 { // a part of it
				u := next(e.Length / unit)
				e = Extent{Offset: e.Offset + u*unit, Length: (1 + next(e.Length/unit-u)) * unit}
			}
			if !slices.Contains(exts, e) {
				exts = append(exts, e)
			}
		}
		h.release(exts...)
	case op < 80:
		h.release(randExtent()) // usually a double free
	case op < 90:
		if next(2) == 0 {
			h.markUsed(randExtent())
		} else {
			h.markUsed(randExtent(), randExtent())
		}
	case op < 95:
		bad := []Extent{
			{Offset: 0, Length: 0},
			{Offset: unit / 2, Length: unit},
			{Offset: 0, Length: unit + unit/2},
			{Offset: size, Length: unit},
			{Offset: size - unit, Length: 2 * unit},
			{Offset: ^uint64(0) &^ (unit - 1), Length: 2 * unit},
		}[next(6)]
		if next(2) == 0 {
			h.release(bad)
		} else {
			h.markUsed(bad)
		}
	default:
		if len(h.live) > 0 {
			h.release(slices.Clone(h.live)...)
		}
	}
}

package alloc

import (
	"strings"
	"testing"
)

// TestVerifyFindsCorruption damages the state the way a bug in take,
// replace or release would, and checks that verify (which the invariants
// build runs after every call) names each damage.
func TestVerifyFindsCorruption(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(a *Allocator)
		want    string
	}{
		{"overlap", func(a *Allocator) {
			e := x(14, 4) // overlaps x(10, 5)
			a.byOff.ReplaceOrInsert(e)
			a.byBin.ReplaceOrInsert(e)
			a.free += e.Length
		}, "overlap"},
		{"adjacent", func(a *Allocator) {
			e := x(15, 1) // touches x(10, 5): not merged
			a.byOff.ReplaceOrInsert(e)
			a.byBin.ReplaceOrInsert(e)
			a.free += e.Length
		}, "touch"},
		{"unaligned", func(a *Allocator) {
			a.byOff.Delete(x(30, 2))
			a.byBin.Delete(x(30, 2))
			e := Extent{Offset: 30*unit + 1, Length: 2 * unit}
			a.byOff.ReplaceOrInsert(e)
			a.byBin.ReplaceOrInsert(e)
		}, "not aligned"},
		{"beyond the device", func(a *Allocator) {
			e := x(98, 4)
			a.byOff.ReplaceOrInsert(e)
			a.byBin.ReplaceOrInsert(e)
			a.free += e.Length
		}, "beyond"},
		{"missing from the size index", func(a *Allocator) { a.byBin.Delete(x(30, 2)) }, "size index"},
		{"stale length in the size index", func(a *Allocator) {
			a.byBin.ReplaceOrInsert(x(30, 3)) // same bin and offset as x(30, 2)
		}, "size index"},
		{"extra in the size index", func(a *Allocator) { a.byBin.ReplaceOrInsert(x(50, 1)) }, "size index"},
		{"free count", func(a *Allocator) { a.free -= unit }, "Free()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := withFree(t, 100, x(10, 5), x(30, 2), x(60, 20))
			if err := a.verify(); err != nil {
				t.Fatalf("before the damage: %v", err)
			}
			tt.corrupt(a)
			err := a.verify()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("verify() = %v; want an error mentioning %q", err, tt.want)
			}
		})
	}
}

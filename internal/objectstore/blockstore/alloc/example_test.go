package alloc_test

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
)

// An engine rebuilds the allocator at mount from the extents its metadata
// lists, then allocates each write next to the object's previous extent.
func Example() {
	a, err := alloc.New(1<<20, 4096) // 1 MiB in 4 KiB units
	if err != nil {
		panic(err)
	}
	// At mount: an object holds [0, 64 KiB).
	if err := a.MarkUsed(alloc.Extent{Offset: 0, Length: 64 << 10}); err != nil {
		panic(err)
	}
	// Appending to it: hint at the end of its last extent.
	more, _ := a.Allocate(8192, 64<<10)
	fmt.Println("append:", more)
	// A new object, no hint: best fit.
	other, _ := a.Allocate(10000, 0)
	fmt.Println("other:", other)

	if err := a.Release(other...); err != nil {
		panic(err)
	}
	fmt.Println("double free:", a.Release(other...))
	for e := range a.FreeExtents {
		fmt.Println("free:", e)
	}
	fmt.Println("free bytes:", a.Free(), "fragments:", a.Fragments())
	// Output:
	// append: [[65536,+8192)]
	// other: [[73728,+12288)]
	// double free: release [73728,+12288): overlaps free [73728,+974848): alloc: extent not free / not allocated
	// free: [73728,+974848)
	// free bytes: 974848 fragments: 1
}

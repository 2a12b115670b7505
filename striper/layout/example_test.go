package layout_test

import (
	"fmt"

	"github.com/cuttlestore/cuttle/striper/layout"
)

// Ceph's example layout: 1 MiB stripe units over 3 objects of 4 MiB. A
// 5 MiB write from offset 2 MiB (units 2 to 6) touches objects 2, 0 and
// 1, in that order; objects 2 and 0 each get two units, adjacent in the
// object but 3 MiB apart in the file.
func ExampleLayout_FileToExtents() {
	const mib = 1 << 20
	l := layout.Layout{ObjectSize: 4 * mib, StripeUnit: mib, StripeCount: 3, Pool: 1}
	if err := l.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	for _, x := range l.FileToExtents(2*mib, 5*mib) {
		fmt.Printf("%s [%d MiB, +%d MiB) from the buffer's", layout.ObjectName(0x10000000000, x.ObjectNo), x.Offset/mib, x.Length/mib)
		for _, b := range x.Buffer {
			fmt.Printf(" [%d MiB, +%d MiB)", b.Offset/mib, b.Length/mib)
		}
		fmt.Println()
	}
	// Output:
	// 10000000000.00000002 [0 MiB, +2 MiB) from the buffer's [0 MiB, +1 MiB) [3 MiB, +1 MiB)
	// 10000000000.00000000 [1 MiB, +2 MiB) from the buffer's [1 MiB, +1 MiB) [4 MiB, +1 MiB)
	// 10000000000.00000001 [1 MiB, +1 MiB) from the buffer's [2 MiB, +1 MiB)
}

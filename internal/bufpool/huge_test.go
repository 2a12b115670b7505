package bufpool

import (
	"testing"
	"unsafe"
)

func TestHugeIsAlignedAndZeroed(t *testing.T) {
	for _, n := range []int{0, 4096, HugePage - 1, HugePage, 4<<20 + 4096, 17 << 20} {
		b := Huge(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Huge(%d): len %d cap %d", n, len(b), cap(b))
		}
		if n >= HugePage && uintptr(unsafe.Pointer(&b[0]))%HugePage != 0 {
			t.Fatalf("Huge(%d) starts off a huge-page boundary", n)
		}
		for i, c := range b {
			if c != 0 {
				t.Fatalf("Huge(%d)[%d] = %d, not zero", n, i, c)
			}
		}
		if n > 0 {
			b[0], b[n-1] = 1, 1 // writable to both ends
		}
	}
}

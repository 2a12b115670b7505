package msgr

import (
	"testing"
	"unsafe"

	"github.com/cuttlestore/cuttle/internal/bufpool"
)

// With HugePayloads a large payload's buffer starts on a huge page and
// goes back to the pool at its class's capacity; small payloads are
// plain allocations either way.
func TestHugePayloadBuffers(t *testing.T) {
	p := bufPool{huge: true}
	b := p.get(4<<20 + 100)
	if uintptr(unsafe.Pointer(&b[0]))%bufpool.HugePage != 0 {
		t.Fatal("a 4 MiB payload's buffer is off a huge-page boundary")
	}
	if cap(b) != classSize(len(b)) {
		t.Fatalf("cap %d, want the class's %d", cap(b), classSize(len(b)))
	}
	p.put(b)
	if again := p.get(4<<20 + 100); &again[0] != &b[0] {
		t.Fatal("the pool did not hand the huge buffer out again")
	}
	if small := p.get(128 << 10); cap(small) != classSize(128<<10) {
		t.Fatalf("a 128 KiB payload's cap is %d", cap(small))
	}
}

package msgr

import (
	"bytes"
	"hash/crc32"
	"testing"
)

// A Tail slice whose crc32c the sender knows is combined, not hashed, and
// the frame's checksum is the same as hashing everything; slices it does
// not know are hashed.
func TestChecksumWithKnownTailCRCs(t *testing.T) {
	big := bytes.Repeat([]byte("cuttle"), 700_000)
	small := []byte("tail")
	m := Message{Payload: []byte("header"), Tail: [][]byte{big, small, {}}}
	whole := crc32.Checksum(append(append([]byte("header"), big...), small...), crcTable)
	if got := m.checksum(); got != whole {
		t.Fatalf("plain checksum %#08x, want %#08x", got, whole)
	}
	asked := 0
	m.TailCRC = func(b []byte) (uint32, bool) {
		asked++
		if len(b) == len(big) && &b[0] == &big[0] {
			return crc32.Checksum(big, crcTable), true
		}
		return 0, false
	}
	if got := m.checksum(); got != whole {
		t.Fatalf("checksum with a known tail crc %#08x, want %#08x", got, whole)
	}
	if asked != 3 {
		t.Fatalf("TailCRC asked %d times, want 3", asked)
	}
	// A wrong known crc gives a wrong frame checksum: the peer drops it.
	m.TailCRC = func([]byte) (uint32, bool) { return 0, true }
	if got := m.checksum(); got == whole {
		t.Fatal("a wrong known crc went unnoticed")
	}
}

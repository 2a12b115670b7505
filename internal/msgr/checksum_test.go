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

// PieceCRCsOf finds the piece checksums of a slice of the payload that
// starts at a piece boundary, and nothing for any other slice.
func TestPieceCRCsOf(t *testing.T) {
	payload := make([]byte, 10*4096+100)
	crcs := make([]uint32, 10)
	for i := range crcs {
		crcs[i] = uint32(i + 1)
	}
	m := Message{Payload: payload, PieceCRCs: crcs}
	if got := m.PieceCRCsOf(payload[4096 : 4096+3*4096+5]); len(got) != 3 || got[0] != 2 || got[2] != 4 {
		t.Errorf("aligned slice: %v", got)
	}
	if got := m.PieceCRCsOf(payload[9*4096:]); len(got) != 1 || got[0] != 10 {
		t.Errorf("last piece: %v", got)
	}
	for _, b := range [][]byte{payload[100 : 100+4096], payload[:4000], make([]byte, 8192), nil} {
		if got := m.PieceCRCsOf(b); got != nil {
			t.Errorf("%d-byte slice: %v, want none", len(b), got)
		}
	}
	if got := (&Message{Payload: payload}).PieceCRCsOf(payload[:4096]); got != nil {
		t.Errorf("message without piece checksums: %v", got)
	}
}

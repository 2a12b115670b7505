package objid

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

func sampleIDs() []ID {
	return []ID{
		{},
		Max(),
		Object(1, "", "foo"),
		New(3, "ns", "key", "name", 7),
		New(-1, "", "", "temp", SnapDir),
		{Pool: 2, Hash: 0xdeadbeef}, // a range bound: pool and hash only
		Object(1, "", strings.Repeat("x", MaxNameLen)),
	}
}

func TestCodecRoundTrip(t *testing.T) {
	for _, id := range sampleIDs() {
		data, err := id.MarshalBinary()
		if err != nil {
			t.Fatalf("%v: %v", id, err)
		}
		var got ID
		if err := got.UnmarshalBinary(data); err != nil {
			t.Fatalf("%v: %v", id, err)
		}
		if got != id {
			t.Fatalf("round trip: got %v, want %v", got, id)
		}
	}
}

func TestCodecRejectsBadInput(t *testing.T) {
	good, _ := New(3, "ns", "key", "name", 7).MarshalBinary()
	for n := range len(good) {
		var id ID
		if err := id.UnmarshalBinary(good[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	var id ID
	if err := id.UnmarshalBinary(append(bytes.Clone(good), 0)); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	// A max id with a name is not canonical.
	var e encoding.Encoder
	ID{max: true, Name: "x"}.Encode(&e)
	if err := id.UnmarshalBinary(e.Data()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("max with a name: %v", err)
	}
	long := Object(1, "", strings.Repeat("x", MaxNameLen+1))
	if _, err := long.MarshalBinary(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("overlong name: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, id := range sampleIDs() {
		data, _ := id.MarshalBinary()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var id ID
		if err := id.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := id.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded id does not encode: %v", err)
		}
		var id2 ID
		if err := id2.UnmarshalBinary(again); err != nil || id2 != id {
			t.Fatalf("re-decode: %v, %v != %v", err, id2, id)
		}
	})
}

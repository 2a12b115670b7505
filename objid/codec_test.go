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

func marshal(id ID) []byte {
	var e encoding.Encoder
	id.Encode(&e)
	return e.Data()
}

func unmarshal(data []byte) (ID, error) {
	d := encoding.NewDecoder(data)
	id := Decode(d)
	return id, d.Finish()
}

func TestCodecRoundTrip(t *testing.T) {
	for _, id := range sampleIDs() {
		got, err := unmarshal(marshal(id))
		if err != nil {
			t.Fatalf("%v: %v", id, err)
		}
		if got != id {
			t.Fatalf("round trip: got %v, want %v", got, id)
		}
	}
}

func TestCodecRejectsBadInput(t *testing.T) {
	good := marshal(New(3, "ns", "key", "name", 7))
	for n := range len(good) {
		if _, err := unmarshal(good[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := unmarshal(append(bytes.Clone(good), 0)); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	long := Object(1, "", strings.Repeat("x", MaxNameLen+1))
	if err := long.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("overlong name: Validate = %v", err)
	}
	if _, err := unmarshal(marshal(long)); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("overlong name: decode = %v", err)
	}
}

func TestZeroAllocHash(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { HashLocator("namespace", "rbd_data.5f2a6b8b4567.0000000000000000") }); n != 0 {
		t.Fatalf("HashLocator allocates %v times", n)
	}
}

func FuzzDecode(f *testing.F) {
	for _, id := range sampleIDs() {
		f.Add(marshal(id))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := unmarshal(data)
		if err != nil {
			return
		}
		if err := id.Validate(); err != nil {
			t.Fatalf("decoded id is invalid: %v", err)
		}
		if id2, err := unmarshal(marshal(id)); err != nil || id2 != id {
			t.Fatalf("re-decode: %v, %v != %v", err, id2, id)
		}
	})
}

package wire

import "testing"

func TestOSDPingRoundTrip(t *testing.T) {
	for _, m := range []OSDPing{{}, {Reply: true, Epoch: 42, Stamp: -7}, {Epoch: 1 << 40, Stamp: 1 << 62}} {
		got, err := DecodeOSDPing(m.Encode())
		if err != nil || got != m {
			t.Fatalf("round trip of %+v: %+v, %v", m, got, err)
		}
	}
	if _, err := DecodeOSDPing([]byte{1}); err == nil {
		t.Fatal("a truncated ping decoded")
	}
}

func FuzzOSDPing(f *testing.F) {
	f.Add(OSDPing{Reply: true, Epoch: 3, Stamp: 99}.Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeOSDPing(b)
		if err != nil {
			return
		}
		if again, err := DecodeOSDPing(m.Encode()); err != nil || again != m {
			t.Fatalf("re-encoding %+v: %+v, %v", m, again, err)
		}
	})
}

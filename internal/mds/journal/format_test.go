package journal

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/striper/layout"
)

func testHeader() Header {
	l := layout.Layout{ObjectSize: 4 << 20, StripeUnit: 4 << 20, StripeCount: 1, Pool: 2}
	return Header{Format: StreamFormat, Generation: 3, TrimmedPos: 4 << 20, ExpirePos: 5 << 20, WritePos: 9 << 20, Layout: l}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := testHeader()
	got, err := DecodeHeader(h.Encode())
	if err != nil || got != h {
		t.Fatalf("got %+v %v, want %+v", got, err, h)
	}
	for _, tc := range []struct {
		name string
		mut  func(*Header)
		want string
	}{
		{"format", func(h *Header) { h.Format = 2 }, "stream format 2"},
		{"expire above write", func(h *Header) { h.ExpirePos = h.WritePos + 1 }, "out of order"},
		{"trimmed in the header's object set", func(h *Header) { h.TrimmedPos = 5 }, "out of order"},
		{"layout", func(h *Header) { h.Layout.StripeCount = 0 }, "stripe_count"},
	} {
		bad := testHeader()
		tc.mut(&bad)
		if _, err := DecodeHeader(bad.Encode()); !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := DecodeHeader([]byte("CJNX")); !errors.Is(err, ErrBadHeader) {
		t.Errorf("bad magic: %v", err)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	payload := []byte("mkdir /a")
	b := AppendFrame(nil, 4096, 7, payload)
	if uint64(len(b)) != FrameLen(len(payload)) {
		t.Fatalf("frame of %d bytes, FrameLen %d", len(b), FrameLen(len(payload)))
	}
	gen, got, n, err := DecodeFrame(append(b, 0xff), 4096)
	if err != nil || gen != 7 || !bytes.Equal(got, payload) || n != len(b) {
		t.Fatalf("decode: gen %d %q %d %v", gen, got, n, err)
	}
	// A frame is valid only at the position it was written at.
	if _, _, _, err := DecodeFrame(b, 4097); err == nil || !strings.Contains(err.Error(), "crc32c") {
		t.Errorf("frame at another position: %v", err)
	}
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x10
		if _, _, _, err := DecodeFrame(c, 4096); err == nil {
			t.Errorf("byte %d flipped: decoded", i)
		}
	}
	if _, _, _, err := DecodeFrame(b[:len(b)-1], 4096); err == nil {
		t.Errorf("short frame decoded")
	}
	if _, _, _, err := DecodeFrame(make([]byte, 40), 4096); err == nil || !strings.Contains(err.Error(), "zeros") {
		t.Errorf("zeros: %v", err)
	}
}

func FuzzDecodeHeader(f *testing.F) {
	f.Add(testHeader().Encode())
	f.Add([]byte("CJNL"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHeader(b)
		if err != nil {
			return
		}
		if err := h.check(); err != nil {
			t.Fatalf("decoded a header that fails its checks: %v", err)
		}
		again, err := DecodeHeader(h.Encode())
		if err != nil || again != h {
			t.Fatalf("round trip: %+v %v", again, err)
		}
	})
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(AppendFrame(nil, 100, 1, []byte("entry")), uint64(100))
	f.Add(make([]byte, 30), uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, pos uint64) {
		gen, payload, n, err := DecodeFrame(b, pos)
		if err != nil {
			return
		}
		if n > len(b) || len(payload) > MaxEntry {
			t.Fatalf("frame of %d bytes in %d", n, len(b))
		}
		if again := AppendFrame(nil, pos, gen, payload); !bytes.Equal(again, b[:n]) {
			t.Fatalf("re-encoded frame differs")
		}
	})
}

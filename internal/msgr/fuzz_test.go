package msgr

import (
	"bytes"
	"testing"
)

// FuzzReadFrame feeds arbitrary streams to the frame decoder, with and
// without a session key: it must return frames or errors, never panic,
// and every frame it returns must re-encode to the bytes it came from.
func FuzzReadFrame(f *testing.F) {
	f.Add(encodeOne(header{kind: kindMsg, seq: 1, ack: 2}, []byte("x"), nil), false)
	f.Add(encodeOne(header{kind: kindAuth, flags: flagAuthDone}, []byte("ok"), []byte("key")), true)
	f.Add(append(encodeOne(header{kind: kindAck, ack: 3}, nil, nil), encodeOne(header{kind: kindMsg}, nil, nil)...), false)
	f.Fuzz(func(t *testing.T, in []byte, signed bool) {
		var key []byte
		if signed {
			key = []byte("key")
		}
		r := bytes.NewReader(in)
		fr := frameReader{r: newBufReader(r), max: 1 << 16, sig: newSigner(key, dirFromDialer)}
		consumed := 0
		for {
			fm, err := fr.read()
			if err != nil {
				return
			}
			h := fm.header
			h.flags &^= flagSigned
			again := encodeOne(h, fm.payload, key)
			if !bytes.Equal(again, in[consumed:consumed+len(again)]) {
				t.Fatalf("frame %+v does not re-encode to its input", fm.header)
			}
			consumed += len(again)
		}
	})
}

func FuzzDecodeHello(f *testing.F) {
	f.Add((&hello{}).encode())
	f.Add((&hello{Nonce: 1}).encode())
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := decodeHello(in)
		if err != nil {
			return
		}
		if got, err := decodeHello(h.encode()); err != nil || got != h {
			t.Fatalf("hello %+v does not round-trip: %+v, %v", h, got, err)
		}
	})
}

func FuzzDecodeSessionReq(f *testing.F) {
	f.Add((&sessionReq{ID: 1, InSeq: 2, Lossless: true}).encode())
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := decodeSessionReq(in)
		if err != nil {
			return
		}
		if got, err := decodeSessionReq(s.encode()); err != nil || got != s {
			t.Fatalf("session request %+v does not round-trip", s)
		}
	})
}

func FuzzDecodeSessionOK(f *testing.F) {
	f.Add((&sessionOK{InSeq: 1, Reset: true}).encode())
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := decodeSessionOK(in)
		if err != nil {
			return
		}
		if got, err := decodeSessionOK(s.encode()); err != nil || got != s {
			t.Fatalf("session reply %+v does not round-trip", s)
		}
	})
}

func FuzzPreamble(f *testing.F) {
	f.Add(preamble())
	f.Fuzz(func(t *testing.T, in []byte) {
		err := readPreamble(bytes.NewReader(in))
		if err == nil && !bytes.Equal(in[:preambleLen], preamble()) {
			t.Fatalf("accepted preamble %q", in[:preambleLen])
		}
	})
}

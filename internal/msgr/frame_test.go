package msgr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"github.com/cuttlestore/cuttle/internal/auth"
)

func encodeOne(h header, payload []byte, key []byte) []byte {
	return appendFrame(nil, &h, payload, newSigner(key, dirFromDialer))
}

func readOne(b []byte, max uint32, key []byte) (frame, error) {
	fr := frameReader{r: bufio.NewReader(bytes.NewReader(b)), max: max, sig: newSigner(key, dirFromDialer)}
	return fr.read()
}

func TestFrameRoundTrip(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("k")} {
		h := header{kind: kindMsg, typ: 42, version: 3, seq: 7, ack: 5}
		b := encodeOne(h, []byte("hello"), key)
		f, err := readOne(b, 1<<20, key)
		if err != nil {
			t.Fatal(err)
		}
		if f.typ != 42 || f.version != 3 || f.seq != 7 || f.ack != 5 || string(f.payload) != "hello" {
			t.Fatalf("decoded %+v", f)
		}
	}
}

func TestFrameErrors(t *testing.T) {
	good := encodeOne(header{kind: kindMsg, seq: 1}, []byte("payload"), nil)
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	// reCRC mutates the header and fixes its crc, to reach the checks
	// behind it.
	reCRC := func(f func(b []byte)) []byte {
		return mutate(func(b []byte) []byte {
			f(b)
			binary.LittleEndian.PutUint32(b[32:], crc32.Checksum(b[:32], crcTable))
			return b
		})
	}
	cases := []struct {
		name string
		in   []byte
		max  uint32
		key  []byte
		want error
	}{
		{"bad payload crc", mutate(func(b []byte) []byte { b[headerLen] ^= 1; return b }), 100, nil, ErrCorrupt},
		{"bad header crc", mutate(func(b []byte) []byte { b[9] ^= 1; return b }), 100, nil, ErrCorrupt},
		{"unknown kind", reCRC(func(b []byte) { b[0] = 99 }), 100, nil, ErrProtocol},
		{"unknown flag", reCRC(func(b []byte) { b[1] = 0x80 }), 100, nil, ErrProtocol},
		{"reserved set", reCRC(func(b []byte) { b[6] = 1 }), 100, nil, ErrProtocol},
		{"too large", good, 3, nil, ErrFrameTooLarge},
		{"truncated header", good[:10], 100, nil, ErrTruncated},
		{"truncated payload", good[:headerLen+2], 100, nil, ErrTruncated},
		{"unsigned on signed session", good, 100, []byte("k"), ErrBadSignature},
		{"signed on unsigned session", encodeOne(header{kind: kindMsg}, nil, []byte("k")), 100, nil, ErrBadSignature},
		{"wrong key", encodeOne(header{kind: kindMsg}, []byte("x"), []byte("k1")), 100, []byte("k2"), ErrBadSignature},
		{"missing signature", encodeOne(header{kind: kindMsg}, []byte("x"), []byte("k"))[:headerLen+1+3], 100, []byte("k"), ErrTruncated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readOne(c.in, c.max, c.key)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	if _, err := readOne(nil, 100, nil); err != io.EOF {
		t.Fatalf("empty stream: %v, want io.EOF", err)
	}
}

func TestPreamble(t *testing.T) {
	if err := checkPreamble(preamble()); err != nil {
		t.Fatal(err)
	}
	bad := preamble()
	bad[0] = 'X'
	if err := checkPreamble(bad); !errors.Is(err, ErrProtocol) {
		t.Fatalf("bad magic: %v", err)
	}
	bad = preamble()
	bad[len(preambleMagic)] = 9
	if err := checkPreamble(bad); !errors.Is(err, ErrProtocol) {
		t.Fatalf("bad version: %v", err)
	}
	if err := readPreamble(bytes.NewReader(preamble()[:3])); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short preamble: %v", err)
	}
}

func TestPayloadsRoundTrip(t *testing.T) {
	h := hello{Name: auth.EntityName{Type: "osd", ID: "1"}, Nonce: 9, Target: auth.EntityName{Type: "mon", ID: "a"}}
	if got, err := decodeHello(h.encode()); err != nil || got != h {
		t.Fatalf("hello: %+v, %v", got, err)
	}
	r := sessionReq{ID: 1, ConnectSeq: 2, InSeq: 3, Lossless: true}
	if got, err := decodeSessionReq(r.encode()); err != nil || got != r {
		t.Fatalf("session: %+v, %v", got, err)
	}
	o := sessionOK{InSeq: 4, Reset: true}
	if got, err := decodeSessionOK(o.encode()); err != nil || got != o {
		t.Fatalf("session_ok: %+v, %v", got, err)
	}
	if _, err := decodeHello((&hello{}).encode()); !errors.Is(err, ErrProtocol) {
		t.Fatalf("nameless hello: %v", err)
	}
	if _, err := decodeSessionOK(r.encode()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("session request read as a reply: %v", err)
	}
}

// A large payload goes out by reference, not copied into the batch, and
// the batch decodes to the same frames.
func TestEncodeBatchLargeByReference(t *testing.T) {
	large := bytes.Repeat([]byte{7}, smallPayload+1)
	for _, key := range [][]byte{nil, []byte("k")} {
		c := &conn{wsig: newSigner(key, dirFromDialer)}
		batch := []outMsg{
			{1, crc32.Checksum([]byte("a"), crcTable), Message{Type: 1, Payload: []byte("a")}},
			{2, crc32.Checksum(large, crcTable), Message{Type: 2, Payload: large}},
			{3, crc32.Checksum([]byte("c"), crcTable), Message{Type: 3, Payload: []byte("c")}},
		}
		out, pieces := c.encodeBatch(nil, nil, batch, 9)
		var stream []byte
		byRef := false
		for _, p := range pieces {
			if p.ext != nil {
				byRef = byRef || &p.ext[0] == &large[0]
				stream = append(stream, p.ext...)
			} else {
				stream = append(stream, out[p.start:p.end]...)
			}
		}
		if !byRef {
			t.Fatal("large payload was copied")
		}
		fr := frameReader{r: bufio.NewReader(bytes.NewReader(stream)), max: 1 << 20, sig: newSigner(key, dirFromDialer)}
		for i := range batch {
			f, err := fr.read()
			if err != nil {
				t.Fatal(err)
			}
			if f.seq != batch[i].seq || f.ack != 9 || !bytes.Equal(f.payload, batch[i].msg.Payload) {
				t.Fatalf("frame %d decoded as %+v", i, f.header)
			}
		}
	}
}

func TestBackoff(t *testing.T) {
	m, err := New(Config{Name: auth.EntityName{Type: "osd", ID: "1"}, Network: &TCP{}, Dispatcher: nopDispatcher{},
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return nil }, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for n := range 40 {
		d := m.backoff(n)
		full := min(m.cfg.BackoffMax, m.cfg.BackoffMin<<min(n, 30))
		if d < full/2 || d > full {
			t.Fatalf("attempt %d: %v outside [%v, %v]", n, d, full/2, full)
		}
	}
}

type nopDispatcher struct{}

func (nopDispatcher) Dispatch(Peer, Message) {}
func (nopDispatcher) HandleEvent(Event)      {}

func TestThrottle(t *testing.T) {
	th := newThrottle(10, 2)
	if !th.tryAcquire(6) || th.tryAcquire(6) || !th.tryAcquire(4) || th.tryAcquire(0) {
		t.Fatal("budget not enforced")
	}
	th.release(10, 2)
	if !th.tryAcquire(100) {
		t.Fatal("an oversized item alone must pass")
	}
	if b, c := th.held(); b != 100 || c != 1 {
		t.Fatalf("held %d bytes %d items", b, c)
	}
}

func newBufReader(r *bytes.Reader) *bufio.Reader { return bufio.NewReader(r) }

func TestPool(t *testing.T) {
	var p bufPool
	for _, n := range []int{1, minPooled - 1, minPooled, minPooled + 1, 3 << 20, 4 << 20, 200 << 20} {
		b := p.get(n)
		if len(b) != n {
			t.Fatalf("get(%d) has length %d", n, len(b))
		}
		if size := classSize(n); size > 0 && (cap(b) != size || size-n > n/subClasses+minPooled/subClasses) {
			t.Fatalf("get(%d) has cap %d (class %d)", n, cap(b), size)
		}
		p.put(b)
	}
	// A 4 MiB object's message takes a 4.25 MiB buffer, not 8.
	if size := classSize(4<<20 + 300); size != 4<<20+256<<10 {
		t.Fatalf("class of 4 MiB + 300: %d", size)
	}
	const odd = 100<<10 + 1  // not a class size
	p.put(make([]byte, odd)) // ignored
	if b := p.get(odd); cap(b) != classSize(odd) || cap(b) == odd {
		t.Fatalf("a foreign buffer came back from the pool: cap %d", cap(b))
	}
	if b := p.get(odd); cap(b) != classSize(odd) {
		t.Fatalf("cap %d", cap(b))
	}
}

// A returned buffer is the next one handed out of its class, and the
// pool keeps at most maxIdlePooled bytes waiting.
func TestPoolReusesAndBounds(t *testing.T) {
	var p bufPool
	const n = 4<<20 + 300
	b := p.get(n)
	b[0] = 42
	p.put(b)
	if again := p.get(n); &again[0] != &b[0] {
		t.Fatal("a released buffer was not reused")
	}
	var held [][]byte
	for range maxIdlePooled/classSize(n) + 4 {
		held = append(held, p.get(n))
	}
	for _, b := range held {
		p.put(b)
	}
	if idle, _ := p.list.Idle(); idle > maxIdlePooled || idle < maxIdlePooled-classSize(n) {
		t.Fatalf("%d bytes idle, bound %d", idle, maxIdlePooled)
	}
}

// Signatures bind a frame to its direction and its place in the stream:
// the same frame signed twice gets two tags, a replayed or reordered frame
// fails, and the acceptor's key does not verify the dialer's frames.
func TestSignerNoncesAndDirections(t *testing.T) {
	key := []byte("session-key")
	hdr, payload := make([]byte, headerLen), []byte("payload")
	w := newSigner(key, dirFromDialer)
	first := w.sign(nil, hdr, payload)
	second := w.sign(nil, hdr, payload)
	if bytes.Equal(first, second) {
		t.Fatal("two frames signed with the same nonce")
	}
	r := newSigner(key, dirFromDialer)
	if got := r.sign(nil, hdr, payload); !bytes.Equal(got, first) {
		t.Fatal("the reader's first tag differs from the writer's")
	}
	if got := r.sign(nil, hdr, payload); !bytes.Equal(got, second) {
		t.Fatal("the reader's second tag differs from the writer's")
	}
	if got := newSigner(key, dirFromAcceptor).sign(nil, hdr, payload); bytes.Equal(got, first) {
		t.Fatal("the other direction's key verifies this direction's frame")
	}
	if got := newSigner([]byte("other"), dirFromDialer).sign(nil, hdr, payload); bytes.Equal(got, first) {
		t.Fatal("another session key verifies the frame")
	}
	hdr[0] ^= 1
	if got := newSigner(key, dirFromDialer).sign(nil, hdr, payload); bytes.Equal(got, first) {
		t.Fatal("a changed header verifies")
	}
	if got := newSigner(key, dirFromDialer).sign(nil, make([]byte, headerLen), []byte("paylaod")); bytes.Equal(got, first) {
		t.Fatal("a changed payload verifies")
	}
}

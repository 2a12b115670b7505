package msgr_test

import (
	"bytes"
	"hash/crc32"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
)

// tcpModes are the two ways the TCP tests run a session: frames
// unsigned, and signed with a shared key.
var tcpModes = []struct {
	name  string
	tweak func(self string) func(*msgr.Config)
}{
	{"none", func(string) func(*msgr.Config) { return nil }},
	{"signed", func(self string) func(*msgr.Config) { return keyed(self, []byte("tcp-key")) }},
}

// tcpNode starts a messenger listening on loopback TCP.
func tcpNode(t testing.TB, n string, d msgr.Dispatcher, logs io.Writer, tweak func(*msgr.Config)) (*msgr.Messenger, string) {
	t.Helper()
	if logs == nil {
		logs = io.Discard
	}
	cfg := msgr.Config{
		Name:       name(n),
		Network:    &msgr.TCP{},
		Dispatcher: d,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name(n)} },
		ServerAuth: func() auth.ServerHandshake { return &auth.NoneServer{} },
	}
	if tweak != nil {
		tweak(&cfg)
	}
	m, err := msgr.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := m.Listen(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, addr.String()
}

// Over real TCP, mixed sizes (small frames batched, large ones written by
// reference) arrive in order, signed or not, both ways.
func TestTCPLoopback(t *testing.T) {
	for _, tc := range tcpModes {
		t.Run(tc.name, func(t *testing.T) {
			const n = 300
			ra, rb := newRecorder(), newRecorder()
			a, _ := tcpNode(t, "osd.1", ra, nil, tc.tweak("osd.1"))
			_, addrB := tcpNode(t, "osd.2", rb, nil, tc.tweak("osd.2"))
			rb.onMsg = func(from msgr.Peer, msg msgr.Message) { from.Session.Send(t.Context(), msg) }
			s, err := a.Connect(name("osd.2"), addrB)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				size := 100 + i*37
				if i%30 == 0 {
					size = 1 << 20
				}
				if err := s.Send(t.Context(), numbered(i, size)); err != nil {
					t.Fatal(err)
				}
			}
			checkInOrder(t, rb.waitMsgs(t, name("osd.1"), n, time.Minute), n)
			checkInOrder(t, ra.waitMsgs(t, name("osd.2"), n, time.Minute), n)
		})
	}
}

// Garbage on a connection closes it with a logged reason, and the
// messenger keeps serving others.
func TestTCPBadPeer(t *testing.T) {
	logs := &logBuffer{}
	rec := newRecorder()
	_, addr := tcpNode(t, "osd.1", rec, logs, nil)
	for _, garbage := range []string{
		"GET / HTTP/1.1\r\n\r\n",
		"CUTLMSGR\x02\x00\x00\x00" + strings.Repeat("\xff", 64), // good preamble, bad frame
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(garbage))
		c.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := io.ReadAll(c); err != nil {
			t.Fatalf("connection not closed cleanly: %v", err)
		}
		c.Close()
	}
	for _, want := range []string{"bad magic", "corrupt frame"} {
		logs.waitFor(t, want, time.Minute)
	}
	// Still serving.
	other, _ := tcpNode(t, "osd.2", newRecorder(), nil, nil)
	other.Send(t.Context(), name("osd.1"), addr, numbered(0, 10))
	rec.waitMsgs(t, name("osd.2"), 1, time.Minute)
}

// A message's Tail goes out after its Payload and arrives as one
// payload, whether the frame is small enough to be copied into the batch
// or large enough for its pieces to be written by reference, signed or
// not.
func TestTailArrivesAsOnePayload(t *testing.T) {
	for _, tc := range tcpModes {
		t.Run(tc.name, func(t *testing.T) {
			rb := newRecorder()
			a, _ := tcpNode(t, "osd.1", newRecorder(), nil, tc.tweak("osd.1"))
			_, addrB := tcpNode(t, "osd.2", rb, nil, tc.tweak("osd.2"))
			s, err := a.Connect(name("osd.2"), addrB)
			if err != nil {
				t.Fatal(err)
			}
			var want [][]byte
			for i, sizes := range [][]int{{8, 100}, {8, 0, 3000, 5}, {8, 4 << 20, 17}, {8, 1 << 20}, {20 << 10, 64 << 10, 1}} {
				msg := numbered(i, sizes[0])
				whole := append([]byte(nil), msg.Payload...)
				for j, n := range sizes[1:] {
					b := bytes.Repeat([]byte{byte(i*16 + j)}, n)
					msg.Tail = append(msg.Tail, b)
					whole = append(whole, b...)
				}
				want = append(want, whole)
				if err := s.Send(t.Context(), msg); err != nil {
					t.Fatal(err)
				}
			}
			got := rb.waitMsgs(t, name("osd.1"), len(want), time.Minute)
			checkInOrder(t, got, len(want))
			for i, m := range got {
				if !bytes.Equal(m.Payload, want[i]) || m.Tail != nil {
					t.Errorf("message %d: %d bytes, want %d (tail %d slices)", i, len(m.Payload), len(want[i]), len(m.Tail))
				}
				checkPieceCRCs(t, m)
			}
		})
	}
}

// checkPieceCRCs checks that a received message of 64 KiB or more
// carries the checksum of each whole 4 KiB piece of its payload.
func checkPieceCRCs(t *testing.T, m msgr.Message) {
	t.Helper()
	if len(m.Payload) < 64<<10 {
		if m.PieceCRCs != nil {
			t.Errorf("%d-byte message with piece checksums", len(m.Payload))
		}
		return
	}
	if len(m.PieceCRCs) != len(m.Payload)/4096 {
		t.Fatalf("%d-byte message: %d piece checksums", len(m.Payload), len(m.PieceCRCs))
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	for i, c := range m.PieceCRCs {
		if want := crc32.Checksum(m.Payload[i*4096:(i+1)*4096], table); c != want {
			t.Fatalf("piece %d: checksum %#08x, want %#08x", i, c, want)
		}
	}
}

package wire

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

// A version-1 command (before commands were numbered) still decodes, as
// an unnumbered command.
func TestMonCommandVersion1(t *testing.T) {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(3)
	e.Bytes(NewCommand("osd set", "key", "noout").Encode())
	e.End(mk)
	got, err := DecodeMonCommand(e.Data())
	if err != nil || got.Tid != 3 || got.Cmd.Prefix != "osd set" || got.Client != 0 || got.Seq != 0 {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestMonCommandOldestAfterSeq(t *testing.T) {
	b := MonCommand{Tid: 1, Cmd: NewCommand("osd set"), Client: 1, Seq: 2, Oldest: 3}.Encode()
	if _, err := DecodeMonCommand(b); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("oldest after seq: %v, want ErrCorrupt", err)
	}
}

func TestMonMessagesRoundTrip(t *testing.T) {
	cmd := MonCommand{Tid: 7, Cmd: NewCommand("osd pool create", "pool", "rbd"), Client: 0xfeedface12345678, Seq: 9, Oldest: 4}
	if got, err := DecodeMonCommand(cmd.Encode()); err != nil || !reflect.DeepEqual(got, cmd) {
		t.Fatalf("command: %+v %v", got, err)
	}
	rep := MonCommandReply{Tid: 7, Reply: Reply{Code: EEXIST, Status: "exists", Data: []byte("{}"), Text: "x"}}
	if got, err := DecodeMonCommandReply(rep.Encode()); err != nil || !reflect.DeepEqual(got, rep) {
		t.Fatalf("reply: %+v %v", got, err)
	}
	sub := MonSubscribe{What: "osdmap", Start: 12, OneShot: true}
	if got, err := DecodeMonSubscribe(sub.Encode()); err != nil || got != sub {
		t.Fatalf("subscribe: %+v %v", got, err)
	}
	up := OSDMapUpdate{FullEpoch: 3, Full: []byte("full"), Incs: [][]byte{[]byte("4"), []byte("5")}, Newest: 5}
	if got, err := DecodeOSDMapUpdate(up.Encode()); err != nil || !reflect.DeepEqual(got, up) {
		t.Fatalf("update: %+v %v", got, err)
	}
	r := MonRaft{Data: []byte{1, 2, 3}}
	if got, err := DecodeMonRaft(r.Encode()); err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("raft: %+v %v", got, err)
	}
	p := MonPing{From: "a", Sent: -5, PeerTime: 99, Reply: true}
	if got, err := DecodeMonPing(p.Encode()); err != nil || got != p {
		t.Fatalf("ping: %+v %v", got, err)
	}
	for _, b := range [][]byte{nil, {1}, cmd.Encode()[:5]} {
		if _, err := DecodeMonCommand(b); err == nil {
			t.Errorf("decoded %x", b)
		}
	}
}

// FuzzMonMessages feeds every monitor-message decoder the same bytes: none
// may panic, and whatever decodes must re-encode to something that
// decodes to the same value.
func FuzzMonMessages(f *testing.F) {
	f.Add(MonCommand{Tid: 1, Cmd: NewCommand("osd set", "key", "noout")}.Encode())
	f.Add(MonCommand{Tid: 2, Cmd: NewCommand("config set", "name", "x"), Client: 77, Seq: 5, Oldest: 5}.Encode())
	f.Add(MonCommandReply{Tid: 1, Reply: Reply{Status: "ok"}}.Encode())
	f.Add(MonSubscribe{What: "osdmap", Start: 1}.Encode())
	f.Add(OSDMapUpdate{FullEpoch: 1, Full: []byte("m"), Incs: [][]byte{{2}}, Newest: 2}.Encode())
	f.Add(MonPing{From: "b", Sent: 1}.Encode())
	classified := func(err error) bool {
		return errors.Is(err, encoding.ErrCorrupt) || errors.Is(err, encoding.ErrTruncated) || errors.Is(err, encoding.ErrUnsupportedVersion)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := DecodeMonCommand(b); err == nil {
			if again, err := DecodeMonCommand(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("command re-decode: %v", err)
			}
		} else if !classified(err) {
			t.Fatalf("unclassified error: %v", err)
		}
		if m, err := DecodeMonCommandReply(b); err == nil {
			if again, err := DecodeMonCommandReply(m.Encode()); err != nil || again.Tid != m.Tid {
				t.Fatalf("reply re-decode: %v", err)
			}
		}
		if m, err := DecodeMonSubscribe(b); err == nil {
			if again, err := DecodeMonSubscribe(m.Encode()); err != nil || again != m {
				t.Fatalf("subscribe re-decode: %v", err)
			}
		}
		if m, err := DecodeOSDMapUpdate(b); err == nil {
			if again, err := DecodeOSDMapUpdate(m.Encode()); err != nil || len(again.Incs) != len(m.Incs) {
				t.Fatalf("update re-decode: %v", err)
			}
		}
		if m, err := DecodeMonRaft(b); err == nil {
			if _, err := DecodeMonRaft(m.Encode()); err != nil {
				t.Fatalf("raft re-decode: %v", err)
			}
		}
		if m, err := DecodeMonPing(b); err == nil {
			if again, err := DecodeMonPing(m.Encode()); err != nil || again != m {
				t.Fatalf("ping re-decode: %v", err)
			}
		}
	})
}

package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

func sampleTxn() *objectstore.Transaction {
	t := &objectstore.Transaction{}
	c := objectstore.PGCollection(2, 9)
	t.Write(c, objid.Object(2, "", "o"), 4096, []byte("data")).OmapSetKeys(c, objid.Object(-3, "", "meta"), map[string][]byte{"k": {}})
	return t
}

func TestPGMessagesRoundTrip(t *testing.T) {
	op := RepOp{PG: osdmap.PG{Pool: 2, Seed: 9}, Epoch: 10, IntervalStart: 8, Tid: 77,
		Version: Version{Epoch: 10, Counter: 5}, WantApplied: true, Entry: []byte("entry"), Info: []byte("info"), Txn: sampleTxn()}
	if got, err := DecodeRepOp(op.Encode()); err != nil || !reflect.DeepEqual(got, op) {
		t.Fatalf("rep op: %+v %v", got, err)
	}
	r := RepOpReply{PG: osdmap.PG{Pool: 2, Seed: 9}, Tid: 77, Epoch: 11, Flags: ReplyCommitted, Result: -EIO}
	if got, err := DecodeRepOpReply(r.Encode()); err != nil || got != r {
		t.Fatalf("rep op reply: %+v %v", got, err)
	}
	idle := RepIdle{PG: osdmap.PG{Pool: 2, Seed: 9}, Epoch: 12, IntervalStart: 8, CommittedBelow: Version{Epoch: 10, Counter: 6}}
	if got, err := DecodeRepIdle(idle.Encode()); err != nil || got != idle {
		t.Fatalf("rep idle: %+v %v", got, err)
	}
	if _, err := DecodeRepIdle(idle.Encode()[:8]); err == nil {
		t.Fatal("decoded a truncated rep idle")
	}
	if _, err := DecodeRepOp(op.Encode()[:10]); err == nil {
		t.Fatal("decoded a truncated rep op")
	}
	if b := op.Encode(); b[0] != 3 || b[1] != 1 {
		t.Fatalf("rep op without extra entries: version %d compat %d, want 3 and 1", b[0], b[1])
	}
	op.Extra = [][]byte{[]byte("clone entry"), []byte("snapdir entry")}
	b := op.Encode()
	if got, err := DecodeRepOp(b); err != nil || !reflect.DeepEqual(got, op) {
		t.Fatalf("rep op with extra entries: %+v %v", got, err)
	}
	if b[1] != 2 {
		t.Fatalf("rep op with extra entries has compat %d, want 2", b[1])
	}
	op.CommittedBelow = Version{Epoch: 10, Counter: 4}
	if got, err := DecodeRepOp(op.Encode()); err != nil || !reflect.DeepEqual(got, op) {
		t.Fatalf("rep op with a committed watermark: %+v %v", got, err)
	}
}

// A version 2 rep op (before the committed watermark) decodes with a
// zero watermark, which lets a replica serve no balanced read.
func TestRepOpVersion2HasNoWatermark(t *testing.T) {
	op := RepOp{PG: osdmap.PG{Pool: 2, Seed: 9}, Epoch: 10, Tid: 77, Version: Version{Epoch: 10, Counter: 5},
		Entry: []byte("entry"), Info: []byte("info"), Txn: sampleTxn()}
	b := op.Encode()                          // ends in the zero watermark: two zero uvarints
	if !bytes.HasSuffix(b, []byte{0, 0, 0}) { // no extra entries, then the watermark
		t.Fatalf("rep op % x does not end in no extra entries and a zero watermark", b[len(b)-8:])
	}
	old := bytes.Clone(b[:len(b)-2])
	old[0] = 2
	binary.LittleEndian.PutUint32(old[2:], binary.LittleEndian.Uint32(old[2:])-2)
	got, err := DecodeRepOp(old)
	if err != nil || !reflect.DeepEqual(got, op) {
		t.Fatalf("version 2 rep op: %+v %v", got, err)
	}
}

func FuzzPGMessages(f *testing.F) {
	f.Add(RepOp{Entry: []byte{1}, Txn: sampleTxn()}.Encode())
	f.Add(RepOp{Entry: []byte{1}, Txn: sampleTxn(), Extra: [][]byte{{2}, {3}}}.Encode())
	f.Add(RepOpReply{Flags: ReplyApplied}.Encode())
	f.Add(RepOp{Entry: []byte{1}, Txn: sampleTxn(), CommittedBelow: Version{Epoch: 3, Counter: 7}}.Encode())
	f.Add(RepIdle{PG: osdmap.PG{Pool: 1, Seed: 3}, Epoch: 9, IntervalStart: 4, CommittedBelow: Version{Epoch: 3, Counter: 8}}.Encode())
	classified := func(err error) bool {
		return errors.Is(err, encoding.ErrCorrupt) || errors.Is(err, encoding.ErrTruncated) || errors.Is(err, encoding.ErrUnsupportedVersion)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := DecodeRepOp(b); err == nil {
			if again, err := DecodeRepOp(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("rep op re-decode: %v", err)
			}
		} else if !classified(err) {
			t.Fatalf("unclassified: %v", err)
		}
		if m, err := DecodeRepIdle(b); err == nil {
			if again, err := DecodeRepIdle(m.Encode()); err != nil || again != m {
				t.Fatalf("rep idle re-decode: %v", err)
			}
		} else if !classified(err) {
			t.Fatalf("unclassified: %v", err)
		}
		if m, err := DecodeRepOpReply(b); err == nil {
			if again, err := DecodeRepOpReply(m.Encode()); err != nil || again != m {
				t.Fatalf("reply re-decode: %v", err)
			}
		} else if !classified(err) {
			t.Fatalf("unclassified: %v", err)
		}
	})
}

// A rep op's segments join to its encoding, with large write data as a
// segment of its own, not copied.
func TestRepOpSegments(t *testing.T) {
	big := make([]byte, 4<<20)
	for i := range big {
		big[i] = byte(i)
	}
	txn := sampleTxn()
	c := objectstore.PGCollection(2, 9)
	txn.Write(c, objid.Object(2, "", "big"), 0, big)
	op := RepOp{PG: osdmap.PG{Pool: 2, Seed: 9}, Epoch: 10, IntervalStart: 8, Tid: 78,
		Version: Version{Epoch: 10, Counter: 6}, Entry: []byte("entry"), Info: []byte("info"), Txn: txn}
	segs := op.EncodeSegments()
	joined := make([]byte, 0, len(big)+4096)
	for _, s := range segs {
		joined = append(joined, s...)
	}
	if want := op.Encode(); string(joined) != string(want) {
		t.Fatalf("segments join to %d bytes that differ from the %d-byte encoding", len(joined), len(want))
	}
	found := false
	for _, s := range segs {
		found = found || (len(s) == len(big) && &s[0] == &big[0])
	}
	if !found {
		t.Fatalf("the 4 MiB of write data were copied (%d segments)", len(segs))
	}
	if got, err := DecodeRepOp(joined); err != nil || !reflect.DeepEqual(got, op) {
		t.Fatalf("decoding the joined segments: %v", err)
	}
}

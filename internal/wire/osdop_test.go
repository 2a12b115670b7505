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

func sampleOSDOp() OSDOp {
	return OSDOp{
		Req:     ReqID{Client: "client.4711", Incarnation: 0xfeed, Tid: 42},
		Epoch:   17,
		PG:      osdmap.PG{Pool: 3, Seed: 0x1f},
		Object:  objid.New(3, "ns", "", "rbd_data.1", objid.NoSnap),
		Flags:   FlagWantApplied,
		Attempt: 2,
		Ops: []ObjectOp{
			{Code: OpAssertVersion, Version: 9},
			{Code: OpCmpXattr, Name: "lock", Data: []byte("free"), Flags: uint32(CmpEQ)},
			{Code: OpWrite, Offset: 4096, Data: []byte("hello")},
			{Code: OpOmapSet, Pairs: []KV{{Key: "a", Value: []byte("1")}, {Key: "b", Value: nil}}},
			{Code: OpOmapRmKeys, Keys: []string{"x", "y"}},
			{Code: OpOmapGetVals, Name: "a", Prefix: "p", Length: 100},
			{Code: OpCall, Name: "lock.lock", Data: []byte{1, 2}},
		},
		SnapSeq: 9,
		Snaps:   []uint64{9, 4, 1},
	}
}

func sampleOSDOpReply() OSDOpReply {
	return OSDOpReply{
		Tid: 42, Epoch: 18, Result: -ECANCELED, Flags: ReplyApplied | ReplyCommitted,
		Version: Version{Epoch: 18, Counter: 7}, Attempt: 3,
		Ops: []ObjectOpResult{
			{Data: []byte("abc"), Size: 3, Mtime: -1},
			{Result: -ENOENT},
			{Keys: []string{"k"}, Pairs: []KV{{Key: "k", Value: []byte("v")}}, More: true},
			{Extents: []Extent{{Offset: 0, Length: 4096}, {Offset: 8192, Length: 10}}},
			{Objects: []objid.ID{objid.Object(3, "", "a"), objid.Object(3, "ns", "b")}, Cursor: objid.Object(3, "", "c")},
		},
	}
}

func TestOSDOpRoundTrip(t *testing.T) {
	m := sampleOSDOp()
	got, err := DecodeOSDOp(m.Encode())
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("op: %+v %v", got, err)
	}
	r := sampleOSDOpReply()
	gotR, err := DecodeOSDOpReply(r.Encode())
	if err != nil || !reflect.DeepEqual(gotR, r) {
		t.Fatalf("reply: %+v %v", gotR, err)
	}
}

// EncodeSegments is Encode in pieces: large data by reference, the
// rest copied, the same bytes once joined.
func TestOSDOpReplySegments(t *testing.T) {
	r := sampleOSDOpReply()
	big := bytes.Repeat([]byte{7}, 4<<20)
	r.Ops = append(r.Ops, ObjectOpResult{Data: big, Size: uint64(len(big))}, ObjectOpResult{Data: []byte("small")})
	segs := r.EncodeSegments()
	if got := bytes.Join(segs, nil); !bytes.Equal(got, r.Encode()) {
		t.Fatal("segments joined differ from Encode")
	}
	if len(segs) != 3 || &segs[1][0] != &big[0] {
		t.Fatalf("%d segments; want the 4 MiB of data as the second, by reference", len(segs))
	}
	if got, err := DecodeOSDOpReply(bytes.Join(segs, nil)); err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("decode: %v", err)
	}
	if segs := sampleOSDOpReply().EncodeSegments(); len(segs) != 1 {
		t.Fatalf("a reply without large data is %d segments, want 1", len(segs))
	}
}

// An op's segments are its encoding in pieces: large write data by
// reference, still aligned for O_DIRECT once joined.
func TestOSDOpSegments(t *testing.T) {
	m := sampleOSDOp()
	big := bytes.Repeat([]byte{9}, 4<<20)
	m.Ops = append(m.Ops, ObjectOp{Code: OpWriteFull, Data: big})
	segs := m.EncodeSegments()
	joined := bytes.Join(segs, nil)
	if !bytes.Equal(joined, m.Encode()) {
		t.Fatal("segments joined differ from Encode")
	}
	if len(segs) != 3 || &segs[1][0] != &big[0] || len(segs[0])%objectstore.DataAlign != 0 {
		t.Fatalf("%d segments; want the 4 MiB of data by reference, at an aligned offset", len(segs))
	}
	if got, err := DecodeOSDOp(joined); err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("decode: %v", err)
	}
	if segs := sampleOSDOp().EncodeSegments(); len(segs) != 1 {
		t.Fatalf("an op without large data is %d segments, want 1", len(segs))
	}
}

// A version-1 reply, from before replies echoed the attempt, decodes
// with attempt 0, which is what its sender's clients sent first.
func TestOSDOpReplyVersion1(t *testing.T) {
	r := sampleOSDOpReply()
	r.Attempt = 0
	b := r.Encode()
	b = b[:len(b)-1] // the attempt, 0, is one byte
	b[0] = 1
	binary.LittleEndian.PutUint32(b[2:], uint32(len(b)-6))
	got, err := DecodeOSDOpReply(b)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("version 1 reply: %+v %v", got, err)
	}
}

// A version-1 op, from before snap contexts, decodes with none; an op
// without one is written compat 1, readable by version-1 decoders, and
// one with a snap context compat 2. A version-2 op, from before
// ReadAtLeast, decodes with a zero one.
func TestOSDOpSnapContextVersions(t *testing.T) {
	m := sampleOSDOp()
	if b := m.Encode(); b[0] != 3 || b[1] != 2 {
		t.Fatalf("op with a snap context: version %d compat %d, want 3 and 2", b[0], b[1])
	}
	m.SnapSeq, m.Snaps = 0, nil
	b := m.Encode()
	if b[0] != 3 || b[1] != 1 || !bytes.HasSuffix(b, []byte{0, 0, 0, 0}) {
		t.Fatalf("op without a snap context: version %d compat %d, ends % x", b[0], b[1], b[len(b)-4:])
	}
	older := func(b []byte, version byte, drop int) []byte {
		b = bytes.Clone(b[:len(b)-drop])
		b[0] = version
		binary.LittleEndian.PutUint32(b[2:], uint32(len(b)-6))
		return b
	}
	v2 := older(b, 2, 2)
	for _, old := range [][]byte{v2, older(v2, 1, 2)} {
		got, err := DecodeOSDOp(old)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("version %d op: %+v %v", old[0], got, err)
		}
	}
	m.Flags |= FlagBalanceReads
	m.ReadAtLeast = Version{Epoch: 17, Counter: 300}
	if got, err := DecodeOSDOp(m.Encode()); err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("balanced read: %+v %v", got, err)
	}
}

func TestOSDOpBadInput(t *testing.T) {
	good := sampleOSDOp().Encode()
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-3],
		"trailing":  append(append([]byte{}, good...), 0),
	} {
		if _, err := DecodeOSDOp(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	maxOp := OSDOp{Object: objid.Max()}
	if _, err := DecodeOSDOp(maxOp.Encode()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Errorf("max object: %v", err)
	}
	huge := OSDOp{Object: objid.Object(1, "", "o"), Ops: make([]ObjectOp, maxOps+1)}
	if _, err := DecodeOSDOp(huge.Encode()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Errorf("too many ops: %v", err)
	}
	rep := sampleOSDOpReply().Encode()
	if _, err := DecodeOSDOpReply(rep[:len(rep)/2]); err == nil {
		t.Error("truncated reply decoded")
	}
}

func TestObjectOpCodes(t *testing.T) {
	for c := range objectOpNames {
		if c.IsWrite() && (c < OpWrite || c == OpCall) {
			t.Errorf("%v counted as a write", c)
		}
	}
	if !OpWrite.IsWrite() || OpRead.IsWrite() || OpCall.IsWrite() {
		t.Error("IsWrite")
	}
	if ObjectOpCode(999).Known() || ObjectOpCode(999).String() != "op(999)" || OpOmapCmp.String() != "omap-cmp" {
		t.Error("names")
	}
	if !(Version{1, 9}).Less(Version{2, 0}) || (Version{2, 1}).Less(Version{2, 1}) || (Version{3, 4}).String() != "3'4" {
		t.Error("versions")
	}
}

// FuzzOSDOpMessages: no decoder panics, errors are classified, and what
// decodes re-encodes to the same value.
func FuzzOSDOpMessages(f *testing.F) {
	f.Add(sampleOSDOp().Encode())
	f.Add(sampleOSDOpReply().Encode())
	f.Add(OSDOp{Object: objid.Object(1, "", "o")}.Encode())
	f.Add(OSDOp{Object: objid.Object(1, "", "o"), Flags: FlagBalanceReads, ReadAtLeast: Version{Epoch: 4, Counter: 9}}.Encode())
	classified := func(err error) bool {
		return errors.Is(err, encoding.ErrCorrupt) || errors.Is(err, encoding.ErrTruncated) || errors.Is(err, encoding.ErrUnsupportedVersion)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := DecodeOSDOp(b); err == nil {
			if again, err := DecodeOSDOp(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("op re-decode: %v", err)
			}
		} else if !classified(err) {
			t.Fatalf("unclassified op error: %v", err)
		}
		if m, err := DecodeOSDOpReply(b); err == nil {
			if again, err := DecodeOSDOpReply(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("reply re-decode: %v", err)
			}
		} else if !classified(err) {
			t.Fatalf("unclassified reply error: %v", err)
		}
	})
}

// Write data below objectstore.MinAlignedData goes unpadded: the store takes it through
// its WAL and the page cache, so padding would only grow the message (a
// 4 KiB write's by up to 4 KiB of zeros). Larger data is aligned.
func TestOSDOpSmallDataUnpadded(t *testing.T) {
	m := sampleOSDOp()
	m.Ops = []ObjectOp{{Code: OpWriteFull, Data: bytes.Repeat([]byte{5}, 4096)}}
	b := m.Encode()
	if len(b) >= 2*4096 {
		t.Fatalf("a 4 KiB write encodes to %d bytes: padded", len(b))
	}
	if got, err := DecodeOSDOp(b); err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("decode: %v", err)
	}
	m.Ops[0].Data = bytes.Repeat([]byte{0xab}, objectstore.MinAlignedData)
	b = m.Encode()
	if at := bytes.Index(b, m.Ops[0].Data); at%objectstore.DataAlign != 0 {
		t.Fatalf("%d bytes of data at offset %d, want a multiple of %d", objectstore.MinAlignedData, at, objectstore.DataAlign)
	}
}

func TestReplicaReadable(t *testing.T) {
	head := objid.Object(1, "", "o")
	snap := head
	snap.Snap = 4
	for _, c := range []struct {
		name string
		obj  objid.ID
		ops  []ObjectOp
		want bool
	}{
		{"read", head, []ObjectOp{{Code: OpRead}}, true},
		{"stat, xattrs and omap", head, []ObjectOp{{Code: OpStat}, {Code: OpGetXattrs}, {Code: OpOmapGetVals}}, true},
		{"at a snapshot", snap, []ObjectOp{{Code: OpRead}}, false},
		{"class method", head, []ObjectOp{{Code: OpRead}, {Code: OpCall}}, false},
		{"a write", head, []ObjectOp{{Code: OpRead}, {Code: OpWrite}}, false},
		{"watchers", head, []ObjectOp{{Code: OpListWatchers}}, false},
		{"no ops", head, nil, false},
	} {
		if got := ReplicaReadable(c.obj, c.ops); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

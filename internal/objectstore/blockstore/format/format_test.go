package format

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// The geometry of the tests: 16 KiB units of four 4 KiB checksum blocks.
const testAU, testCB = 16 << 10, 4 << 10

var testSB = Superblock{Size: 64 << 20, AllocUnit: testAU, ChecksumBlock: testCB}

var pg = objectstore.PGCollection(1, 0)

func randID(r *rand.Rand) objid.ID {
	strs := []string{"", "a", "b", "a\x00", "a\x00b", "\x00", "\xff", "ab", "b\x01"}
	pick := func() string { return strs[r.IntN(len(strs))] }
	id := objid.New(int64(r.IntN(5))-2, pick(), pick(), pick(), []uint64{0, 1, objid.NoSnap, objid.SnapDir}[r.IntN(4)])
	if r.IntN(3) == 0 {
		id.Hash = []uint32{0, 1, 0x80000000, 0xffffffff}[r.IntN(4)]
	}
	return id
}

// TestObjectKeyOrder checks that byte order of object keys is
// objid.Compare order, and that keys decode to the ids they encode.
func TestObjectKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		a, b := randID(r), randID(r)
		ka, kb := ObjectKey(pg, a), ObjectKey(pg, b)
		kc, cmp := bytes.Compare(ka, kb), objid.Compare(a, b)
		if cmp != 0 && kc != cmp {
			t.Fatalf("%v vs %v: Compare %d, keys %d", a, b, cmp, kc)
		}
		if kc == 0 && a != b {
			t.Fatalf("distinct ids %v and %v share a key", a, b)
		}
		c, got, err := DecodeObjectKey(ka)
		if err != nil || c != pg || got != a {
			t.Fatalf("decode %v: %v %v %v", a, c, got, err)
		}
	}
	// Collections: keys of different collections never interleave.
	c1, c2 := objectstore.PGCollection(1, 0xffffffff), objectstore.PGCollection(2, 0)
	if bytes.Compare(ObjectKey(c1, objid.Max()), CollObjectPrefix(c2)) >= 0 {
		t.Fatal("collections interleave")
	}
}

func TestRecordRoundTrip(t *testing.T) {
	n := &Onode{
		Nid: 7, Size: 3*testAU + 5,
		Attrs:      AttrList{{"", nil}, {"a", []byte("1")}},
		OmapHeader: []byte("h"),
		Pages:      []Span{{0, 2 * testAU}, {3 * testAU, 3*testAU + 4096}},
	}
	got, err := DecodeRecord(n.Encode(), testSB)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, n) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, n)
	}
	if _, err := DecodeRecord(n.Encode()[:20], testSB); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Fatalf("truncated record: %v", err)
	}
	u := MakeUnit(3, 10*testAU, []uint32{9, 10, 11, 12})
	gotU, err := DecodeUnit(3, EncodeUnit(u), testSB)
	if err != nil || !reflect.DeepEqual(gotU, u) {
		t.Fatalf("unit round trip: %+v, %v", gotU, err)
	}
	for _, bad := range []Unit{
		MakeUnit(1, 10*testAU+1, u.sums), // not unit aligned
		MakeUnit(1, testSB.Size, u.sums), // beyond the device
		MakeUnit(1, testAU, u.sums[:3]),  // a checksum short
		MakeUnit(1<<60, testAU, u.sums),  // beyond the maximum object size
	} {
		if _, err := DecodeUnit(bad.LU, EncodeUnit(bad), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
			t.Errorf("unit %+v: %v, want ErrCorrupt", bad, err)
		}
	}
}

// A unit of one checksum block keeps its checksum inline, without a
// slice the collector would have to follow.
func TestOneBlockUnit(t *testing.T) {
	sb := testSB
	sb.ChecksumBlock = sb.AllocUnit
	u := MakeUnit(2, 4*testAU, []uint32{7})
	if u.sums != nil || u.NumSums() != 1 || u.Sum(0) != 7 || !reflect.DeepEqual(u.AppendSums(nil), []uint32{7}) {
		t.Fatalf("one-block unit %+v", u)
	}
	got, err := DecodeUnit(2, EncodeUnit(u), sb)
	if err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if sameUnit(u, MakeUnit(2, 4*testAU, []uint32{8})) || !sameUnit(u, MakeUnit(2, 4*testAU, []uint32{7})) {
		t.Fatal("sameUnit ignores the inline checksum")
	}
	if _, err := DecodeUnit(2, EncodeUnit(u), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Fatalf("one checksum where the geometry wants %d: %v", testSB.BlocksPerUnit(), err)
	}
}

// A shard value round-trips, and one that breaks the shard's bounds,
// the units' order or the geometry is corrupt.
func TestShardFormat(t *testing.T) {
	cs := []uint32{1, 2, 3, 4}
	base := uint64(2 * ShardUnits)
	units := []Unit{MakeUnit(base, 7*testAU, cs), MakeUnit(base+5, 3*testAU, []uint32{5, 6, 7, 8}), MakeUnit(base+ShardUnits-1, 0, cs)}
	got, err := DecodeShard(nil, EncodeShard(units, base), base, testSB)
	if err != nil || !reflect.DeepEqual(got, units) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	prev := []Unit{MakeUnit(1, testAU, cs)}
	if got, err := DecodeShard(prev, EncodeShard(units, base), base, testSB); err != nil || len(got) != 4 || got[0].LU != 1 {
		t.Fatalf("appended to %v: %+v, %v", prev, got, err)
	}
	for name, b := range map[string][]byte{
		"empty":            EncodeShard(nil, base),
		"beyond the shard": EncodeShard([]Unit{MakeUnit(base+ShardUnits, 0, cs)}, base),
		"out of order":     EncodeShard([]Unit{units[1], units[0]}, base),
		"twice":            EncodeShard([]Unit{units[0], units[0]}, base),
		"checksum short":   EncodeShard([]Unit{MakeUnit(base, 0, cs[:3])}, base),
		"truncated":        EncodeShard(units, base)[:12],
		"no envelope":      {},
	} {
		if got, err := DecodeShard(prev, b, base, testSB); !errors.Is(err, objectstore.ErrCorrupt) || len(got) != 1 {
			t.Errorf("%s: %d units, %v; want ErrCorrupt and the units before", name, len(got), err)
		}
	}
}

// A record that keeps shards says so in a header older decoders refuse,
// and a header that claims both inline units and shards is corrupt.
func TestShardedRecordHeader(t *testing.T) {
	n := &Onode{Nid: 4, Size: 3 * testAU, Pages: []Span{{0, 3 * testAU}}, Shards: true}
	b := n.Encode()
	got, err := DecodeRecord(b, testSB)
	if err != nil || !got.Shards || got.Inline {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if b[1] != shardVersion {
		t.Fatalf("compat version %d, want %d", b[1], shardVersion)
	}
	both := &Onode{Nid: 4, Inline: true, Shards: true}
	if _, err := DecodeRecord(both.Encode(), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Fatalf("inline and sharded: %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeShard(f *testing.F) {
	cs := make([]uint32, testAU/testCB)
	f.Add(EncodeShard([]Unit{MakeUnit(ShardUnits, testAU, cs), MakeUnit(ShardUnits+9, 4*testAU, cs)}, ShardUnits))
	f.Add(EncodeShard([]Unit{MakeUnit(ShardUnits-1, 0, cs)}, ShardUnits))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		units, err := DecodeShard(nil, b, ShardUnits, testSB)
		if err != nil {
			if !errors.Is(err, objectstore.ErrCorrupt) || len(units) != 0 {
				t.Fatalf("%d units, error %v; want none and ErrCorrupt", len(units), err)
			}
			return
		}
		again, err := DecodeShard(nil, EncodeShard(units, ShardUnits), ShardUnits, testSB)
		if err != nil || !slices.EqualFunc(again, units, sameUnit) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add((&Onode{Nid: 1, Size: 10, Pages: []Span{{0, 4096}}}).Encode())
	f.Add((&Onode{Nid: 2, Attrs: AttrList{{"@", []byte{1, 2}}, {"_x", nil}}}).Encode())
	f.Add(EncodeUnit(MakeUnit(0, testAU, make([]uint32, testAU/testCB))))
	f.Add((&Onode{Nid: 3, Size: testAU + 1, Pages: []Span{{0, testAU + 4096}}, Inline: true,
		Units: MakeUnitMap([]Unit{MakeUnit(0, testAU, make([]uint32, testAU/testCB)), MakeUnit(1, 5*testAU, []uint32{1, 2, 3, 4})})}).Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, err := DecodeRecord(b, testSB); err != nil {
			if !errors.Is(err, objectstore.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
		} else if again, err := DecodeRecord(n.Encode(), testSB); err != nil || !SameValue(again, n) {
			t.Fatalf("header re-decode: %v", err)
		}
		if u, err := DecodeUnit(1, b, testSB); err != nil {
			if !errors.Is(err, objectstore.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
		} else if again, err := DecodeUnit(1, EncodeUnit(u), testSB); err != nil || !sameUnit(again, u) {
			t.Fatalf("unit re-decode: %v", err)
		}
	})
}

func FuzzDecodeObjectKey(f *testing.F) {
	f.Add(ObjectKey(pg, objid.New(1, "ns", "k", "n", 3)))
	f.Add(ObjectKey(pg, objid.New(1, "n\x00s", "\x00k\x00", "a\x00\x00b\x00", 0)))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, o, err := DecodeObjectKey(b)
		if err != nil {
			return
		}
		if !bytes.Equal(ObjectKey(c, o), b) {
			t.Fatalf("key does not re-encode to itself")
		}
	})
}

// encodeBitmapV1 is how regions were written before version 2.
func encodeBitmapV1(words []uint64) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(uint64(len(words)))
	for _, w := range words {
		e.Uint64(w)
	}
	e.End(m)
	return e.Data()
}

func TestBitmapRegionEncoding(t *testing.T) {
	const all = math.MaxUint64
	full := make([]uint64, BitmapRegionUnits/64)
	for i := range full {
		full[i] = all
	}
	for _, words := range [][]uint64{
		{},
		make([]uint64, BitmapRegionUnits/64), // empty
		full,
		{all, all, 0x0f, 0, 0},
		{all, 0, all, 0},        // a hole
		{0, 0, 5},               // nothing full
		{5, 0, all, all},        // full at the end
		{0x8000000000000000, 1}, // neither full nor empty
	} {
		v2 := EncodeBitmap(words)
		for _, b := range [][]byte{v2, encodeBitmapV1(words)} {
			got, err := DecodeBitmap(b)
			if err != nil {
				t.Fatalf("%x: %v", words, err)
			}
			if !slices.Equal(got, words) {
				t.Fatalf("decoded %x, want %x", got, words)
			}
		}
	}
	// The common region, allocated from its start, costs a partial word.
	half := make([]uint64, BitmapRegionUnits/64)
	for i := range 20 {
		half[i] = all
	}
	half[20] = 0xff
	if n := len(EncodeBitmap(half)); n > 24 {
		t.Errorf("a region filled from its start encodes to %d bytes", n)
	}
}

func TestBitmapRegionRefusesBadCounts(t *testing.T) {
	for _, counts := range [][3]uint64{
		{BitmapRegionUnits/64 + 1, 0, 0}, // too many words
		{4, 5, 0},                        // more full words than words
		{4, 2, 3},                        // full and empty overlap
		{4, 0, 0},                        // middle words missing
	} {
		var e encoding.Encoder
		m := e.Begin(2, 2)
		for _, c := range counts {
			e.Uvarint(c)
		}
		e.End(m)
		if _, err := DecodeBitmap(e.Data()); !errors.Is(err, objectstore.ErrCorrupt) {
			t.Errorf("counts %v: err %v, want ErrCorrupt", counts, err)
		}
	}
}

func FuzzDecodeSmallRecords(f *testing.F) {
	f.Add(testSB.Encode())
	f.Add(DeferredWrite{DevOff: testCB, Data: make([]byte, testCB)}.encodeTo(new(encoding.Encoder)))
	f.Add(EncodeBitmap([]uint64{1, 2}))
	f.Add(EncodeBitmap([]uint64{math.MaxUint64, 7, 0}))
	f.Add(encodeBitmapV1([]uint64{1, 2}))
	f.Add(EncodeUvarint(5))
	f.Add(DeferredWrite{DevOff: testCB, Data: make([]byte, testCB)}.EncodeLogged(new(encoding.Encoder), 9))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, err := range []error{
			func() error { _, _, _, err := DecodeLoggedDeferred(b, testSB); return err }(),
			func() error { _, err := DecodeSuperblock(b); return err }(),
			func() error { _, err := DecodeDeferred(b, testSB); return err }(),
			func() error { _, err := DecodeBitmap(b); return err }(),
			func() error { _, err := DecodeUvarint(b); return err }(),
			DecodeEmpty(b),
		} {
			if err != nil && !errors.Is(err, objectstore.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
		}
	})
}

// Version 3 headers carry the omap flag; version 2 headers, written
// before it, decode as objects that may have omap entries.
func TestHeaderOmapFlag(t *testing.T) {
	for _, omap := range []bool{false, true} {
		n := &Onode{Nid: 7, Size: 4096, Pages: []Span{{0, 4096}}, Omap: omap}
		got, err := DecodeRecord(n.Encode(), testSB)
		if err != nil || got.Omap != omap || !sameHeader(got, n) {
			t.Fatalf("omap %v: round trip %+v, %v", omap, got, err)
		}
	}
	var e encoding.Encoder
	m := e.Begin(2, 2)
	e.Uvarint(7) // nid
	e.Uvarint(0) // size
	e.Uvarint(0) // attrs
	e.Bytes(nil) // omap header
	e.Uvarint(0) // page spans
	e.End(m)
	got, err := DecodeRecord(e.Data(), testSB)
	if err != nil || got.Nid != 7 || !got.Omap {
		t.Fatalf("version 2 header: %+v, %v; want nid 7 and omap possible", got, err)
	}
}

// An inline record round-trips with its units, and refuses units that do
// not fit the geometry or come out of order; a decoder of version 3
// refuses it rather than take it for an object without data.
func TestInlineRecordFormat(t *testing.T) {
	n := &Onode{Nid: 9, Size: 2*testAU + 5, Attrs: AttrList{{"@", []byte("info")}}, Pages: []Span{{0, 3 * testAU}}, Inline: true,
		Units: MakeUnitMap([]Unit{MakeUnit(0, 4*testAU, []uint32{1, 2, 3, 4}), MakeUnit(1, 9*testAU, []uint32{5, 6, 7, 8}), MakeUnit(2, testAU, []uint32{9, 9, 9, 9})})}
	v := n.Encode()
	got, err := DecodeRecord(v, testSB)
	if err != nil || !got.Inline || !SameValue(got, n) || !reflect.DeepEqual(got.Units.Slice(), n.Units.Slice()) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if d := encoding.NewDecoder(v); d.Begin(3) != 0 || d.Err() == nil {
		t.Fatalf("a version 3 decoder accepts an inline record")
	}
	keyed := *n
	keyed.Inline = false
	if d := encoding.NewDecoder(keyed.Encode()); d.Begin(3) == 0 || d.Err() != nil {
		t.Fatalf("a version 3 decoder refuses a record without inline units: %v", d.Err())
	}
	for name, units := range map[string][]Unit{
		"out of order":       {MakeUnit(1, testAU, []uint32{1, 2, 3, 4}), MakeUnit(0, 2*testAU, []uint32{1, 2, 3, 4})},
		"twice":              {MakeUnit(1, testAU, []uint32{1, 2, 3, 4}), MakeUnit(1, 2*testAU, []uint32{1, 2, 3, 4})},
		"not unit aligned":   {MakeUnit(0, testAU+1, []uint32{1, 2, 3, 4})},
		"beyond the device":  {MakeUnit(0, testSB.Size, []uint32{1, 2, 3, 4})},
		"a checksum short":   {MakeUnit(0, testAU, []uint32{1, 2, 3})},
		"beyond max objsize": {MakeUnit(1<<60, testAU, []uint32{1, 2, 3, 4})},
	} {
		bad := *n
		bad.Units = MakeUnitMap(units)
		if _, err := DecodeRecord(bad.Encode(), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

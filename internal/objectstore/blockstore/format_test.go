package blockstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

var testSB = superblock{Size: 64 << 20, AllocUnit: testAU, ChecksumBlock: testCB}

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
		ka, kb := objectKey(pg, a), objectKey(pg, b)
		kc, cmp := bytes.Compare(ka, kb), objid.Compare(a, b)
		if cmp != 0 && kc != cmp {
			t.Fatalf("%v vs %v: Compare %d, keys %d", a, b, cmp, kc)
		}
		if kc == 0 && a != b {
			t.Fatalf("distinct ids %v and %v share a key", a, b)
		}
		c, got, err := decodeObjectKey(ka)
		if err != nil || c != pg || got != a {
			t.Fatalf("decode %v: %v %v %v", a, c, got, err)
		}
	}
	// Collections: keys of different collections never interleave.
	c1, c2 := objectstore.PGCollection(1, 0xffffffff), objectstore.PGCollection(2, 0)
	if bytes.Compare(objectKey(c1, objid.Max()), collObjectPrefix(c2)) >= 0 {
		t.Fatal("collections interleave")
	}
}

func TestRecordRoundTrip(t *testing.T) {
	n := &onode{
		Nid: 7, Size: 3*testAU + 5,
		Attrs:      attrList{{"", nil}, {"a", []byte("1")}},
		OmapHeader: []byte("h"),
		Pages:      []span{{0, 2 * testAU}, {3 * testAU, 3*testAU + 4096}},
	}
	got, err := decodeRecord(n.encodeRecord(), testSB)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, n) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, n)
	}
	if _, err := decodeRecord(n.encodeRecord()[:20], testSB); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Fatalf("truncated record: %v", err)
	}
	u := makeUnit(3, 10*testAU, []uint32{9, 10, 11, 12})
	gotU, err := decodeUnit(3, encodeUnit(u), testSB)
	if err != nil || !reflect.DeepEqual(gotU, u) {
		t.Fatalf("unit round trip: %+v, %v", gotU, err)
	}
	for _, bad := range []unit{
		makeUnit(1, 10*testAU+1, u.sums), // not unit aligned
		makeUnit(1, testSB.Size, u.sums), // beyond the device
		makeUnit(1, testAU, u.sums[:3]),  // a checksum short
		makeUnit(1<<60, testAU, u.sums),  // beyond the maximum object size
	} {
		if _, err := decodeUnit(bad.LU, encodeUnit(bad), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
			t.Errorf("unit %+v: %v, want ErrCorrupt", bad, err)
		}
	}
}

// A unit of one checksum block keeps its checksum inline, without a
// slice the collector would have to follow.
func TestOneBlockUnit(t *testing.T) {
	sb := testSB
	sb.ChecksumBlock = sb.AllocUnit
	u := makeUnit(2, 4*testAU, []uint32{7})
	if u.sums != nil || u.nsums() != 1 || u.csum(0) != 7 || !reflect.DeepEqual(u.appendSums(nil), []uint32{7}) {
		t.Fatalf("one-block unit %+v", u)
	}
	got, err := decodeUnit(2, encodeUnit(u), sb)
	if err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if sameUnit(u, makeUnit(2, 4*testAU, []uint32{8})) || !sameUnit(u, makeUnit(2, 4*testAU, []uint32{7})) {
		t.Fatal("sameUnit ignores the inline checksum")
	}
	if _, err := decodeUnit(2, encodeUnit(u), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Fatalf("one checksum where the geometry wants %d: %v", testSB.blocksPerUnit(), err)
	}
}

func TestDiffUnits(t *testing.T) {
	cs := []uint32{1, 2, 3, 4}
	was := []unit{makeUnit(0, 0, cs), makeUnit(1, testAU, cs), makeUnit(3, 3*testAU, cs)}
	now := []unit{makeUnit(0, 0, cs), makeUnit(1, testAU, []uint32{1, 2, 3, 5}), makeUnit(2, 2*testAU, cs)}
	var set, del []uint64
	diffUnits(was, now, func(u unit) { set = append(set, u.LU) }, func(lu uint64) { del = append(del, lu) })
	if !reflect.DeepEqual(set, []uint64{1, 2}) || !reflect.DeepEqual(del, []uint64{3}) {
		t.Fatalf("set %v, deleted %v; want set [1 2], deleted [3]", set, del)
	}
}

// A shard value round-trips, and one that breaks the shard's bounds,
// the units' order or the geometry is corrupt.
func TestShardFormat(t *testing.T) {
	cs := []uint32{1, 2, 3, 4}
	base := uint64(2 * shardUnits)
	units := []unit{makeUnit(base, 7*testAU, cs), makeUnit(base+5, 3*testAU, []uint32{5, 6, 7, 8}), makeUnit(base+shardUnits-1, 0, cs)}
	got, err := decodeShard(nil, encodeShard(units, base), base, testSB)
	if err != nil || !reflect.DeepEqual(got, units) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	prev := []unit{makeUnit(1, testAU, cs)}
	if got, err := decodeShard(prev, encodeShard(units, base), base, testSB); err != nil || len(got) != 4 || got[0].LU != 1 {
		t.Fatalf("appended to %v: %+v, %v", prev, got, err)
	}
	for name, b := range map[string][]byte{
		"empty":            encodeShard(nil, base),
		"beyond the shard": encodeShard([]unit{makeUnit(base+shardUnits, 0, cs)}, base),
		"out of order":     encodeShard([]unit{units[1], units[0]}, base),
		"twice":            encodeShard([]unit{units[0], units[0]}, base),
		"checksum short":   encodeShard([]unit{makeUnit(base, 0, cs[:3])}, base),
		"truncated":        encodeShard(units, base)[:12],
		"no envelope":      {},
	} {
		if got, err := decodeShard(prev, b, base, testSB); !errors.Is(err, objectstore.ErrCorrupt) || len(got) != 1 {
			t.Errorf("%s: %d units, %v; want ErrCorrupt and the units before", name, len(got), err)
		}
	}
}

// A record that keeps shards says so in a header older decoders refuse,
// and a header that claims both inline units and shards is corrupt.
func TestShardedRecordHeader(t *testing.T) {
	n := &onode{Nid: 4, Size: 3 * testAU, Pages: []span{{0, 3 * testAU}}, shards: true}
	b := n.encodeRecord()
	got, err := decodeRecord(b, testSB)
	if err != nil || !got.shards || got.inline {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if b[1] != shardVersion {
		t.Fatalf("compat version %d, want %d", b[1], shardVersion)
	}
	both := &onode{Nid: 4, inline: true, shards: true}
	if _, err := decodeRecord(both.encodeRecord(), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Fatalf("inline and sharded: %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeShard(f *testing.F) {
	cs := make([]uint32, testAU/testCB)
	f.Add(encodeShard([]unit{makeUnit(shardUnits, testAU, cs), makeUnit(shardUnits+9, 4*testAU, cs)}, shardUnits))
	f.Add(encodeShard([]unit{makeUnit(shardUnits-1, 0, cs)}, shardUnits))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		units, err := decodeShard(nil, b, shardUnits, testSB)
		if err != nil {
			if !errors.Is(err, objectstore.ErrCorrupt) || len(units) != 0 {
				t.Fatalf("%d units, error %v; want none and ErrCorrupt", len(units), err)
			}
			return
		}
		again, err := decodeShard(nil, encodeShard(units, shardUnits), shardUnits, testSB)
		if err != nil || !slices.EqualFunc(again, units, sameUnit) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add((&onode{Nid: 1, Size: 10, Pages: []span{{0, 4096}}}).encodeRecord())
	f.Add((&onode{Nid: 2, Attrs: attrList{{"@", []byte{1, 2}}, {"_x", nil}}}).encodeRecord())
	f.Add(encodeUnit(makeUnit(0, testAU, make([]uint32, testAU/testCB))))
	f.Add((&onode{Nid: 3, Size: testAU + 1, Pages: []span{{0, testAU + 4096}}, inline: true,
		Units: []unit{makeUnit(0, testAU, make([]uint32, testAU/testCB)), makeUnit(1, 5*testAU, []uint32{1, 2, 3, 4})}}).encodeRecord())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, err := decodeRecord(b, testSB); err != nil {
			if !errors.Is(err, objectstore.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
		} else if again, err := decodeRecord(n.encodeRecord(), testSB); err != nil || !sameValue(again, n) {
			t.Fatalf("header re-decode: %v", err)
		}
		if u, err := decodeUnit(1, b, testSB); err != nil {
			if !errors.Is(err, objectstore.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
		} else if again, err := decodeUnit(1, encodeUnit(u), testSB); err != nil || !sameUnit(again, u) {
			t.Fatalf("unit re-decode: %v", err)
		}
	})
}

func FuzzDecodeObjectKey(f *testing.F) {
	f.Add(objectKey(pg, objid.New(1, "ns", "k", "n", 3)))
	f.Add(objectKey(pg, objid.New(1, "n\x00s", "\x00k\x00", "a\x00\x00b\x00", 0)))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, o, err := decodeObjectKey(b)
		if err != nil {
			return
		}
		if !bytes.Equal(objectKey(c, o), b) {
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
	full := make([]uint64, bitmapRegionUnits/64)
	for i := range full {
		full[i] = all
	}
	for _, words := range [][]uint64{
		{},
		make([]uint64, bitmapRegionUnits/64), // empty
		full,
		{all, all, 0x0f, 0, 0},
		{all, 0, all, 0},        // a hole
		{0, 0, 5},               // nothing full
		{5, 0, all, all},        // full at the end
		{0x8000000000000000, 1}, // neither full nor empty
	} {
		v2 := encodeBitmap(words)
		for _, b := range [][]byte{v2, encodeBitmapV1(words)} {
			got, err := decodeBitmap(b)
			if err != nil {
				t.Fatalf("%x: %v", words, err)
			}
			if !slices.Equal(got, words) {
				t.Fatalf("decoded %x, want %x", got, words)
			}
		}
	}
	// The common region, allocated from its start, costs a partial word.
	half := make([]uint64, bitmapRegionUnits/64)
	for i := range 20 {
		half[i] = all
	}
	half[20] = 0xff
	if n := len(encodeBitmap(half)); n > 24 {
		t.Errorf("a region filled from its start encodes to %d bytes", n)
	}
}

func TestBitmapRegionRefusesBadCounts(t *testing.T) {
	for _, counts := range [][3]uint64{
		{bitmapRegionUnits/64 + 1, 0, 0}, // too many words
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
		if _, err := decodeBitmap(e.Data()); !errors.Is(err, objectstore.ErrCorrupt) {
			t.Errorf("counts %v: err %v, want ErrCorrupt", counts, err)
		}
	}
}

func FuzzDecodeSmallRecords(f *testing.F) {
	f.Add(testSB.encode())
	f.Add(deferredWrite{DevOff: testCB, Data: make([]byte, testCB)}.encodeTo(new(encoding.Encoder)))
	f.Add(encodeBitmap([]uint64{1, 2}))
	f.Add(encodeBitmap([]uint64{math.MaxUint64, 7, 0}))
	f.Add(encodeBitmapV1([]uint64{1, 2}))
	f.Add(encodeUvarint(5))
	f.Add(deferredWrite{DevOff: testCB, Data: make([]byte, testCB)}.encodeLogged(new(encoding.Encoder), 9))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, err := range []error{
			func() error { _, _, _, err := decodeLoggedDeferred(b, testSB); return err }(),
			takeLogged(b, testSB, map[string]*pendingWrite{}),
			func() error { _, err := decodeSuperblock(b); return err }(),
			func() error { _, err := decodeDeferred(b, testSB); return err }(),
			func() error { _, err := decodeBitmap(b); return err }(),
			func() error { _, err := decodeUvarint(b); return err }(),
			decodeEmpty(b),
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
		n := &onode{Nid: 7, Size: 4096, Pages: []span{{0, 4096}}, Omap: omap}
		got, err := decodeRecord(n.encodeRecord(), testSB)
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
	got, err := decodeRecord(e.Data(), testSB)
	if err != nil || got.Nid != 7 || !got.Omap {
		t.Fatalf("version 2 header: %+v, %v; want nid 7 and omap possible", got, err)
	}
}

// Removing objects of every shape leaves no unit or omap key behind,
// whether their keys went one by one or in a range.
func TestRemovalLeavesNoKeys(t *testing.T) {
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	obj := func(name string) objid.ID { return objid.Object(1, "", name) }
	kv := map[string][]byte{"a": []byte("1"), "b": []byte("2")}
	au := int(s.sb.AllocUnit)
	big := make([]byte, (maxPointUnitDeletes+4)*au)
	mid := make([]byte, (maxInlineUnits+8)*au) // keyed, deleted key by key
	apply(t, s, new(objectstore.Transaction).
		Write(pg, obj("small"), 0, []byte("hello")).
		Write(pg, obj("big"), 0, big).
		Write(pg, obj("mid"), 0, mid).
		Write(pg, obj("omap"), 0, []byte("x")).OmapSetKeys(pg, obj("omap"), kv).
		OmapSetKeys(pg, obj("cleared"), kv).OmapClear(pg, obj("cleared")).OmapSetKeys(pg, obj("cleared"), kv))
	apply(t, s, new(objectstore.Transaction).Clone(pg, obj("omap"), obj("clone")))
	// Shrunk and removed in one transaction: the unit keys to delete are
	// those stored before it, not those the object has at its removal.
	apply(t, s, new(objectstore.Transaction).Truncate(pg, obj("mid"), 3).Remove(pg, obj("mid")))
	for _, name := range []string{"small", "big", "omap", "cleared", "clone"} {
		apply(t, s, new(objectstore.Transaction).Remove(pg, obj(name)))
	}
	for _, prefix := range []byte{prefixUnit, prefixOmap} {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
		if err != nil {
			t.Fatal(err)
		}
		for it.First(); it.Valid(); it.Next() {
			t.Errorf("key %q left after every object was removed", it.Key())
		}
		_ = it.Close()
	}
}

// An inline record round-trips with its units, and refuses units that do
// not fit the geometry or come out of order; a decoder of version 3
// refuses it rather than take it for an object without data.
func TestInlineRecordFormat(t *testing.T) {
	n := &onode{Nid: 9, Size: 2*testAU + 5, Attrs: attrList{{"@", []byte("info")}}, Pages: []span{{0, 3 * testAU}}, inline: true,
		Units: []unit{makeUnit(0, 4*testAU, []uint32{1, 2, 3, 4}), makeUnit(1, 9*testAU, []uint32{5, 6, 7, 8}), makeUnit(2, testAU, []uint32{9, 9, 9, 9})}}
	v := n.encodeRecord()
	got, err := decodeRecord(v, testSB)
	if err != nil || !got.inline || !sameValue(got, n) || !reflect.DeepEqual(got.Units, n.Units) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if d := encoding.NewDecoder(v); d.Begin(3) != 0 || d.Err() == nil {
		t.Fatalf("a version 3 decoder accepts an inline record")
	}
	keyed := *n
	keyed.inline = false
	if d := encoding.NewDecoder(keyed.encodeRecord()); d.Begin(3) == 0 || d.Err() != nil {
		t.Fatalf("a version 3 decoder refuses a record without inline units: %v", d.Err())
	}
	for name, units := range map[string][]unit{
		"out of order":       {makeUnit(1, testAU, []uint32{1, 2, 3, 4}), makeUnit(0, 2*testAU, []uint32{1, 2, 3, 4})},
		"twice":              {makeUnit(1, testAU, []uint32{1, 2, 3, 4}), makeUnit(1, 2*testAU, []uint32{1, 2, 3, 4})},
		"not unit aligned":   {makeUnit(0, testAU+1, []uint32{1, 2, 3, 4})},
		"beyond the device":  {makeUnit(0, testSB.Size, []uint32{1, 2, 3, 4})},
		"a checksum short":   {makeUnit(0, testAU, []uint32{1, 2, 3})},
		"beyond max objsize": {makeUnit(1<<60, testAU, []uint32{1, 2, 3, 4})},
	} {
		bad := *n
		bad.Units = units
		if _, err := decodeRecord(bad.encodeRecord(), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// keysOf counts node nid's keys under prefix (prefixUnit or
// prefixShard) in Pebble.
func keysOf(t *testing.T, s *Store, prefix byte, nid uint64) int {
	t.Helper()
	lo := binary.BigEndian.AppendUint64([]byte{prefix}, nid)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n
}

// shardsOf counts the shards units fall in.
func shardsOf(units []unit) int {
	n := 0
	for range shardRuns(units) {
		n++
	}
	return n
}

// Where a record keeps its units.
type unitLayout int

const (
	layoutInline unitLayout = iota
	layoutShards
	layoutUnitKeys // as versions before shards wrote large records
)

// checkLayout fails t unless o's stored record keeps its units as want
// says, with exactly the keys that takes.
func checkLayout(t *testing.T, s *Store, o objid.ID, step string, want unitLayout) {
	t.Helper()
	rec := storedRecord(t, s, o)
	u, v := keysOf(t, s, prefixUnit, rec.Nid), keysOf(t, s, prefixShard, rec.Nid)
	var ok bool
	switch want {
	case layoutInline:
		ok = rec.inline && !rec.shards && u == 0 && v == 0
	case layoutShards:
		ok = !rec.inline && rec.shards && u == 0 && v == shardsOf(rec.Units)
	case layoutUnitKeys:
		ok = !rec.inline && !rec.shards && u == len(rec.Units) && v == 0
	}
	if !ok {
		t.Fatalf("%s: inline %v, shards %v, %d units, %d unit keys, %d shard keys; want layout %d", step, rec.inline, rec.shards, len(rec.Units), u, v, want)
	}
}

// storedRecord reads o's record from Pebble, past the cache.
func storedRecord(t *testing.T, s *Store, o objid.ID) *onode {
	t.Helper()
	rec, err := s.loadRecord(string(objectKey(pg, o)))
	if err != nil || rec == nil {
		t.Fatalf("record of %v: %v, %v", o, rec, err)
	}
	return rec
}

// A record keeps its units inline while it has at most maxInlineUnits,
// moves them to shard keys as it grows past that and back as it shrinks;
// a record written with unit keys by an older version moves them inline
// at its next write. Every step reads back and passes fsck.
func TestInlineUnitsFollowTheSize(t *testing.T) {
	ctx := context.Background()
	opts := testOptions(vfs.NewMem())
	s := mkfsOpen(t, opts)
	o := objid.Object(1, "", "o")
	au := int(s.sb.AllocUnit)
	want := randBytes(rand.New(rand.NewPCG(1, 2)), (maxInlineUnits+3)*au)
	check := func(step string, size int, layout unitLayout) {
		t.Helper()
		checkLayout(t, s, o, step, layout)
		got, err := s.Read(ctx, pg, o, 0, 0)
		if err != nil || !bytes.Equal(got, want[:size]) {
			t.Fatalf("%s: read %d bytes, %v; want %d", step, len(got), err, size)
		}
	}
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg).Write(pg, o, 0, want[:au+10]))
	check("small", au+10, layoutInline)
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, want[:maxInlineUnits*au]))
	check("at the limit", maxInlineUnits*au, layoutInline)
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, want))
	check("grown", len(want), layoutShards)
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 100, want[100:200]))
	check("overwritten while keyed", len(want), layoutShards)
	apply(t, s, new(objectstore.Transaction).Truncate(pg, o, uint64(2*au)))
	check("shrunk", 2*au, layoutInline)

	s = asOlderVersion(t, s, opts, o)
	check("written by an older version", 2*au, layoutUnitKeys)
	copy(want[10:], "patched")
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 10, []byte("patched")))
	check("rewritten", 2*au, layoutInline)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Fsck(ctx, opts, FsckOptions{Deep: true})
	if err != nil || !rep.Clean() {
		t.Fatalf("fsck: %+v, %v", rep, err)
	}
}

// asOlderVersion rewrites o's record as versions before inline units and
// shards wrote it, with a unit key per unit, and reopens the store.
func asOlderVersion(t *testing.T, s *Store, opts Options, o objid.ID) *Store {
	t.Helper()
	rec := storedRecord(t, s, o)
	rec.inline, rec.shards = false, false
	b := s.db.NewBatch()
	_ = b.Set(objectKey(pg, o), rec.encodeRecord(), nil)
	lo, hi := shardRange(rec.Nid)
	_ = b.DeleteRange(lo, hi, nil)
	for _, u := range rec.Units {
		_ = b.Set(unitKey(rec.Nid, u.LU), encodeUnit(u), nil)
	}
	if err := s.db.Apply(b, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return mustOpen(t, opts)
}

// storeWithObject returns a store on a memory file system holding one
// object of units random allocation units, and the object's contents.
func storeWithObject(t *testing.T, units int) (*Store, Options, objid.ID, []byte) {
	t.Helper()
	opts := testOptions(vfs.NewMem())
	s := mkfsOpen(t, opts)
	o := objid.Object(1, "", "big")
	want := randBytes(rand.New(rand.NewPCG(uint64(units), 6)), units*int(s.sb.AllocUnit))
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg).Write(pg, o, 0, want))
	return s, opts, o, want
}

// Shard keys follow the units: a truncate deletes the shards it empties,
// a sparse write adds only the shard it lands in, and removing the
// object deletes them all.
func TestShardKeysFollowTheUnits(t *testing.T) {
	ctx := context.Background()
	s, _, o, want := storeWithObject(t, 2*shardUnits+5)
	au := int(s.sb.AllocUnit)
	read := func(step string) {
		t.Helper()
		got, err := s.Read(ctx, pg, o, 0, 0)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: read %d bytes, %v; want %d", step, len(got), err, len(want))
		}
	}
	checkLayout(t, s, o, "three shards", layoutShards)
	read("three shards")
	want = want[:shardUnits*au+100]
	apply(t, s, new(objectstore.Transaction).Truncate(pg, o, uint64(len(want))))
	checkLayout(t, s, o, "truncated into the second shard", layoutShards)
	read("truncated")
	far := 5*shardUnits*au + 7
	tail := []byte("far away")
	want = append(want, make([]byte, far+len(tail)-len(want))...)
	copy(want[far:], tail)
	apply(t, s, new(objectstore.Transaction).Write(pg, o, uint64(far), tail))
	checkLayout(t, s, o, "a sparse write", layoutShards)
	if rec := storedRecord(t, s, o); shardsOf(rec.Units) != 3 {
		t.Fatalf("%d shards after a sparse write, want 3", shardsOf(rec.Units))
	}
	read("sparse")
	nid := storedRecord(t, s, o).Nid
	apply(t, s, new(objectstore.Transaction).Remove(pg, o))
	if u, v := keysOf(t, s, prefixUnit, nid), keysOf(t, s, prefixShard, nid); u+v != 0 {
		t.Fatalf("removed object left %d unit keys and %d shard keys", u, v)
	}
}

// A large record an older version wrote with a key per unit reads as it
// did, and its next write moves it to shard keys, deleting the unit keys.
func TestUnitKeysMoveToShards(t *testing.T) {
	ctx := context.Background()
	s, opts, o, want := storeWithObject(t, shardUnits+9)
	au := int(s.sb.AllocUnit)
	s = asOlderVersion(t, s, opts, o)
	checkLayout(t, s, o, "written by an older version", layoutUnitKeys)
	if got, err := s.Read(ctx, pg, o, 0, 0); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("old layout: read %d bytes, %v", len(got), err)
	}
	copy(want[70*au:], "patched")
	apply(t, s, new(objectstore.Transaction).Write(pg, o, uint64(70*au), []byte("patched")))
	checkLayout(t, s, o, "rewritten", layoutShards)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	if got, err := s.Read(ctx, pg, o, 0, 0); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after the move: read %d bytes, %v", len(got), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Fsck(ctx, opts, FsckOptions{Deep: true})
	if err != nil || !rep.Clean() {
		t.Fatalf("fsck: %+v, %v", rep, err)
	}
}

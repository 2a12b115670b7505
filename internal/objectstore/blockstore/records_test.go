package blockstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

var testSB = format.Superblock{Size: 64 << 20, AllocUnit: testAU, ChecksumBlock: testCB}

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
	mid := make([]byte, (format.MaxInlineUnits+8)*au) // keyed, deleted key by key
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
	for _, prefix := range []byte{format.PrefixUnit, format.PrefixOmap} {
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

// keysOf counts node nid's keys under prefix (format.PrefixUnit or
// format.PrefixShard) in Pebble.
func keysOf(t *testing.T, s *Store, prefix byte, nid uint64) int {
	t.Helper()
	lo := binary.BigEndian.AppendUint64([]byte{prefix}, nid)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: format.PrefixEnd(lo)})
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
func shardsOf(units format.UnitMap) int {
	n := 0
	for range units.Shards() {
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
	u, v := keysOf(t, s, format.PrefixUnit, rec.Nid), keysOf(t, s, format.PrefixShard, rec.Nid)
	var ok bool
	switch want {
	case layoutInline:
		ok = rec.Inline && !rec.Shards && u == 0 && v == 0
	case layoutShards:
		ok = !rec.Inline && rec.Shards && u == 0 && v == shardsOf(rec.Units)
	case layoutUnitKeys:
		ok = !rec.Inline && !rec.Shards && u == rec.Units.Len() && v == 0
	}
	if !ok {
		t.Fatalf("%s: inline %v, shards %v, %d units, %d unit keys, %d shard keys; want layout %d", step, rec.Inline, rec.Shards, rec.Units.Len(), u, v, want)
	}
}

// storedRecord reads o's record from Pebble, past the cache.
func storedRecord(t *testing.T, s *Store, o objid.ID) *format.Onode {
	t.Helper()
	rec, err := s.loadRecord(string(format.ObjectKey(pg, o)))
	if err != nil || rec == nil {
		t.Fatalf("record of %v: %v, %v", o, rec, err)
	}
	return rec
}

// A record keeps its units inline while it has at most MaxInlineUnits,
// moves them to shard keys as it grows past that and back as it shrinks;
// a record written with unit keys by an older version moves them inline
// at its next write. Every step reads back and passes fsck.
func TestInlineUnitsFollowTheSize(t *testing.T) {
	ctx := context.Background()
	opts := testOptions(vfs.NewMem())
	s := mkfsOpen(t, opts)
	o := objid.Object(1, "", "o")
	au := int(s.sb.AllocUnit)
	want := randBytes(rand.New(rand.NewPCG(1, 2)), (format.MaxInlineUnits+3)*au)
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
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, want[:format.MaxInlineUnits*au]))
	check("at the limit", format.MaxInlineUnits*au, layoutInline)
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
	rec.Inline, rec.Shards = false, false
	b := s.db.NewBatch()
	_ = b.Set(format.ObjectKey(pg, o), rec.Encode(), nil)
	lo, hi := format.ShardRange(rec.Nid)
	_ = b.DeleteRange(lo, hi, nil)
	for u := range rec.Units.All() {
		_ = b.Set(format.UnitKey(rec.Nid, u.LU), format.EncodeUnit(u), nil)
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
	s, _, o, want := storeWithObject(t, 2*format.ShardUnits+5)
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
	want = want[:format.ShardUnits*au+100]
	apply(t, s, new(objectstore.Transaction).Truncate(pg, o, uint64(len(want))))
	checkLayout(t, s, o, "truncated into the second shard", layoutShards)
	read("truncated")
	far := 5*format.ShardUnits*au + 7
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
	if u, v := keysOf(t, s, format.PrefixUnit, nid), keysOf(t, s, format.PrefixShard, nid); u+v != 0 {
		t.Fatalf("removed object left %d unit keys and %d shard keys", u, v)
	}
}

// A large record an older version wrote with a key per unit reads as it
// did, and its next write moves it to shard keys, deleting the unit keys.
func TestUnitKeysMoveToShards(t *testing.T) {
	ctx := context.Background()
	s, opts, o, want := storeWithObject(t, format.ShardUnits+9)
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

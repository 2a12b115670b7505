package blockstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// fsckFixture is a closed store with a varied population: copy-on-write
// and deferred writes, holes, a clone, omap entries, attributes, removed
// objects, objects in three collections, and records with their units
// inline (all but one) and under shard keys (fsckBig).
type fsckFixture struct {
	fs   vfs.FS
	opts Options
	data map[string][]byte // collection + " " + object -> contents
}

var (
	fsckA    = objid.Object(1, "", "a")
	fsckB    = objid.Object(1, "", "b")
	fsckBig  = objid.Object(1, "", "big")
	fsckMeta = objid.Object(-1, "", "osdmap.1")
)

func newFsckFixture(t *testing.T) *fsckFixture {
	t.Helper()
	fs := vfs.NewMem()
	opts := testOptions(fs)
	s := mkfsOpen(t, opts)
	r := rand.New(rand.NewPCG(3, 4))
	a := randBytes(r, 3*testAU+100)
	b := randBytes(r, 5000)
	big := randBytes(r, (format.MaxInlineUnits+1)*testAU+1)
	meta := randBytes(r, 2*testAU)
	pg2 := objectstore.PGCollection(2, 7)
	apply(t, s, new(objectstore.Transaction).
		CreateCollection(pg).CreateCollection(pg2).CreateCollection(objectstore.MetaCollection).
		Write(pg, fsckA, 0, a).Write(pg, fsckB, 0, b).Write(pg, fsckBig, 0, big).
		SetAttrs(pg, fsckA, map[string][]byte{"_": []byte("oi")}).
		OmapSetKeys(pg, fsckA, map[string][]byte{"k1": []byte("v1"), "k2": []byte("v2")}).
		Write(objectstore.MetaCollection, fsckMeta, 0, meta))
	// Deferred overwrite, a hole, a clone, a removal.
	apply(t, s, new(objectstore.Transaction).Write(pg, fsckA, 5000, []byte("patched")))
	copy(a[5000:], "patched")
	hole := objid.Object(2, "", "hole")
	apply(t, s, new(objectstore.Transaction).Write(pg2, hole, 4*testAU+1, []byte("x")))
	holeData := make([]byte, 4*testAU+2)
	holeData[4*testAU+1] = 'x'
	apply(t, s, new(objectstore.Transaction).Clone(pg, fsckA, objid.Object(1, "", "a.clone")))
	gone := objid.Object(1, "", "gone")
	apply(t, s, new(objectstore.Transaction).Write(pg, gone, 0, randBytes(r, testAU)).OmapSetKeys(pg, gone, map[string][]byte{"x": nil}))
	apply(t, s, new(objectstore.Transaction).Remove(pg, gone))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return &fsckFixture{fs: fs, opts: opts, data: map[string][]byte{
		pg.String() + " a": a, pg.String() + " a.clone": a, pg.String() + " b": b, pg.String() + " big": big,
		pg2.String() + " hole": holeData, "meta osdmap.1": meta,
	}}
}

func (fx *fsckFixture) fsck(t *testing.T, fo FsckOptions) FsckReport {
	t.Helper()
	rep, err := Fsck(context.Background(), fx.opts, fo)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkData opens the store and compares every object with the model.
func (fx *fsckFixture) checkData(t *testing.T) {
	t.Helper()
	s := mustOpen(t, fx.opts)
	defer s.Close()
	ctx := context.Background()
	for key, want := range fx.data {
		cs, name, _ := strings.Cut(key, " ")
		c, err := objectstore.ParseCollectionID(cs)
		if err != nil {
			t.Fatal(err)
		}
		pool := c.Pool
		if c.Kind == objectstore.KindMeta {
			pool = -1
		}
		got, err := s.Read(ctx, c, objid.Object(pool, "", name), 0, 0)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes", key, len(got), err, len(want))
		}
	}
	checkQuiescent(t, s)
}

// edit applies direct Pebble edits to the closed store.
func (fx *fsckFixture) edit(t *testing.T, fn func(db *pebble.DB, b *pebble.Batch)) {
	t.Helper()
	db, err := openPebble(fx.opts.dbPath(), pebbleOptions(fx.opts.withDefaults()))
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	fn(db, b)
	if err := db.Apply(b, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func (fx *fsckFixture) record(t *testing.T, db *pebble.DB, c objectstore.CollectionID, o objid.ID) *format.Onode {
	t.Helper()
	v, closer, err := db.Get(format.ObjectKey(c, o))
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	sb := format.Superblock{Size: fx.opts.Size, AllocUnit: testAU, ChecksumBlock: testCB}
	rec, err := format.DecodeRecord(bytes.Clone(v), sb)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Inline {
		return rec
	}
	if rec.Units, err = loadUnits(db, rec.Nid, sb, rec.Shards); err != nil {
		t.Fatal(err)
	}
	return rec
}

// putRecord writes rec under c/o as the store would: its value, and its
// shard keys (or unit keys, for a record without shards) unless it is
// inline.
func (fx *fsckFixture) putRecord(b *pebble.Batch, c objectstore.CollectionID, o objid.ID, rec *format.Onode) {
	_ = b.Set(format.ObjectKey(c, o), rec.Encode(), nil)
	if !rec.Shards {
		for u := range rec.KeyedUnits().All() {
			_ = b.Set(format.UnitKey(rec.Nid, u.LU), format.EncodeUnit(u), nil)
		}
		return
	}
	for sh, units := range rec.KeyedUnits().Shards() {
		_ = b.Set(format.ShardKey(rec.Nid, sh), format.EncodeShard(units, sh*format.ShardUnits), nil)
	}
}

func wantKinds(t *testing.T, rep FsckReport, want map[ProblemKind]int) {
	t.Helper()
	for k, n := range want {
		if rep.Counts[k] != n {
			t.Errorf("%d problems of kind %s, want %d; problems: %v", rep.Counts[k], k, n, rep.Problems)
		}
	}
	total := 0
	for _, n := range want {
		total += n
	}
	if rep.Found != total {
		t.Errorf("found %d problems, want %d: %v", rep.Found, total, rep.Problems)
	}
}

func TestFsckClean(t *testing.T) {
	fx := newFsckFixture(t)
	for _, deep := range []bool{false, true} {
		rep := fx.fsck(t, FsckOptions{Deep: deep})
		if !rep.Clean() || rep.Found != 0 || len(rep.Problems) != 0 {
			t.Fatalf("deep=%v: problems in a clean store: %v", deep, rep.Problems)
		}
		if rep.Objects != 6 || rep.Collections != 3 || rep.OmapEntries != 4 || rep.Extents == 0 {
			t.Errorf("counts %+v", rep)
		}
		if rep.BytesUsed != rep.BytesOwned || rep.BytesUsed+rep.BytesFree != rep.Size || rep.BytesUsed == 0 {
			t.Errorf("space: used %d owned %d free %d size %d", rep.BytesUsed, rep.BytesOwned, rep.BytesFree, rep.Size)
		}
		// Deep fsck verifies the blocks that hold data: 13 each for a
		// and its clone (3 units and 100 bytes), 2 for b, 69 for big (17
		// units and a byte), 1 for the hole's byte, 8 for meta; the
		// other blocks of their units were never written.
		if deep && rep.BlocksVerified != 106 {
			t.Errorf("verified %d blocks, want 106 (of %d owned)", rep.BlocksVerified, rep.BytesOwned/testCB)
		}
		if !deep && rep.BlocksVerified != 0 {
			t.Errorf("shallow fsck verified %d blocks", rep.BlocksVerified)
		}
	}
	// Repair of a clean store changes nothing.
	if rep := fx.fsck(t, FsckOptions{Repair: true, Deep: true}); rep.Found != 0 || rep.Repaired != 0 {
		t.Fatalf("repair of a clean store: %+v", rep)
	}
	fx.checkData(t)
}

func TestFsckNoStore(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	if _, err := Fsck(context.Background(), opts, FsckOptions{}); !errors.Is(err, ErrBadSuperblock) {
		t.Fatalf("fsck of no store: %v", err)
	}
}

func TestFsckStoreInUse(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Path: dir, Size: 16 << 20, AllocUnit: testAU}
	s := mkfsOpen(t, opts)
	defer s.Close()
	if _, err := Fsck(context.Background(), opts, FsckOptions{Repair: true}); err == nil {
		t.Fatal("fsck --repair ran against an open store")
	}
}

func TestFsckLeakedSpace(t *testing.T) {
	fx := newFsckFixture(t)
	// Mark units 1000-1009 used in the bitmap: nobody maps them.
	fx.edit(t, func(db *pebble.DB, b *pebble.Batch) {
		v, closer, err := db.Get(format.BitmapKey(0))
		if err != nil {
			t.Fatal(err)
		}
		words, err := format.DecodeBitmap(v)
		closer.Close()
		if err != nil {
			t.Fatal(err)
		}
		for u := 1000; u < 1010; u++ {
			words[u/64] |= 1 << (u % 64)
		}
		_ = b.Set(format.BitmapKey(0), format.EncodeBitmap(words), nil)
	})
	rep := fx.fsck(t, FsckOptions{})
	wantKinds(t, rep, map[ProblemKind]int{ProblemLeaked: 1})
	p := rep.Problems[0]
	if p.DevOffset != 1000*testAU || p.Length != 10*testAU || p.Repaired {
		t.Errorf("leak reported as %+v", p)
	}
	if rep.BytesUsed != rep.BytesOwned+10*testAU {
		t.Errorf("used %d owned %d", rep.BytesUsed, rep.BytesOwned)
	}
	rep = fx.fsck(t, FsckOptions{Repair: true})
	if rep.Repaired != 1 || !rep.Clean() || !rep.Problems[0].Repaired {
		t.Fatalf("repair: %+v", rep)
	}
	if rep := fx.fsck(t, FsckOptions{Deep: true}); rep.Found != 0 {
		t.Fatalf("problems after repair: %v", rep.Problems)
	}
	fx.checkData(t)
}

func TestFsckOwnedFree(t *testing.T) {
	fx := newFsckFixture(t)
	var dev uint64
	fx.edit(t, func(db *pebble.DB, b *pebble.Batch) {
		dev = fx.record(t, db, pg, fsckB).Units.At(0).Dev
		v, closer, _ := db.Get(format.BitmapKey(0))
		words, _ := format.DecodeBitmap(v)
		closer.Close()
		u := dev / testAU
		words[u/64] &^= 1 << (u % 64)
		_ = b.Set(format.BitmapKey(0), format.EncodeBitmap(words), nil)
	})
	rep := fx.fsck(t, FsckOptions{})
	wantKinds(t, rep, map[ProblemKind]int{ProblemOwnedFree: 1})
	if p := rep.Problems[0]; p.Object != fsckB.String() || p.Collection != pg.String() || p.DevOffset != dev || p.Offset != 0 {
		t.Errorf("reported as %+v", p)
	}
	if rep := fx.fsck(t, FsckOptions{Repair: true}); !rep.Clean() || rep.Repaired != 1 {
		t.Fatalf("repair: %+v", rep)
	}
	if rep := fx.fsck(t, FsckOptions{Deep: true}); rep.Found != 0 {
		t.Fatalf("problems after repair: %v", rep.Problems)
	}
	fx.checkData(t)
}

func TestFsckChecksum(t *testing.T) {
	fx := newFsckFixture(t)
	var dev uint64
	fx.edit(t, func(db *pebble.DB, _ *pebble.Batch) {
		dev = fx.record(t, db, pg, fsckA).Units.At(1).Dev
	})
	// Flip a byte in the third checksum block of a's second unit.
	f, err := fx.fs.OpenReadWrite(fx.opts.devicePath(), vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	off := int64(dev + 2*testCB + 9)
	b := make([]byte, 1)
	_, _ = f.ReadAt(b, off)
	b[0] ^= 1
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	// Shallow fsck does not read data.
	if rep := fx.fsck(t, FsckOptions{}); rep.Found != 0 {
		t.Fatalf("shallow fsck: %v", rep.Problems)
	}
	rep := fx.fsck(t, FsckOptions{Deep: true})
	wantKinds(t, rep, map[ProblemKind]int{ProblemChecksum: 1})
	p := rep.Problems[0]
	if p.Object != fsckA.String() || p.Offset != testAU+2*testCB || p.DevOffset != dev+2*testCB || p.Length != testCB {
		t.Errorf("reported as %+v", p)
	}
	// Repair does not touch object data: still reported, not repaired.
	rep = fx.fsck(t, FsckOptions{Deep: true, Repair: true})
	if rep.Clean() || rep.Repaired != 0 || rep.Problems[0].Repaired {
		t.Fatalf("repair claims to fix a checksum: %+v", rep)
	}
	if rep := fx.fsck(t, FsckOptions{Deep: true}); rep.Counts[ProblemChecksum] != 1 {
		t.Fatalf("after repair: %v", rep.Problems)
	}
}

func TestFsckOrphanOmap(t *testing.T) {
	fx := newFsckFixture(t)
	fx.edit(t, func(_ *pebble.DB, b *pebble.Batch) {
		_ = b.Set(format.OmapKey(999, "k1"), []byte("v"), nil)
		_ = b.Set(format.OmapKey(999, "k2"), []byte("v"), nil)
		_ = b.Set(format.OmapKey(1000, "k"), []byte("v"), nil)
	})
	rep := fx.fsck(t, FsckOptions{})
	wantKinds(t, rep, map[ProblemKind]int{ProblemOrphanOmap: 2})
	if rep.OmapEntries != 7 || !strings.Contains(rep.Problems[0].Detail, "2 omap entries of node id 999") {
		t.Errorf("omap entries %d, problems %v", rep.OmapEntries, rep.Problems)
	}
	if rep := fx.fsck(t, FsckOptions{Repair: true}); !rep.Clean() || rep.Repaired != 2 {
		t.Fatalf("repair: %+v", rep)
	}
	rep = fx.fsck(t, FsckOptions{Deep: true})
	if rep.Found != 0 || rep.OmapEntries != 4 {
		t.Fatalf("after repair: %d entries, %v", rep.OmapEntries, rep.Problems)
	}
	fx.checkData(t)
	s := mustOpen(t, fx.opts)
	defer s.Close()
	kv, err := s.OmapGetValues(context.Background(), pg, fsckA, []string{"k1", "k2"})
	if err != nil || len(kv) != 2 {
		t.Fatalf("omap of a after repair: %v, %v", kv, err)
	}
}

func TestFsckPoolStats(t *testing.T) {
	fx := newFsckFixture(t)
	fx.edit(t, func(_ *pebble.DB, b *pebble.Batch) {
		_ = b.Set(format.PoolStatsKey(1), format.EncodeUvarint(12345), nil)
		_ = b.Set(format.PoolStatsKey(9), format.EncodeUvarint(1), nil)
	})
	rep := fx.fsck(t, FsckOptions{})
	wantKinds(t, rep, map[ProblemKind]int{ProblemPoolStats: 2})
	if rep := fx.fsck(t, FsckOptions{Repair: true}); !rep.Clean() {
		t.Fatalf("repair: %+v", rep)
	}
	if rep := fx.fsck(t, FsckOptions{}); rep.Found != 0 {
		t.Fatalf("after repair: %v", rep.Problems)
	}
	fx.checkData(t)
}

func TestFsckOverlapAndNids(t *testing.T) {
	fx := newFsckFixture(t)
	var dev uint64
	var aUnits int
	dup := objid.Object(1, "", "dup")
	fx.edit(t, func(db *pebble.DB, b *pebble.Batch) {
		ra := fx.record(t, db, pg, fsckA)
		rb := fx.record(t, db, pg, fsckB)
		// b's first unit now points at a's first unit, and b's own unit
		// becomes leaked.
		dev, aUnits = ra.Units.At(0).Dev, ra.Units.Len()
		u := rb.Units.At(0)
		u.Dev = dev
		rb.Units.Set(u)
		fx.putRecord(b, pg, fsckB, rb)
		// A new record takes a's node id and units.
		fx.putRecord(b, pg, dup, ra)
	})
	rep := fx.fsck(t, FsckOptions{Deep: true})
	// Every unit of a is mapped twice (by a and dup); b's checksums do
	// not match a's data: one per block of b's 5,000 bytes; dup's bytes
	// count against the pool's counter.
	wantKinds(t, rep, map[ProblemKind]int{ProblemOverlap: aUnits, ProblemLeaked: 1, ProblemDuplicateNid: 1, ProblemChecksum: (5000 + testCB - 1) / testCB, ProblemPoolStats: 1})
	found := false
	for _, p := range rep.Problems {
		if p.Kind == ProblemOverlap && p.DevOffset == dev {
			found = strings.Contains(p.Detail, fsckA.String()) && strings.Contains(p.Detail, fsckB.String()) && strings.Contains(p.Detail, dup.String())
		}
	}
	if !found {
		t.Errorf("overlap on a's first unit not reported naming a, b and dup: %v", rep.Problems)
	}
	// Repair frees b's old unit and fixes the counter but leaves the
	// overlaps.
	rep = fx.fsck(t, FsckOptions{Repair: true})
	if rep.Repaired != 2 || rep.Clean() {
		t.Fatalf("repair: %+v", rep)
	}
	rep = fx.fsck(t, FsckOptions{})
	wantKinds(t, rep, map[ProblemKind]int{ProblemOverlap: aUnits, ProblemDuplicateNid: 1})
}

func TestFsckUndecodableRecordBlocksFreeing(t *testing.T) {
	fx := newFsckFixture(t)
	fx.edit(t, func(_ *pebble.DB, b *pebble.Batch) {
		_ = b.Set(format.ObjectKey(pg, fsckBig), []byte("garbage"), nil)
		_ = b.Set(format.OmapKey(999, "k"), nil, nil)
		_ = b.Set([]byte("Zunknown"), nil, nil)
	})
	rep := fx.fsck(t, FsckOptions{})
	// big's units look leaked and its unit keys orphaned, but its
	// record may still name them.
	wantKinds(t, rep, map[ProblemKind]int{ProblemUndecodable: 1, ProblemLeaked: 1, ProblemOrphanOmap: 1, ProblemOrphanUnits: 1, ProblemUnknownKey: 1})
	rep = fx.fsck(t, FsckOptions{Repair: true})
	if rep.Repaired != 0 || rep.RepairSkipped == "" {
		t.Fatalf("repair with an undecodable record: %+v", rep)
	}
	if rep := fx.fsck(t, FsckOptions{}); rep.Counts[ProblemLeaked] != 1 || rep.Counts[ProblemOrphanOmap] != 1 || rep.Counts[ProblemOrphanUnits] != 1 {
		t.Fatalf("repair freed space or omap it could not account for: %v", rep.Problems)
	}
}

func TestFsckDeferred(t *testing.T) {
	fx := newFsckFixture(t)
	// Leave a deferred write unapplied, as a crash between commit and
	// apply would: the file holds the old bytes, the record the new
	// checksums, and a deep fsck must lay the 'D' key over the file.
	skip := fx.opts
	skip.testSkipDeferredApply = true
	s := mustOpen(t, skip)
	apply(t, s, new(objectstore.Transaction).Write(pg, fsckB, 10, []byte("deferred")))
	copy(fx.data[pg.String()+" b"][10:], "deferred")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep := fx.fsck(t, FsckOptions{Deep: true})
	if rep.Found != 0 || rep.PendingDeferred != 1 {
		t.Fatalf("pending deferred write: %d pending, %v", rep.PendingDeferred, rep.Problems)
	}
	fx.edit(t, func(_ *pebble.DB, b *pebble.Batch) {
		_ = b.Set(format.DeferredKey(1<<40, 3), []byte("junk"), nil)
		_ = b.Set([]byte{format.PrefixDeferred, 1, 2}, nil, nil)
	})
	rep = fx.fsck(t, FsckOptions{Deep: true})
	wantKinds(t, rep, map[ProblemKind]int{ProblemBadDeferred: 2})
}

func TestFsckBitmapBeyondDevice(t *testing.T) {
	fx := newFsckFixture(t)
	fx.edit(t, func(_ *pebble.DB, b *pebble.Batch) {
		_ = b.Set(format.BitmapKey(5), format.EncodeBitmap([]uint64{1}), nil)
	})
	if _, err := Open(fx.opts); err == nil {
		t.Fatal("Open accepted a bitmap beyond the device")
	}
	rep := fx.fsck(t, FsckOptions{})
	wantKinds(t, rep, map[ProblemKind]int{ProblemBitmapBeyond: 1})
	if rep := fx.fsck(t, FsckOptions{Repair: true}); !rep.Clean() {
		t.Fatalf("repair: %+v", rep)
	}
	if rep := fx.fsck(t, FsckOptions{}); rep.Found != 0 {
		t.Fatalf("after repair: %v", rep.Problems)
	}
	fx.checkData(t)
}

func TestLayout(t *testing.T) {
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	o := objid.Object(1, "", "x")
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg).Write(pg, o, 0, make([]byte, 2*testAU)).Write(pg, o, 5*testAU, []byte("y")))
	l, err := s.Layout(context.Background(), pg, o)
	if err != nil {
		t.Fatal(err)
	}
	if l.Size != 5*testAU+1 || len(l.Extents) != 2 || l.Extents[0].Length != 2*testAU || len(l.Extents[0].Checksums) != 2*testAU/testCB ||
		l.Extents[1].Offset != 5*testAU || len(l.Pages) != 2 || l.ChecksumBlock != testCB {
		t.Fatalf("layout %+v", l)
	}
	if _, err := s.Layout(context.Background(), pg, objid.Object(1, "", "nope")); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("layout of a missing object: %v", err)
	}
}

// Unit keys under the node id of a record that keeps its units inline
// are never read: fsck reports them as orphans and repair deletes them
// without touching the object.
func TestFsckUnitKeysOfAnInlineRecord(t *testing.T) {
	fx := newFsckFixture(t)
	fx.edit(t, func(db *pebble.DB, b *pebble.Batch) {
		ra := fx.record(t, db, pg, fsckA)
		if !ra.Inline {
			t.Fatalf("a keeps its %d units under keys", ra.Units.Len())
		}
		_ = b.Set(format.UnitKey(ra.Nid, 0), format.EncodeUnit(ra.Units.At(0)), nil)
	})
	rep := fx.fsck(t, FsckOptions{})
	wantKinds(t, rep, map[ProblemKind]int{ProblemOrphanUnits: 1})
	if !strings.Contains(rep.Problems[0].Detail, "inline") {
		t.Errorf("problem does not say the object keeps its units inline: %v", rep.Problems[0])
	}
	if rep := fx.fsck(t, FsckOptions{Repair: true}); !rep.Clean() {
		t.Fatalf("repair: %+v", rep)
	}
	if rep := fx.fsck(t, FsckOptions{Deep: true}); rep.Found != 0 {
		t.Fatalf("after repair: %v", rep.Problems)
	}
	fx.checkData(t)
}

// Unit keys under a sharded record, and shard keys of a node id no
// object has, are never read: fsck reports both as orphans, and repair
// deletes them and leaves the sharded object whole.
func TestFsckUnitKeysBesideShards(t *testing.T) {
	fx := newFsckFixture(t)
	var orphanNid uint64
	fx.edit(t, func(db *pebble.DB, b *pebble.Batch) {
		big := fx.record(t, db, pg, fsckBig)
		if !big.Shards {
			t.Fatalf("big keeps its %d units inline %v, not in shards", big.Units.Len(), big.Inline)
		}
		_ = b.Set(format.UnitKey(big.Nid, 0), format.EncodeUnit(big.Units.At(0)), nil)
		orphanNid = big.Nid + 1000
		_ = b.Set(format.ShardKey(orphanNid, 0), format.EncodeShard([]format.Unit{big.Units.At(0)}, 0), nil)
	})
	rep := fx.fsck(t, FsckOptions{})
	wantKinds(t, rep, map[ProblemKind]int{ProblemOrphanUnits: 2})
	details := rep.Problems[0].Detail + " | " + rep.Problems[1].Detail
	if !strings.Contains(details, "elsewhere") || !strings.Contains(details, fmt.Sprint(orphanNid)) {
		t.Errorf("problems do not name the sharded object's stray unit key and the orphaned node: %s", details)
	}
	if rep := fx.fsck(t, FsckOptions{Repair: true}); !rep.Clean() {
		t.Fatalf("repair: %+v", rep)
	}
	if rep := fx.fsck(t, FsckOptions{Deep: true}); rep.Found != 0 {
		t.Fatalf("after repair: %v", rep.Problems)
	}
	fx.checkData(t)
}

package blockstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

const testAU, testCB = 16 << 10, 4 << 10

func testOptions(fs vfs.FS) Options {
	return Options{Path: "/store", FS: fs, Size: 64 << 20, AllocUnit: testAU, ChecksumBlock: testCB, CacheBytes: 1 << 20}
}

func mkfsOpen(t *testing.T, opts Options) *Store {
	t.Helper()
	if err := Mkfs(opts); err != nil {
		t.Fatal(err)
	}
	return mustOpen(t, opts)
}

func mustOpen(t *testing.T, opts Options) *Store {
	t.Helper()
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func apply(t *testing.T, s *Store, tx *objectstore.Transaction) {
	t.Helper()
	if err := objectstore.Apply(context.Background(), s, tx); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, s *Store, c objectstore.CollectionID, o objid.ID) []byte {
	t.Helper()
	b, err := s.Read(context.Background(), c, o, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var pg = objectstore.PGCollection(1, 0)

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestWriteReadOverwrite(t *testing.T) {
	ctx := context.Background()
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	o := objid.Object(1, "", "obj")
	model := randBytes(r, 3*testAU+100)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg).Write(pg, o, 0, model))
	if got := read(t, s, pg, o); !bytes.Equal(got, model) {
		t.Fatal("read after write differs")
	}
	// Small unaligned overwrite: deferred.
	patch := randBytes(r, 10)
	before := s.alloc.Free()
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 5000, patch))
	copy(model[5000:], patch)
	if got := read(t, s, pg, o); !bytes.Equal(got, model) {
		t.Fatal("read after deferred overwrite differs")
	}
	if s.alloc.Free() != before {
		t.Fatalf("deferred overwrite changed free space %d -> %d", before, s.alloc.Free())
	}
	// Small whole-unit overwrite (up to overwriteInPlaceMax): deferred,
	// in place, nothing allocated or freed.
	rec, _ := s.loadRecord(string(format.ObjectKey(pg, o)))
	oldDev := rec.Units.At(1).Dev
	full := randBytes(r, testAU)
	apply(t, s, new(objectstore.Transaction).Write(pg, o, testAU, full))
	copy(model[testAU:], full)
	rec, _ = s.loadRecord(string(format.ObjectKey(pg, o)))
	if rec.Units.At(1).Dev != oldDev {
		t.Fatal("small whole-unit overwrite moved the unit")
	}
	if s.alloc.Free() != before {
		t.Fatalf("small whole-unit overwrite changed free space %d -> %d", before, s.alloc.Free())
	}
	if got := read(t, s, pg, o); !bytes.Equal(got, model) {
		t.Fatal("read after in-place overwrite differs")
	}
	// Larger whole-unit overwrite: copy-on-write to new space, old freed.
	big := randBytes(r, 3*testAU)
	if len(big) <= overwriteInPlaceMax {
		t.Fatalf("%d bytes would be written in place", len(big))
	}
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, big))
	copy(model, big)
	rec, _ = s.loadRecord(string(format.ObjectKey(pg, o)))
	if rec.Units.At(1).Dev == oldDev {
		t.Fatal("whole-unit overwrite reused the old unit")
	}
	if got := read(t, s, pg, o); !bytes.Equal(got, model) {
		t.Fatal("read after COW overwrite differs")
	}
	// Partial reads, holes, past EOF.
	got, err := s.Read(ctx, pg, o, 100, 7000)
	if err != nil || !bytes.Equal(got, model[100:7100]) {
		t.Fatalf("partial read: %v", err)
	}
	if got, err := s.Read(ctx, pg, o, uint64(len(model))+5, 10); err != nil || len(got) != 0 {
		t.Fatalf("read past EOF = %d bytes, %v", len(got), err)
	}
	hole := objid.Object(1, "", "hole")
	apply(t, s, new(objectstore.Transaction).Write(pg, hole, 5*testAU+3, []byte("x")))
	got = read(t, s, pg, hole)
	want := make([]byte, 5*testAU+4)
	want[5*testAU+3] = 'x'
	if !bytes.Equal(got, want) {
		t.Fatal("hole does not read as zeros")
	}
	ext, _ := s.ExtentMap(ctx, pg, hole, 0, 0)
	if len(ext) != 1 || ext[0].Offset != 5*testAU {
		t.Fatalf("extent map %v", ext)
	}
	// Truncate down then up reads zeros.
	apply(t, s, new(objectstore.Transaction).Truncate(pg, o, 2000).Truncate(pg, o, 9000))
	want = append(append([]byte{}, model[:2000]...), make([]byte, 7000)...)
	if got := read(t, s, pg, o); !bytes.Equal(got, want) {
		t.Fatal("truncate down/up differs")
	}
	// Zero in the middle of a unit and whole units.
	apply(t, s, new(objectstore.Transaction).Zero(pg, o, 10, 20))
	clear(want[10:30])
	if got := read(t, s, pg, o); !bytes.Equal(got, want) {
		t.Fatal("zero differs")
	}
	checkQuiescent(t, s)
}

func TestSemantics(t *testing.T) {
	ctx := context.Background()
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	o := objid.Object(1, "", "a")
	b := objid.Object(1, "", "b")
	if _, err := s.Queue(ctx, new(objectstore.Transaction).Touch(pg, o)); !errors.Is(err, objectstore.ErrCollectionNotFound) {
		t.Fatalf("touch in missing collection: %v", err)
	}
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	if _, err := s.Queue(ctx, new(objectstore.Transaction).CreateCollection(pg)); !errors.Is(err, objectstore.ErrExists) {
		t.Fatalf("create existing: %v", err)
	}
	if _, err := s.Queue(ctx, new(objectstore.Transaction).Remove(pg, o)); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("remove missing: %v", err)
	}
	free := s.alloc.Free()
	// A failing transaction changes nothing and returns its space.
	if _, err := s.Queue(ctx, new(objectstore.Transaction).Write(pg, o, 0, make([]byte, 3*testAU)).Remove(pg, b)); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
	if s.alloc.Free() != free {
		t.Fatal("failed transaction kept its allocation")
	}
	if _, err := s.Stat(ctx, pg, o); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("failed transaction left an object: %v", err)
	}
	tx := new(objectstore.Transaction).
		Write(pg, o, 0, []byte("hello world")).
		SetAttr(pg, o, "k", []byte("v")).
		OmapSetHeader(pg, o, []byte("hdr")).
		OmapSetKeys(pg, o, map[string][]byte{"a": []byte("1"), "b": []byte("2"), "c": []byte("3")})
	apply(t, s, tx)
	apply(t, s, new(objectstore.Transaction).Clone(pg, o, b))
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, []byte("HELLO")).OmapRmKeys(pg, o, "a"))
	if got := read(t, s, pg, b); string(got) != "hello world" {
		t.Fatalf("clone data %q", got)
	}
	kvs, more, err := s.OmapIterate(ctx, pg, b, "", "", 0)
	if err != nil || more || len(kvs) != 3 {
		t.Fatalf("clone omap %v %v %v", kvs, more, err)
	}
	if v, _ := s.GetAttr(ctx, pg, b, "k"); string(v) != "v" {
		t.Fatal("clone attr")
	}
	// Move replaces the destination and carries the omap.
	pg2 := objectstore.PGCollection(1, 1)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg2).Move(pg, o, pg2, b))
	if _, err := s.Stat(ctx, pg, o); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatal("move left the source")
	}
	kvs, _, _ = s.OmapIterate(ctx, pg2, b, "", "", 0)
	if len(kvs) != 2 || kvs[0].Key != "b" {
		t.Fatalf("moved omap %v", kvs)
	}
	if h, _ := s.OmapGetHeader(ctx, pg2, b); string(h) != "hdr" {
		t.Fatal("moved header")
	}
	kvs, more, _ = s.OmapIterate(ctx, pg, b, "a", "", 1)
	if len(kvs) != 1 || kvs[0].Key != "b" || !more {
		t.Fatalf("omap iterate after a, limit 1: %v %v", kvs, more)
	}
	if _, err := s.Queue(ctx, new(objectstore.Transaction).RemoveCollection(pg)); !errors.Is(err, objectstore.ErrNotEmpty) {
		t.Fatalf("remove non-empty collection: %v", err)
	}
	apply(t, s, new(objectstore.Transaction).Remove(pg, b).RemoveCollection(pg))
	if ok, _ := s.CollectionExists(ctx, pg); ok {
		t.Fatal("collection still exists")
	}
	st, _ := s.StatFS(ctx)
	if st.PoolStored[1] != 11 || st.Stored != 11 {
		t.Fatalf("statfs %+v", st)
	}
	checkQuiescent(t, s)
}

func TestListObjectsOrder(t *testing.T) {
	ctx := context.Background()
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	var ids []objid.ID
	tx := new(objectstore.Transaction)
	for i := range 50 {
		o := objid.New(1, fmt.Sprint("ns", i%3), "", fmt.Sprint("o", i), objid.NoSnap)
		ids = append(ids, o)
		tx.Touch(pg, o)
	}
	apply(t, s, tx)
	var got []objid.ID
	cur := objid.ID{}
	for {
		objs, next, err := s.ListObjects(ctx, pg, cur, 7)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, objs...)
		if next.IsMax() {
			break
		}
		cur = next
	}
	if len(got) != len(ids) {
		t.Fatalf("listed %d of %d", len(got), len(ids))
	}
	for i := 1; i < len(got); i++ {
		if objid.Compare(got[i-1], got[i]) >= 0 {
			t.Fatalf("out of order at %d: %v %v", i, got[i-1], got[i])
		}
	}
}

func TestReopen(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	s := mkfsOpen(t, opts)
	r := rand.New(rand.NewPCG(3, 4))
	o := objid.Object(1, "", "x")
	data := randBytes(r, 2*testAU+77)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg).Write(pg, o, 0, data).SetAttr(pg, o, "a", []byte("b")).
		OmapSetKeys(pg, o, map[string][]byte{"k": []byte("v")}))
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 100, []byte("patch")))
	copy(data[100:], "patch")
	free := s.alloc.Free()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, objectstore.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	s = mustOpen(t, opts)
	defer s.Close()
	if got := read(t, s, pg, o); !bytes.Equal(got, data) {
		t.Fatal("data after reopen differs")
	}
	if s.alloc.Free() != free {
		t.Fatalf("free space after reopen %d, want %d", s.alloc.Free(), free)
	}
	v, err := s.OmapGetValues(context.Background(), pg, o, []string{"k", "z"})
	if err != nil || string(v["k"]) != "v" || len(v) != 1 {
		t.Fatalf("omap after reopen %v %v", v, err)
	}
}

func TestChecksumMismatch(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	s := mkfsOpen(t, opts)
	o := objid.Object(1, "", "x")
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg).Write(pg, o, 0, bytes.Repeat([]byte("a"), 3*testCB)))
	rec, _ := s.loadRecord(string(format.ObjectKey(pg, o)))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Flip a byte in the second checksum block through the FS.
	f, err := fs.OpenReadWrite(opts.devicePath(), vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	off := int64(rec.Units.At(0).Dev + testCB + 17)
	b := make([]byte, 1)
	_, _ = f.ReadAt(b, off)
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	s = mustOpen(t, opts)
	defer s.Close()
	ctx := context.Background()
	if got, err := s.Read(ctx, pg, o, 0, testCB); err != nil || len(got) != testCB {
		t.Fatalf("clean block: %v", err)
	}
	got, err := s.Read(ctx, pg, o, 0, 0)
	if !errors.Is(err, objectstore.ErrCorrupt) || got != nil {
		t.Fatalf("want ErrCorrupt and no bytes, got %d bytes, %v", len(got), err)
	}
	for _, want := range []string{pg.String(), o.String(), fmt.Sprint("offset ", testCB)} {
		if !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// A deferred overwrite of the bad block must not launder it.
	if _, err := s.Queue(ctx, new(objectstore.Transaction).Write(pg, o, testCB+1, []byte("z"))); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Fatalf("overwrite of a corrupt block: %v", err)
	}
}

func TestDeferredReplay(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	s := mkfsOpen(t, opts)
	o := objid.Object(1, "", "x")
	data := bytes.Repeat([]byte("a"), 2*testAU)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg).Write(pg, o, 0, data))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	skip := opts
	skip.testSkipDeferredApply = true
	s = mustOpen(t, skip)
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 10, []byte("deferred")))
	copy(data[10:], "deferred")
	if got := read(t, s, pg, o); !bytes.Equal(got, data) {
		t.Fatal("unapplied deferred write not visible to readers")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The file still holds the old bytes; the record the new checksums.
	s = mustOpen(t, opts)
	if got := read(t, s, pg, o); !bytes.Equal(got, data) {
		t.Fatal("deferred write not replayed")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	defer s.Close()
	if got := read(t, s, pg, o); !bytes.Equal(got, data) {
		t.Fatal("second open differs")
	}
}

// checkQuiescent checks the invariants of an idle store: the allocator
// and the persisted bitmap agree, nothing is left in the data overlay,
// and the cache stays within budget.
func checkQuiescent(t *testing.T, s *Store) {
	t.Helper()
	// An empty transaction committing means the queue has been taken;
	// then wait for the pipeline to finish every group.
	ctx := context.Background()
	if err := objectstore.Apply(ctx, s, new(objectstore.Transaction)); err != nil {
		t.Fatalf("empty transaction: %v", err)
	}
	s.prepMu.Lock()
	seq := s.nextSeq
	s.prepMu.Unlock()
	if err := s.pipe.waitFinished(ctx, seq); err != nil {
		t.Fatal(err)
	}
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	s.dropApplied()
	if used := s.usedUnits() * s.sb.AllocUnit; used != s.sb.Size-s.alloc.Free() {
		t.Errorf("bitmap marks %d bytes used, allocator %d", used, s.sb.Size-s.alloc.Free())
	}
	if n := s.data.len(); n != 0 && !s.opts.testSkipDeferredApply {
		t.Errorf("%d blocks left in the data overlay", n)
	}
	if len(s.overlay) != 0 {
		t.Errorf("%d records left in the prepare overlay", len(s.overlay))
	}
	if u := s.cache.usedBytes(); u > s.opts.CacheBytes {
		t.Errorf("cache holds %d bytes, budget %d", u, s.opts.CacheBytes)
	}
}

// A unit mapped without a written block would leave the data file short
// of it, and Open would take the store for truncated: a zero-length
// write maps no unit, and a clone leaves units without data unmapped.
func TestReopenAfterWritesWithoutData(t *testing.T) {
	for name, txns := range map[string][]*objectstore.Transaction{
		"empty write": {new(objectstore.Transaction).CreateCollection(pg).Write(pg, objid.Object(1, "", "e"), 4096, nil)},
		"clone of zeroed unit": {
			new(objectstore.Transaction).CreateCollection(pg).Write(pg, objid.Object(1, "", "z"), 0, bytes.Repeat([]byte("z"), 4096)),
			new(objectstore.Transaction).Zero(pg, objid.Object(1, "", "z"), 0, 4096),
			new(objectstore.Transaction).Clone(pg, objid.Object(1, "", "z"), objid.Object(1, "", "z2")),
		},
	} {
		t.Run(name, func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			s := mkfsOpen(t, opts)
			for _, tx := range txns {
				apply(t, s, tx)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = mustOpen(t, opts)
			defer s.Close()
			for _, o := range []string{"e", "z", "z2"} {
				info, err := s.Stat(context.Background(), pg, objid.Object(1, "", o))
				if errors.Is(err, objectstore.ErrNotFound) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := read(t, s, pg, objid.Object(1, "", o)); !bytes.Equal(got, make([]byte, info.Size)) {
					t.Errorf("%s: %d bytes, not %d zeros", o, len(got), info.Size)
				}
			}
		})
	}
}

// batchOps describes b's records as "kind key-seq" strings, for the
// deferred keys' deletions.
func batchOps(t *testing.T, b *pebble.Batch) []string {
	t.Helper()
	var ops []string
	r := b.Reader()
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ops
		}
		switch kind {
		case pebble.InternalKeyKindDelete:
			ops = append(ops, fmt.Sprintf("del %d/%d", format.DeferredSeq(k), binary.BigEndian.Uint64(k[9:])))
		case pebble.InternalKeyKindRangeDelete:
			ops = append(ops, fmt.Sprintf("range %d-%d", format.DeferredSeq(k), format.DeferredSeq(v)))
		default:
			ops = append(ops, fmt.Sprint("kind ", kind))
		}
	}
}

// The applied deferred writes' keys go in one range deletion, from the
// first's transaction to past the last's; keys out of commit order go
// one by one.
func TestDeleteAppliedDeferred(t *testing.T) {
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	del := func(keys ...[]byte) []string {
		s.pipe.deferredMu.Lock()
		defer s.pipe.deferredMu.Unlock()
		s.pipe.appliedDeferred = append(s.pipe.appliedDeferred[:0], keys...)
		b := s.db.NewBatch()
		defer b.Close()
		s.pipe.deleteAppliedLocked(b)
		if len(s.pipe.appliedDeferred) != 0 {
			t.Fatal("applied keys not forgotten")
		}
		return batchOps(t, b)
	}
	for _, c := range []struct {
		keys [][]byte
		want []string
	}{
		{[][]byte{format.DeferredKey(5, 4096), format.DeferredKey(5, 0), format.DeferredKey(9, 8192)}, []string{"range 5-10"}},
		{nil, nil},
		{[][]byte{format.DeferredKey(10, 0), format.DeferredKey(12, 0)}, []string{"range 10-13"}},
		// Behind the last range, or out of order: one by one.
		{[][]byte{format.DeferredKey(11, 0)}, []string{"del 11/0"}},
		{[][]byte{format.DeferredKey(14, 0), format.DeferredKey(13, 4096)}, []string{"del 14/0", "del 13/4096"}},
	} {
		if got := del(c.keys...); !slices.Equal(got, c.want) {
			t.Errorf("deleting %d keys: %v, want %v", len(c.keys), got, c.want)
		}
	}
}

// Deferred writes, more than one data sync's worth, leave no 'D' key
// behind once the store closes, and their data reads back after it.
func TestDeferredKeysGone(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	s := mkfsOpen(t, opts)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	const n = 3*maxUnsyncedDeferred + 10
	for i := range n {
		o := objid.Object(1, "", fmt.Sprint("o", i))
		apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, bytes.Repeat([]byte{byte(i)}, 100)))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	defer s.Close()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{format.PrefixDeferred}, UpperBound: []byte{format.PrefixDeferred + 1}})
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for it.First(); it.Valid(); it.Next() {
		left++
	}
	_ = it.Close()
	if left != 0 {
		t.Errorf("%d deferred keys left after close", left)
	}
	for i := range n {
		o := objid.Object(1, "", fmt.Sprint("o", i))
		if got := read(t, s, pg, o); !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, 100)) {
			t.Fatalf("object %d reads back wrong", i)
		}
	}
}

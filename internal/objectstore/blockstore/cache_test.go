package blockstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// TestRecordCacheAccounting fills the record cache with records shaped
// like the 1,000,000-object benchmark's (one unit, one attribute), kept
// encoded as the store keeps them or decoded, and like a 4 MiB object's
// (64 units of 16 checksums), and checks that what the cache counts
// against its budget is close to the Go heap the entries really hold:
// an undercount lets the cache grow past CacheBytes.
//
// It measures the whole process's heap, so it runs in a child process of
// its own: goroutines left by other tests (a store's background work)
// allocating meanwhile would count as the cache's.
func TestRecordCacheAccounting(t *testing.T) {
	const child = "CUTTLE_TEST_CACHE_ACCOUNTING_CHILD"
	if os.Getenv(child) == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestRecordCacheAccounting$", "-test.v")
		cmd.Env = append(os.Environ(), child+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("child process:\n%s", out)
		if err != nil {
			t.Fatalf("the measurement in a child process failed: %v", err)
		}
		return
	}
	shapes := []struct {
		name        string
		units, sums int
		attr        int
		inline      bool
	}{
		{"small", 1, 1, 64, true},
		{"small-decoded", 1, 1, 64, false},
		{"4MiB", 64, 16, 0, false},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			const n = 20000
			c := newRecordCache(1<<40, nil)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := range n {
				rec := &format.Onode{Nid: uint64(i), Size: 1024, Pages: []format.Span{{Off: 0, End: 4096}}}
				if sh.attr > 0 {
					rec.Attrs = format.AttrList{{Name: "_", Value: make([]byte, sh.attr)}}
				}
				for u := range sh.units {
					rec.Units.Set(format.MakeUnit(uint64(u), uint64(u)<<16, make([]uint32, sh.sums)))
				}
				if sh.inline {
					rec.Inline = true
					rec.Enc = rec.Encode()
					rec = &format.Onode{Inline: true, Enc: rec.Enc} // only enc stays
				}
				c.put(string(format.ObjectKey(pg, objid.Object(1, "", fmt.Sprintf("benchmark_data_host_4242_object%d", i)))), rec)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			real := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			counted := float64(c.usedBytes())
			t.Logf("%s: %.0f bytes a record on the heap, %.0f counted", sh.name, real/n, counted/n)
			if counted < 0.8*real || counted > 1.5*real {
				t.Errorf("%s: the cache counts %.0f bytes a record, the heap holds %.0f", sh.name, counted/n, real/n)
			}
			runtime.KeepAlive(c)
		})
	}
}

// A lookup that finds no record is remembered: a new object's first write
// (its stat on the primary, then its transaction) goes to Pebble once, and
// the record the write makes, or its removal, replaces what was
// remembered.
func TestRecordCacheRemembersAbsence(t *testing.T) {
	ctx := context.Background()
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	o := objid.Object(1, "", "new")
	// Lookups past the cache: to Pebble, or answered by the key filter
	// if its first build has finished.
	loads := func() uint64 { return s.statRecordLoads.Load() + s.statFilterSkips.Load() }
	start := loads()
	for range 2 {
		if _, err := s.Stat(ctx, pg, o); !errors.Is(err, objectstore.ErrNotFound) {
			t.Fatalf("stat of a new object: %v, want not found", err)
		}
	}
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, []byte("hello")))
	if got := loads() - start; got != 1 {
		t.Fatalf("two stats and a create looked the record up past the cache %d times, want 1", got)
	}
	if st, err := s.Stat(ctx, pg, o); err != nil || st.Size != 5 {
		t.Fatalf("stat after the create: %+v, %v", st, err)
	}
	apply(t, s, new(objectstore.Transaction).Remove(pg, o))
	if _, err := s.Stat(ctx, pg, o); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("stat after the removal: %v, want not found", err)
	}
	if got := loads() - start; got != 1 {
		t.Fatalf("Pebble lookups %d after the removal, want still 1", got)
	}
}

// CacheStats counts a first lookup as a miss and the next as a hit, and
// reports what the cache holds.
func TestCacheStats(t *testing.T) {
	ctx := context.Background()
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg).Write(pg, objid.Object(1, "", "a"), 0, []byte("a")))
	before := s.CacheStats()
	o := objid.Object(1, "", "absent")
	for range 2 {
		if _, err := s.Stat(ctx, pg, o); !errors.Is(err, objectstore.ErrNotFound) {
			t.Fatal(err)
		}
	}
	after := s.CacheStats()
	if after.Misses-before.Misses != 1 || after.Hits-before.Hits != 1 {
		t.Errorf("two stats: %d misses and %d hits, want 1 and 1", after.Misses-before.Misses, after.Hits-before.Hits)
	}
	if after.Records != before.Records+1 || after.Bytes <= before.Bytes {
		t.Errorf("cache holds %d records in %d bytes after remembering one more than %d in %d", after.Records, after.Bytes, before.Records, before.Bytes)
	}
}

// The cache evicts by CLOCK: records looked up since the hand last
// passed them outlive those that were not, and what it holds stays in
// its budget.
func TestRecordCacheKeepsRecordsInUse(t *testing.T) {
	key := func(i int) string { return fmt.Sprintf("k%02d", i) }
	entry := new(newCacheSlot(key(0), "", nil, nil)).size() // a remembered absence
	c := newRecordCache(10*entry, nil)
	for i := range 10 {
		c.put(key(i), nil)
	}
	for i := range 5 {
		if _, ok := c.get(key(i)); !ok {
			t.Fatalf("%s not cached", key(i))
		}
	}
	c.put(key(10), nil)
	for i := range 11 {
		_, ok := c.get(key(i))
		if want := i != 5; ok != want {
			t.Errorf("%s cached %v, want %v: the first record not in use goes", key(i), ok, want)
		}
	}
	for i := 11; i < 100; i++ {
		c.put(key(i), nil)
		if used := c.usedBytes(); used > c.budget {
			t.Fatalf("cache holds %d bytes of a %d budget", used, c.budget)
		}
	}
	if st := len(c.slots) - len(c.free); st != 10 {
		t.Errorf("cache holds %d records, want 10", st)
	}
}

// An inline record is kept as its value and decoded at a lookup, unless
// it is among the last few decoded, which lookups share until its value
// is replaced; a larger record is kept decoded and shared.
func TestRecordCacheDecodesInlineRecords(t *testing.T) {
	decodes := 0
	c := newRecordCache(1<<20, func(b []byte) (*format.Onode, error) { decodes++; return format.DecodeRecord(b, testSB) })
	small := &format.Onode{Nid: 5, Size: 10, Pages: []format.Span{{Off: 0, End: 4096}}, Attrs: format.AttrList{{Name: "@", Value: []byte("info")}}, Inline: true,
		Units: format.MakeUnitMap([]format.Unit{format.MakeUnit(0, testAU, []uint32{1, 2, 3, 4})})}
	small.Enc = small.Encode()
	c.put("small", small)
	a, okA := c.get("small")
	b, okB := c.getBytes([]byte("small"))
	if !okA || !okB || a != b || a == small || !format.SameValue(a, small) || !bytes.Equal(a.Enc, small.Enc) || decodes != 1 {
		t.Fatalf("inline record: %+v, %+v after %d decodes, want one record decoded once", a, b, decodes)
	}
	// A new value for the key is decoded, never the old one returned.
	grown := small.Clone()
	grown.Size = 20
	grown.Enc = grown.Encode()
	c.put("small", grown)
	if got, ok := c.get("small"); !ok || got.Size != 20 || decodes != 2 {
		t.Fatalf("after a put: %+v, %v after %d decodes, want size 20 decoded anew", got, ok, decodes)
	}
	// Past recentDecoded other decodes it is decoded afresh.
	for i := range recentDecoded {
		k := fmt.Sprintf("other-%d", i)
		c.put(k, small)
		c.get(k)
	}
	if got, ok := c.get("small"); !ok || got.Size != 20 || decodes != 3+recentDecoded {
		t.Fatalf("after %d other records: %+v, %v after %d decodes", recentDecoded, got, ok, decodes)
	}
	large := &format.Onode{Nid: 6}
	for lu := range format.MaxInlineUnits + 1 {
		large.Units.Set(format.MakeUnit(uint64(lu), uint64(lu)*testAU, []uint32{1, 2, 3, 4}))
	}
	c.put("large", large)
	if got, ok := c.get("large"); !ok || got != large {
		t.Fatalf("large record: %p, %v; want the record put, %p", got, ok, large)
	}
}

// The cache keeps an object key without a locator that repeats the name,
// and finds every kind of key again, through get and getBytes: keyless
// names (cut), names with a key of their own, equal to the name or not
// (whole), names holding NULs, and keys that are not object keys.
func TestRecordCacheCutKeys(t *testing.T) {
	ids := []objid.ID{
		objid.Object(1, "", "a"),
		{Pool: 1, Name: "a", Key: "a"},
		{Pool: 1, Name: "a", Key: "b"},
		{Pool: 1, Name: "b", Key: "a"},
		objid.Object(1, "ns", "a"),
		objid.Object(1, "a", ""),
		objid.Object(1, "", "x\x00\x01y"),
		objid.Object(1, "\x00", "\x00\x00"),
		{Pool: 1, Name: "a", Snap: 7},
	}
	var keys []string
	for _, id := range ids {
		keys = append(keys, string(format.ObjectKey(pg, id)))
	}
	keys = append(keys, "short", string([]byte{format.PrefixObject}), "")
	c := newRecordCache(1<<20, nil)
	for i, k := range keys {
		c.put(k, &format.Onode{Nid: uint64(i + 1)})
	}
	for i, k := range keys {
		a, okA := c.get(k)
		b, okB := c.getBytes([]byte(k))
		if !okA || !okB || a != b || a.Nid != uint64(i+1) {
			t.Errorf("key %q: %+v %v, %+v %v; want nid %d", k, a, okA, b, okB, i+1)
		}
	}
	for _, name := range []string{"a", "benchmark_data_host_4242_object1"} {
		if lo, hi := format.LocatorSpan(format.ObjectKey(pg, objid.Object(1, "", name))); hi-lo != len(name)+2 {
			t.Errorf("keyless object %q: locator at [%d, %d), want its %d bytes cut", name, lo, hi, len(name)+2)
		}
	}
	for _, id := range ids[1:4] {
		if lo, hi := format.LocatorSpan(format.ObjectKey(pg, id)); lo != hi {
			t.Errorf("%+v has a key: [%d, %d) cut", id, lo, hi)
		}
	}
	if _, ok := c.get(string(format.ObjectKey(pg, objid.Object(1, "", "c")))); ok {
		t.Error("an object never put is cached")
	}
}

// Cut keys come out of the index as they went in: after many evictions
// every index entry points at a live slot that hashes to it, and the
// cache holds what its budget allows.
func TestRecordCacheEvictsCutKeys(t *testing.T) {
	key := func(i int) string { return string(format.ObjectKey(pg, objid.Object(1, "", fmt.Sprintf("obj-%d", i)))) }
	lo, hi := format.LocatorSpan(key(0))
	entry := new(newCacheSlot(key(0)[:lo], key(0)[hi:], nil, nil)).size()
	c := newRecordCache(50*entry, nil)
	for i := range 1000 {
		c.put(key(i), nil)
	}
	live := checkCacheIndex(t, c)
	if live < 40 || c.used > c.budget {
		t.Fatalf("%d live slots, %d of %d bytes used", live, c.used, c.budget)
	}
	for i := 1000 - live; i < 1000; i++ {
		if _, ok := c.get(key(i)); !ok {
			t.Errorf("recent key %d not cached", i)
		}
	}
}

// FuzzLocatorSpan: any bytes give a span inside them, and a span cut is a
// copy of the escaped name after it.
func FuzzLocatorSpan(f *testing.F) {
	f.Add(format.ObjectKey(pg, objid.Object(1, "", "name")))
	f.Add(format.ObjectKey(pg, objid.Object(1, "ns", "x\x00y")))
	f.Add([]byte{format.PrefixObject, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, k []byte) {
		lo, hi := format.LocatorSpan(k)
		if lo == hi {
			return
		}
		if lo < 0 || hi > len(k) || lo > hi {
			t.Fatalf("span [%d, %d) of %d bytes", lo, hi, len(k))
		}
		if name := k[hi:]; !bytes.HasPrefix(name, k[lo:hi]) {
			t.Fatalf("cut %q is not the name that follows (%q)", k[lo:hi], name)
		}
		if !sameKey(append(slices.Clone(k[:lo]), k[hi:]...), k, lo, hi) || sameKey(k, k, lo, hi) {
			t.Fatal("a key differs from its own cut form, or equals itself uncut")
		}
	})
}

// BenchmarkRecordCacheHit is a lookup of a cached inline record, found by
// a key shaped like a rados bench object's (cut in the cache) as readers
// hold it, in bytes.
func BenchmarkRecordCacheHit(b *testing.B) {
	c := newRecordCache(64<<20, func(v []byte) (*format.Onode, error) { return format.DecodeRecord(v, testSB) })
	var keys [][]byte
	for i := range 1024 {
		k := format.ObjectKey(pg, objid.Object(1, "", fmt.Sprintf("benchmark_data_host_4242_object%d", i)))
		rec := &format.Onode{Nid: uint64(i + 1), Size: 4096, Pages: []format.Span{{Off: 0, End: 4096}}, Inline: true, Units: format.MakeUnitMap([]format.Unit{format.MakeUnit(0, testAU, []uint32{1, 2, 3, 4})})}
		rec.Enc = rec.Encode()
		c.put(string(k), rec)
		keys = append(keys, k)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok := c.getBytes(keys[i%len(keys)]); !ok {
			b.Fatal("miss")
		}
	}
}

// checkCacheIndex checks that the index has one entry for every slot in
// use, found by its key's hash, and returns how many slots are in use.
func checkCacheIndex(t *testing.T, c *recordCache) int {
	t.Helper()
	live := 0
	for i := range c.slots {
		sl := &c.slots[i]
		if sl.kv == nil {
			continue
		}
		live++
		h := maphash.Bytes(c.seed, sl.key())
		if _, s, ok := c.index.find(h, func(s int32) bool { return s == int32(i) }); !ok || s != int32(i) {
			t.Fatalf("slot %d (%q) is not in the index", i, sl.key())
		}
	}
	if live != c.index.len() || live != len(c.slots)-len(c.free) {
		t.Fatalf("%d slots in use, %d index entries, %d slots less %d free", live, c.index.len(), len(c.slots), len(c.free))
	}
	return live
}

// The record cache against a model: random puts (records, absences,
// replacements) and lookups of a few hundred keys under a budget that
// holds a fraction of them. A lookup that hits returns exactly the last
// record put for its key, and the index stays whole.
func TestRecordCacheModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := mrand.New(mrand.NewPCG(seed, 7))
		keys := make([]string, 300)
		for i := range keys {
			id := objid.Object(1, "", fmt.Sprintf("obj-%d", i))
			if i%5 == 0 {
				id.Key = fmt.Sprintf("k%d", i%7)
			}
			keys[i] = string(format.ObjectKey(pg, id))
		}
		c := newRecordCache(int64(40+rng.IntN(100))*(cacheEntryOverhead+40), nil)
		model := map[string]*format.Onode{}
		for op := range 5000 {
			k := keys[rng.IntN(len(keys))]
			switch rng.IntN(3) {
			case 0:
				var rec *format.Onode
				if rng.IntN(4) > 0 {
					rec = &format.Onode{Nid: uint64(op + 1)}
				}
				c.put(k, rec)
				model[k] = rec
			default:
				got, ok := c.get(k)
				want, known := model[k]
				if ok && (!known || got != want) {
					t.Fatalf("seed %d op %d: %q gave %+v, last put %+v (put: %v)", seed, op, k, got, want, known)
				}
			}
			if op%500 == 0 {
				checkCacheIndex(t, c)
			}
		}
		checkCacheIndex(t, c)
	}
}

// slotIndex against a map, with many colliding hashes: inserts, finds
// and deletions keep every entry findable and no deleted one.
func TestSlotIndex(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	var x slotIndex
	model := map[int32]uint64{} // slot -> hash
	hashes := make([]uint64, 64)
	for i := range hashes {
		// Few distinct tags and homes: long probe runs.
		hashes[i] = uint64(rng.IntN(8))<<32 | rng.Uint64()&(1<<32-1)
		switch i % 3 {
		case 0:
			hashes[i] |= uint64(rng.Uint32()) << 32
		case 1:
			// Homes at the table's last entries, whatever its size:
			// runs that wrap around its end.
			hashes[i] |= uint64(1<<32-1-rng.IntN(4)) << 32
		}
	}
	next := int32(0)
	for op := range 20000 {
		if rng.IntN(2) == 0 || len(model) == 0 {
			h := hashes[rng.IntN(len(hashes))]
			x.insert(h, next)
			model[next] = h
			next++
		} else {
			for s, h := range model {
				pos, got, ok := x.find(h, func(c int32) bool { return c == s })
				if !ok || got != s {
					t.Fatalf("op %d: slot %d not found", op, s)
				}
				x.deleteAt(pos)
				delete(model, s)
				if _, _, ok := x.find(h, func(c int32) bool { return c == s }); ok {
					t.Fatalf("op %d: deleted slot %d found", op, s)
				}
				break
			}
		}
		if x.len() != len(model) {
			t.Fatalf("op %d: %d entries, model %d", op, x.len(), len(model))
		}
		if op%1000 == 0 {
			for s, h := range model {
				if _, _, ok := x.find(h, func(c int32) bool { return c == s }); !ok {
					t.Fatalf("op %d: slot %d lost", op, s)
				}
			}
		}
	}
}

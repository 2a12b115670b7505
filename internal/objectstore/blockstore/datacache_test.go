package blockstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/storetest"
	"github.com/cuttlestore/cuttle/objid"
)

// drained waits until every queued transaction of s has applied and its
// deferred writes are on the data file and out of the data overlay, so
// that the next read finds the data on the file (or in the data cache),
// not in the overlay.
func drained(t *testing.T, s *Store) {
	t.Helper()
	s.prepMu.Lock()
	seq := s.nextSeq
	s.prepMu.Unlock()
	if err := s.pipe.waitFinished(context.Background(), seq); err != nil {
		t.Fatal(err)
	}
	if s.data.any() {
		t.Fatal("data overlay not empty after the pipeline finished")
	}
}

// TestDataCacheWritePaths reads an object into the data cache, then
// changes it by each way a transaction changes data (a partial overwrite
// written in place, a small whole-unit overwrite written in place, a
// larger one to new space, zero, truncate
// and extend, remove and recreate into freed space, a clone over it as a
// rollback does, clone range), and requires every read after to return
// the new bytes, with the cache serving the reads that it can.
func TestDataCacheWritePaths(t *testing.T) {
	ctx := context.Background()
	opts := testOptions(vfs.NewMem())
	opts.Size = 4 << 20 // few units: freed ones are reused soon
	opts.DataCacheBytes = 1 << 20
	s := mkfsOpen(t, opts)
	defer s.Close()
	o, snap := objid.Object(1, "", "obj"), objid.Object(1, "", "snap")
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	model := map[objid.ID][]byte{}
	fill := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		return b
	}
	write := func(id objid.ID, off int, data []byte) *objectstore.Transaction {
		m := model[id]
		if len(m) < off+len(data) {
			m = append(m, make([]byte, off+len(data)-len(m))...)
		}
		copy(m[off:], data)
		model[id] = m
		return new(objectstore.Transaction).Write(pg, id, uint64(off), data)
	}
	check := func(step string) {
		t.Helper()
		drained(t, s)
		for range 2 { // the first read may fill, the second hits
			for id, want := range model {
				got, err := s.Read(ctx, pg, id, 0, 0)
				if err != nil {
					t.Fatalf("%s: read %v: %v", step, id, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: %v reads %d bytes that differ from the %d written (stale cache?)", step, id, len(got), len(want))
				}
			}
		}
	}
	apply(t, s, write(o, 0, fill(8*testAU, 1)))
	check("first write")
	hits := s.DataCacheStats().Hits
	if hits == 0 {
		t.Fatalf("no read hit the cache: %+v", s.DataCacheStats())
	}

	steps := []struct {
		name string
		tx   func() *objectstore.Transaction
	}{
		{"partial overwrite (in place)", func() *objectstore.Transaction { return write(o, 100, fill(300, 2)) }},
		{"block overwrite (in place)", func() *objectstore.Transaction { return write(o, testCB, fill(testCB, 3)) }},
		{"small whole-unit overwrite (in place)", func() *objectstore.Transaction { return write(o, testAU, fill(testAU, 5)) }},
		{"whole-unit overwrite (new space)", func() *objectstore.Transaction { return write(o, 2*testAU, fill(3*testAU, 4)) }},
		{"zero", func() *objectstore.Transaction {
			copy(model[o][testAU+10:], make([]byte, 2*testAU))
			return new(objectstore.Transaction).Zero(pg, o, testAU+10, 2*testAU)
		}},
		{"truncate", func() *objectstore.Transaction {
			model[o] = model[o][:3*testAU+5]
			return new(objectstore.Transaction).Truncate(pg, o, 3*testAU+5)
		}},
		{"extend after truncate", func() *objectstore.Transaction { return write(o, 5*testAU, fill(testCB, 5)) }},
		{"snapshot (clone)", func() *objectstore.Transaction {
			model[snap] = bytes.Clone(model[o])
			return new(objectstore.Transaction).Clone(pg, o, snap)
		}},
		{"overwrite after the snapshot", func() *objectstore.Transaction { return write(o, 0, fill(4*testAU, 6)) }},
		{"rollback (clone the snapshot over the head)", func() *objectstore.Transaction {
			model[o] = bytes.Clone(model[snap])
			return new(objectstore.Transaction).Clone(pg, snap, o)
		}},
		{"remove", func() *objectstore.Transaction {
			delete(model, snap)
			return new(objectstore.Transaction).Remove(pg, snap)
		}},
		{"recreate into freed space", func() *objectstore.Transaction {
			tx := new(objectstore.Transaction).Remove(pg, o)
			delete(model, o)
			for i := range 40 {
				id := objid.Object(1, "", fmt.Sprint("new", i))
				tx.Ops = append(tx.Ops, write(id, 0, fill(2*testAU, byte(10+i))).Ops...)
			}
			return tx
		}},
		{"clone range", func() *objectstore.Transaction {
			src, dst := objid.Object(1, "", "new3"), objid.Object(1, "", "new4")
			copy(model[dst][testCB:], model[src][0:2*testCB])
			return new(objectstore.Transaction).CloneRange(pg, src, dst, 0, 2*testCB, testCB)
		}},
	}
	for _, st := range steps {
		apply(t, s, st.tx())
		check(st.name)
	}
	if st := s.DataCacheStats(); st.Hits <= hits || st.Invalidated == 0 {
		t.Fatalf("the steps neither hit the cache nor invalidated it: %+v", st)
	}
}

// TestDataCacheDifferential runs the differential stream against
// memstore on a small store with a small data cache: units are freed and
// reused, blocks evicted and filled again, and every read must agree.
func TestDataCacheDifferential(t *testing.T) {
	for seed := range int64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			opts.Size = 8 << 20
			opts.DataCacheBytes = 128 << 10
			b := mkfsOpen(t, opts)
			defer b.Close()
			m := memstore.New(memstore.Options{})
			defer m.Close()
			storetest.Differential(t, seed+100, 300, b, m)
			if st := b.DataCacheStats(); st.Hits == 0 || st.Invalidated == 0 {
				t.Fatalf("the stream did not exercise the cache: %+v", st)
			}
		})
	}
}

// TestDataCacheFillRace checks the rule that keeps a fill from undoing
// an invalidation: a fill of bytes read before a write to its range
// landed is refused, one of another stripe is not.
func TestDataCacheFillRace(t *testing.T) {
	c := newDataCache(1<<20, testCB)
	old := bytes.Repeat([]byte{1}, testCB)
	tok := c.begin(0, testCB)
	other := c.begin(8<<20, testCB)
	c.invalidate(0, testCB) // the write lands after the reader read old
	c.fill(tok, 0, testCB, old, 0)
	if c.has(0) {
		t.Fatal("a fill begun before a write to its range was kept")
	}
	c.fill(other, 8<<20, testCB, old, 8<<20)
	if !c.has(8 << 20) {
		t.Fatal("a write elsewhere refused a fill")
	}
	// A fill that came first is removed by the write's invalidation.
	tok = c.begin(0, testCB)
	c.fill(tok, 0, testCB, old, 0)
	c.invalidate(0, 1)
	if c.has(0) {
		t.Fatal("invalidate left the block")
	}
	p := make([]byte, testCB)
	if c.get(p, 0) {
		t.Fatal("get found an invalidated block")
	}
}

// TestDataCacheBound fills the cache past its budget: it holds at most
// its limit, and evicts the blocks not read since the hand last passed.
func TestDataCacheBound(t *testing.T) {
	const blocks = 2 * slabBlocks
	c := newDataCache(blocks*testCB, testCB)
	blk := make([]byte, testCB)
	for i := range uint64(3 * blocks) {
		c.fill(c.begin(i*testCB, testCB), i*testCB, testCB, blk, i*testCB)
		if i == 5 {
			c.get(blk, 0) // referenced: survives the first pass of the hand
		}
	}
	if n := len(c.index); n != blocks || len(c.slabs) != blocks/slabBlocks {
		t.Fatalf("%d blocks in %d slabs, want %d in %d", n, len(c.slabs), blocks, blocks/slabBlocks)
	}
	if !c.has(uint64(3*blocks-1) * testCB) {
		t.Fatal("the last block filled is not cached")
	}
	if newDataCache(testCB-1, testCB) != nil {
		t.Fatal("a budget under one block made a cache")
	}
}

package blockstore

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

func TestKeyFilterHasNoFalseNegatives(t *testing.T) {
	const n = 100_000
	seed := maphash.MakeSeed()
	f := newKeyFilter(n)
	for i := range n {
		f.add(keyHash(seed, fmt.Sprintf("Okey-%d", i)))
	}
	for i := range n {
		// The build hashes Pebble's keys as bytes, lookups as strings.
		if !f.mayContain(maphash.Bytes(seed, []byte(fmt.Sprintf("Okey-%d", i)))) {
			t.Fatalf("key %d was added but the filter rules it out", i)
		}
	}
	var maybe int
	for i := range n {
		if f.mayContain(keyHash(seed, fmt.Sprintf("Oother-%d", i))) {
			maybe++
		}
	}
	// About 1% at capacity for 10 bits and 7 probes a key; blocking
	// adds a little. 3% is tens of standard deviations away.
	if rate := float64(maybe) / n; rate > 0.03 {
		t.Fatalf("false-positive rate %.4f at capacity, want about 0.01", rate)
	}
	if f.size() != int64(len(f.blocks))*64 || f.size() < n*filterBitsPerKey/8 {
		t.Fatalf("size %d bytes for %d keys at %d bits each", f.size(), n, filterBitsPerKey)
	}
}

func TestKeyFilterFull(t *testing.T) {
	f := newKeyFilter(2)
	for range 2 {
		f.created.Add(1)
		if f.full() {
			t.Fatal("full before its capacity")
		}
	}
	f.created.Add(1)
	if !f.full() {
		t.Fatal("not full past its capacity")
	}
}

func filterObj(i int) objid.ID { return objid.Object(1, "", fmt.Sprintf("obj-%d", i)) }

// statUncached looks object i up past the record cache, as a lookup
// that misses it does.
func statUncached(s *Store, i int) (bool, error) {
	rec, err := s.loadRecord(string(format.ObjectKey(pg, filterObj(i))))
	return rec != nil, err
}

func TestKeyFilterSkipsAbsentRecords(t *testing.T) {
	fs := vfs.NewMem()
	s := mkfsOpen(t, testOptions(fs))
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	for i := range 100 {
		apply(t, s, new(objectstore.Transaction).Write(pg, filterObj(i), 0, []byte("data")))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, testOptions(fs))
	defer s.Close()
	WaitKeyFilter(s)
	if got := counter(s, "key_filter_builds"); got != 1 {
		t.Fatalf("%d filter builds after Open, want 1", got)
	}
	loads := s.statRecordLoads.Load()
	for i := range 100 {
		if ok, err := statUncached(s, i); !ok || err != nil {
			t.Fatalf("object %d: found %v, %v", i, ok, err)
		}
	}
	if got := s.statRecordLoads.Load() - loads; got != 100 {
		t.Fatalf("%d Pebble lookups for 100 records, want 100", got)
	}
	for i := 100; i < 1100; i++ {
		if ok, err := statUncached(s, i); ok || err != nil {
			t.Fatalf("absent object %d: found %v, %v", i, ok, err)
		}
	}
	// The filter is sized for 64 Ki keys and holds 100: hardly any
	// absent key gets past it.
	if skipped := counter(s, "filtered_lookups"); skipped < 990 {
		t.Fatalf("the filter answered %d of 1000 lookups of absent records", skipped)
	}
	// Through the store's API: a new object is found once written.
	o := filterObj(5000)
	if _, err := s.Stat(context.Background(), pg, o); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("stat of a new object: %v", err)
	}
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, []byte("new")))
	if st, err := s.Stat(context.Background(), pg, o); err != nil || st.Size != 3 {
		t.Fatalf("stat after the write: %+v, %v", st, err)
	}
}

// TestKeyFilterRebuildsUnderWrites creates objects from several
// goroutines with a filter sized for 64 keys, so that it is rebuilt
// several times while transactions are being prepared and committed,
// and checks that no created record is ever ruled out.
func TestKeyFilterRebuildsUnderWrites(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.testFilterMinKeys = 64
	s := mkfsOpen(t, opts)
	defer s.Close()
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	const writers, each = 4, 300
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w * each; i < (w+1)*each; i++ {
				err := objectstore.Apply(context.Background(), s, new(objectstore.Transaction).Write(pg, filterObj(i), 0, []byte("x")))
				if err != nil {
					errs <- err
					return
				}
				// Every record committed so far must get past the
				// filter, whichever filter is current.
				if ok, err := statUncached(s, i); !ok || err != nil {
					errs <- fmt.Errorf("object %d right after its write: found %v, %v", i, ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	WaitKeyFilter(s)
	if got := counter(s, "key_filter_builds"); got < 3 {
		t.Fatalf("%d filter builds for %d creations from a capacity of 64, want several", got, writers*each)
	}
	for i := range writers * each {
		if ok, err := statUncached(s, i); !ok || err != nil {
			t.Fatalf("object %d: found %v, %v", i, ok, err)
		}
	}
	// Removed objects leave the filter at its next build.
	tx := new(objectstore.Transaction)
	for i := range writers * each {
		tx.Remove(pg, filterObj(i))
	}
	apply(t, s, tx)
	s.prepMu.Lock()
	s.startFilterBuildLocked()
	s.prepMu.Unlock()
	WaitKeyFilter(s)
	before := counter(s, "filtered_lookups")
	for i := range writers * each {
		if ok, err := statUncached(s, i); ok || err != nil {
			t.Fatalf("removed object %d: found %v, %v", i, ok, err)
		}
	}
	if skipped := counter(s, "filtered_lookups") - before; skipped < writers*each*9/10 {
		t.Fatalf("the rebuilt filter answered %d of %d lookups of removed records", skipped, writers*each)
	}
}

func TestKeyFilterOff(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	opts.testNoKeyFilter = true
	s := mkfsOpen(t, opts)
	defer s.Close()
	WaitKeyFilter(s)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	if ok, err := statUncached(s, 1); ok || err != nil {
		t.Fatalf("absent object: found %v, %v", ok, err)
	}
	if got := counter(s, "filtered_lookups") + counter(s, "key_filter_builds"); got != 0 {
		t.Fatalf("filter counters %d with the filter off", got)
	}
}

// size is the filter's memory in bytes.
func (f *keyFilter) size() int64 { return int64(len(f.blocks)) * filterBlockWords * 8 }

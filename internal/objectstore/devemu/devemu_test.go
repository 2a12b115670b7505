package devemu

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/storetest"
	"github.com/cuttlestore/cuttle/objid"
)

var (
	coll = objectstore.PGCollection(1, 0)
	obj  = objid.Object(1, "", "o")
)

// newStore returns an emulated device of profile p over a memstore with
// one collection, in the bubble's virtual time.
func newStore(t *testing.T, p Profile) *Store {
	t.Helper()
	s := Wrap(memstore.New(memstore.Options{}), p, clock.Real()).(*Store)
	t.Cleanup(func() { s.Close() })
	if err := objectstore.Apply(context.Background(), s, new(objectstore.Transaction).CreateCollection(coll)); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestProfiles(t *testing.T) {
	for _, tc := range []struct {
		p    Profile
		n    int
		want time.Duration
	}{
		{HDD, 0, 8 * time.Millisecond},
		{HDD, 150e6, time.Second + 8*time.Millisecond},
		{HDD, 4096, 8*time.Millisecond + 27306*time.Nanosecond},
		{SSD, 500e6, time.Second + 100*time.Microsecond},
		{SSD, 4 << 20, 100*time.Microsecond + 8388608*time.Nanosecond},
	} {
		if got := tc.p.Cost(tc.n); got != tc.want {
			t.Errorf("%s Cost(%d) = %v, want %v", tc.p.Name, tc.n, got, tc.want)
		}
	}
	for _, name := range []string{"hdd", "ssd"} {
		if p, ok := ByName(name); !ok || p.Name != name {
			t.Errorf("ByName(%q) = %+v, %v", name, p, ok)
		}
	}
	if _, ok := ByName("none"); ok {
		t.Error("ByName(none) names a profile")
	}
}

// A write commits once the device has written it, and is visible before;
// a read takes the device's time for what it returns.
func TestWriteAndReadTakeTheDevicesTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore(t, HDD)
		ctx := context.Background()
		data := bytes.Repeat([]byte{7}, 1<<20)
		start := time.Now()
		c, err := s.Queue(ctx, new(objectstore.Transaction).Write(coll, obj, 0, data))
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case <-c.Applied():
		default:
			t.Fatal("the write is not applied at once")
		}
		select {
		case <-c.Committed():
			t.Fatal("the write committed before the device wrote it")
		default:
		}
		if err := c.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := time.Since(start), HDD.Cost(len(data)); got != want {
			t.Fatalf("commit after %v, want %v", got, want)
		}
		start = time.Now()
		got, err := s.Read(ctx, coll, obj, 0, 4096)
		if err != nil || len(got) != 4096 {
			t.Fatal(len(got), err)
		}
		if d, want := time.Since(start), HDD.Cost(4096); d != want {
			t.Fatalf("a 4 KiB read took %v, want %v", d, want)
		}
		start = time.Now()
		b, crc, err := s.ReadCRC(ctx, coll, obj, 0, 0)
		if err != nil || crc != crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) || len(b) != len(data) {
			t.Fatalf("ReadCRC: %d bytes, crc %x, %v", len(b), crc, err)
		}
		if d, want := time.Since(start), HDD.Cost(len(data)); d != want {
			t.Fatalf("a 1 MiB read took %v, want %v", d, want)
		}
		st := s.Stats()
		if st.Writes != 2 || st.Reads != 2 || st.ReadBytes != 4096+1<<20 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// I/Os queue: n concurrent reads end one device time apart, so the
// bandwidth bounds the throughput; writes commit in order.
func TestIOsQueueOnTheDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore(t, SSD)
		ctx := context.Background()
		const n, size = 8, 1 << 20
		start := time.Now()
		var comps []*objectstore.Completion
		for i := range n {
			c, err := s.Queue(ctx, new(objectstore.Transaction).Write(coll, objid.Object(1, "", string(rune('a'+i))), 0, make([]byte, size)))
			if err != nil {
				t.Fatal(err)
			}
			comps = append(comps, c)
		}
		var mu sync.Mutex
		var order []int
		for i, c := range comps {
			c.OnCommitted(func(error) {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
			})
		}
		for i, c := range comps {
			if err := c.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := time.Since(start), time.Duration(i+1)*SSD.Cost(size); got != want {
				t.Fatalf("write %d committed after %v, want %v", i, got, want)
			}
		}
		synctest.Wait() // the last OnCommitted callback has run
		mu.Lock()
		if len(order) != n {
			t.Fatalf("%d commits seen: %v", len(order), order)
		}
		for i, v := range order {
			if v != i {
				t.Fatalf("commit order %v", order)
			}
		}
		mu.Unlock()
		// Reads from many goroutines at once share the one device.
		start = time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if _, err := s.Read(ctx, coll, objid.Object(1, "", string(rune('a'+i))), 0, 0); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got, want := time.Since(start), time.Duration(n)*SSD.Cost(size); got != want {
			t.Fatalf("%d concurrent 1 MiB reads took %v, want %v", n, got, want)
		}
		if st := s.Stats(); st.Waited == 0 {
			t.Fatalf("no I/O waited: %+v", st)
		}
	})
}

// A read whose context ends while it waits for the device returns the
// context's error.
func TestReadCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore(t, HDD)
		if err := objectstore.Apply(context.Background(), s, new(objectstore.Transaction).Write(coll, obj, 0, []byte("x"))); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if _, err := s.Read(ctx, coll, obj, 0, 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read past its deadline: %v", err)
		}
	})
}

// The wrapper is a store: the conformance suite passes over it (with a
// device that takes no time: the suite's subtests cannot run in a
// synctest bubble, and the timing is tested above), and it behaves as
// the store below it in the differential test, timing and all.
func TestConformance(t *testing.T) {
	instant := Profile{Name: "instant", Bandwidth: math.Inf(1)}
	storetest.Run(t, func(t *testing.T) objectstore.Store {
		return Wrap(memstore.New(memstore.Options{}), instant, clock.Real())
	})
}

func TestDifferential(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := memstore.New(memstore.Options{})
		b := Wrap(memstore.New(memstore.Options{}), HDD, clock.Real())
		defer a.Close()
		defer b.Close()
		storetest.Differential(t, 42, 300, a, b)
	})
}

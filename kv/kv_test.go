package kv_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// cluster starts a monitor and three OSDs in the simulator with a pool
// "kv" of size 3.
func cluster(t *testing.T) *sim.Cluster {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 5, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "kv", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	return c
}

func ioctx(t *testing.T, c *sim.Cluster, client string) *rados.IOContext {
	t.Helper()
	io, err := c.Client(client).OpenIOContext("kv")
	if err != nil {
		t.Fatal(err)
	}
	return io
}

// check compares the store with the model: every model key reads back
// its value, the leaves hold between k and 2k entries (k, 2k by their own
// count and by their omaps), their bounds follow the index, and the pool
// holds no object but the index and the leaves.
func check(t *testing.T, io *rados.IOContext, s *kv.Store, model map[string]string) {
	t.Helper()
	ctx := context.Background()
	for k, v := range model {
		got, err := s.Get(ctx, k)
		if err != nil || string(got) != v {
			t.Fatalf("get %q: %q, %v; want %q", k, got, err, v)
		}
	}
	fresh, err := kv.Open(ctx, io, "store", kv.Config{})
	if err != nil {
		t.Fatal(err)
	}
	leaves := fresh.Leaves()
	total := 0
	names := map[string]bool{"kv.store.index": true}
	for _, e := range leaves {
		names[e.Leaf] = true
		attr, err := io.GetXattr(ctx, e.Leaf, clskv.LeafAttr)
		if err != nil {
			t.Fatalf("leaf %s: %v", e.Leaf, err)
		}
		l, err := clskv.DecodeLeaf(attr)
		if err != nil || l.Bounds != e.Bounds || l.Frozen != "" {
			t.Fatalf("leaf %s: %+v %v; the index says %v", e.Leaf, l, err, e.Bounds)
		}
		kvs, _, err := io.GetOmapValues(ctx, e.Leaf, "", "", 1<<16)
		if err != nil || uint64(len(kvs)) != l.Count {
			t.Fatalf("leaf %s: %d entries, count %d, %v", e.Leaf, len(kvs), l.Count, err)
		}
		if len(leaves) > 1 && (l.Count < uint64(s.K()) || l.Count > 2*uint64(s.K())) {
			t.Fatalf("leaf %s holds %d entries, k %d", e.Leaf, l.Count, s.K())
		}
		for _, p := range kvs {
			if want, ok := model[p.Key]; !ok || want != string(p.Value) || !e.Bounds.Contains(p.Key) {
				t.Fatalf("leaf %s %v holds %q = %q (model %q, %v)", e.Leaf, e.Bounds, p.Key, p.Value, want, ok)
			}
		}
		total += len(kvs)
	}
	if total != len(model) {
		t.Fatalf("the leaves hold %d entries, the model %d", total, len(model))
	}
	for e, err := range io.Objects(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if !names[e.Name] {
			t.Fatalf("object %s is neither the index nor a leaf", e.Name)
		}
	}
}

// Many inserts, updates and removes with k = 3: splits from one leaf to
// dozens, checked against a model map.
func TestSplitsAgainstModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		io := ioctx(t, c, "client.kv")
		ctx := context.Background()
		s, err := kv.Create(ctx, io, "store", kv.Options{K: 3}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Create(ctx, io, "store", kv.Options{K: 3}, kv.Config{}); !errors.Is(err, kv.ErrExists) {
			t.Fatalf("create again: %v", err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		model := map[string]string{}
		for i := range 300 {
			key := fmt.Sprintf("key%04d", rng.IntN(500))
			switch rng.IntN(6) {
			case 0:
				if err := s.Remove(ctx, key); err != nil {
					t.Fatalf("remove %q: %v", key, err)
				}
				delete(model, key)
			default:
				val := fmt.Sprintf("v%d", i)
				if err := s.Put(ctx, key, []byte(val)); err != nil {
					t.Fatalf("put %q: %v", key, err)
				}
				model[key] = val
			}
		}
		if _, err := s.Get(ctx, "key9999"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("get of a missing key: %v", err)
		}
		if n := len(s.Leaves()); n < 20 {
			t.Fatalf("%d leaves for %d keys with k 3", n, len(model))
		}
		check(t, io, s, model)
	})
}

// The store grows to dozens of leaves with k = 3, then shrinks by
// random removes (and some puts) back to one leaf: merges and rebalances,
// checked against a model map at the low point and at the end.
func TestJoinsAgainstModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		io := ioctx(t, c, "client.kv")
		ctx := context.Background()
		s, err := kv.Create(ctx, io, "store", kv.Options{K: 3}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		model := map[string]string{}
		for i := range 200 {
			key := fmt.Sprintf("key%04d", rng.IntN(400))
			if err := s.Put(ctx, key, fmt.Appendf(nil, "v%d", i)); err != nil {
				t.Fatal(err)
			}
			model[key] = fmt.Sprintf("v%d", i)
		}
		most := len(s.Leaves())
		for i := 0; len(model) > 20; i++ {
			keys := slices.Sorted(maps.Keys(model))
			key := keys[rng.IntN(len(keys))]
			if rng.IntN(4) == 0 {
				key = fmt.Sprintf("key%04d", rng.IntN(400)) // maybe absent
			}
			if rng.IntN(10) == 0 {
				// An update between removes (only of a present key, so
				// that the model keeps shrinking).
				if _, ok := model[key]; !ok {
					continue
				}
				if err := s.Put(ctx, key, fmt.Appendf(nil, "w%d", i)); err != nil {
					t.Fatal(err)
				}
				model[key] = fmt.Sprintf("w%d", i)
				continue
			}
			if err := s.Remove(ctx, key); err != nil {
				t.Fatalf("remove %q: %v", key, err)
			}
			delete(model, key)
		}
		if n := len(s.Leaves()); n > len(model)/3 || n >= most/3 {
			t.Fatalf("%d leaves for %d keys (%d at the most)", n, len(model), most)
		}
		check(t, io, s, model)
		for key := range model {
			if err := s.Remove(ctx, key); err != nil {
				t.Fatalf("remove %q: %v", key, err)
			}
			delete(model, key)
		}
		if n := len(s.Leaves()); n != 1 {
			t.Fatalf("%d leaves for an empty store", n)
		}
		check(t, io, s, model)
	})
}

// Clients in goroutines insert disjoint and overlapping keys into one
// small-k store at once, and update their own: every write lands, through
// each other's splits. (The race a split's freeze closes is too narrow
// for this load to hit reliably: TestSplitFreezesWriters forces it.)
func TestConcurrentClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		io := ioctx(t, c, "client.admin")
		if _, err := kv.Create(ctx, io, "store", kv.Options{K: 4}, kv.Config{}); err != nil {
			t.Fatal(err)
		}
		const clients, each = 4, 60
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		for w := range clients {
			s, err := kv.Open(ctx, ioctx(t, c, fmt.Sprintf("client.w%d", w)), "store", kv.Config{Retries: 100})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for i := range each {
					// Its own key, and one every client writes.
					if err := s.Put(ctx, fmt.Sprintf("own.%d.%03d", w, i), []byte("x")); err != nil {
						errs <- err
						return
					}
					if err := s.Put(ctx, fmt.Sprintf("shared.%03d", i), fmt.Appendf(nil, "w%d", w)); err != nil {
						errs <- err
						return
					}
					// An update of an earlier own key: it does not grow
					// its leaf, so it is the write a split would lose if
					// it copied a leaf that still took writes.
					if err := s.Put(ctx, fmt.Sprintf("own.%d.%03d", w, i/2), fmt.Appendf(nil, "u%d", i)); err != nil {
						errs <- err
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
		s, err := kv.Open(ctx, io, "store", kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		model := map[string]string{}
		for w := range clients {
			for i := range each {
				model[fmt.Sprintf("own.%d.%03d", w, i)] = "x"
				model[fmt.Sprintf("own.%d.%03d", w, i/2)] = fmt.Sprintf("u%d", i)
			}
		}
		// A shared key holds one of its writers' values: read it, check
		// it is one, and let check compare the rest.
		for i := range each {
			key := fmt.Sprintf("shared.%03d", i)
			v, err := s.Get(ctx, key)
			if err != nil || len(v) != 2 || v[0] != 'w' || v[1] < '0' || v[1] >= '0'+clients {
				t.Fatalf("%s: %q %v", key, v, err)
			}
			model[key] = string(v)
		}
		check(t, io, s, model)
	})
}

// Clients in goroutines remove their own keys and re-insert some from a
// store of many small leaves, through each other's merges and
// rebalances (and splits): every write lands and nothing else changes.
func TestConcurrentRemovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		io := ioctx(t, c, "client.admin")
		s, err := kv.Create(ctx, io, "store", kv.Options{K: 3}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		const clients, each = 4, 50
		model := map[string]string{}
		for i := range each {
			for w := range clients {
				key := fmt.Sprintf("k%03d.%d", i, w)
				if err := s.Put(ctx, key, []byte("x")); err != nil {
					t.Fatal(err)
				}
				model[key] = "x"
			}
		}
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		for w := range clients {
			ws, err := kv.Open(ctx, ioctx(t, c, fmt.Sprintf("client.w%d", w)), "store", kv.Config{Retries: 100})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for i := range each {
					key := fmt.Sprintf("k%03d.%d", i, w)
					var err error
					if i%5 == 0 {
						err = ws.Put(ctx, key, []byte("y"))
					} else {
						err = ws.Remove(ctx, key)
					}
					if err != nil {
						errs <- err
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
		for i := range each {
			for w := range clients {
				key := fmt.Sprintf("k%03d.%d", i, w)
				if i%5 == 0 {
					model[key] = "y"
				} else {
					delete(model, key)
				}
			}
		}
		check(t, io, s, model)
	})
}

// A client whose index cache is stale (another client split the leaf it
// knows, many times over) finds every key anyway, and writes land.
func TestStaleIndexCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		io := ioctx(t, c, "client.a")
		a, err := kv.Create(ctx, io, "store", kv.Options{K: 2}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := kv.Open(ctx, ioctx(t, c, "client.b"), "store", kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		model := map[string]string{}
		for i := range 40 {
			key := fmt.Sprintf("k%02d", i)
			if err := b.Put(ctx, key, []byte(key)); err != nil {
				t.Fatal(err)
			}
			model[key] = key
		}
		if n := len(a.Leaves()); n != 1 {
			t.Fatalf("a's cache has %d leaves before it looks", n)
		}
		if v, err := a.Get(ctx, "k33"); err != nil || string(v) != "k33" {
			t.Fatalf("a's get through a stale cache: %q %v", v, err)
		}
		// b's cache goes stale in turn.
		for i := range 40 {
			key := fmt.Sprintf("k%02d.a", i)
			if err := a.Put(ctx, key, []byte("a")); err != nil {
				t.Fatal(err)
			}
			model[key] = "a"
		}
		check(t, io, b, model)
	})
}

// Bad input: keys and values out of bounds are refused; a corrupt index
// entry or leaf is ErrCorrupt naming the object, never a wrong answer.
func TestBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		io := ioctx(t, c, "client.kv")
		if _, err := kv.Open(ctx, io, "store", kv.Config{}); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("open of a missing store: %v", err)
		}
		s, err := kv.Create(ctx, io, "store", kv.Options{K: 2}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{
			s.Put(ctx, "", nil),
			s.Put(ctx, strings.Repeat("k", kv.MaxKeyLen+1), nil),
			s.Put(ctx, "k", make([]byte, kv.MaxValueLen+1)),
			s.Remove(ctx, ""),
		} {
			if !errors.Is(err, kv.ErrInvalid) {
				t.Fatalf("bad input: %v", err)
			}
		}
		if _, err := s.Get(ctx, ""); !errors.Is(err, kv.ErrInvalid) {
			t.Fatalf("get of an empty key: %v", err)
		}
		if err := s.Put(ctx, "k", make([]byte, kv.MaxValueLen)); err != nil {
			t.Fatal(err)
		}
		leaf := s.Leaves()[0].Leaf
		if err := io.SetXattr(ctx, leaf, clskv.LeafAttr, []byte("junk")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "k"); !errors.Is(err, kv.ErrCorrupt) || !strings.Contains(err.Error(), leaf) {
			t.Fatalf("get from a corrupt leaf: %v", err)
		}
		if err := io.SetOmap(ctx, "kv.store.index", map[string][]byte{clskv.IndexKey(""): []byte("junk")}); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Open(ctx, io, "store", kv.Config{}); !errors.Is(err, kv.ErrCorrupt) || !strings.Contains(err.Error(), "kv.store.index") {
			t.Fatalf("open of a corrupt index: %v", err)
		}
	})
}

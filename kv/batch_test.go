package kv_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/kv"
)

// CompareAndSwap: create if absent, swap only from the value held,
// remove only from it; a failed compare changes nothing.
func TestCompareAndSwap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		s, err := kv.Create(ctx, ioctx(t, c, "client.admin"), "store", kv.Options{K: 4}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CompareAndSwap(ctx, "k", nil, []byte("one")); err != nil {
			t.Fatalf("create if absent: %v", err)
		}
		if err := s.CompareAndSwap(ctx, "k", nil, []byte("again")); !errors.Is(err, kv.ErrConflict) {
			t.Fatalf("create over a key: %v, want ErrConflict", err)
		}
		if err := s.CompareAndSwap(ctx, "k", []byte("two"), []byte("three")); !errors.Is(err, kv.ErrConflict) {
			t.Fatalf("swap from a wrong value: %v, want ErrConflict", err)
		}
		if err := s.CompareAndSwap(ctx, "k", []byte("one"), []byte{}); err != nil {
			t.Fatalf("swap to an empty value: %v", err)
		}
		if v, err := s.Get(ctx, "k"); err != nil || len(v) != 0 {
			t.Fatalf("after the swap: %q %v", v, err)
		}
		if err := s.CompareAndSwap(ctx, "k", nil, nil); !errors.Is(err, kv.ErrConflict) {
			t.Fatalf("an empty value is not absent: %v", err)
		}
		if err := s.CompareAndSwap(ctx, "k", []byte{}, nil); err != nil {
			t.Fatalf("remove from the value held: %v", err)
		}
		if _, err := s.Get(ctx, "k"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("after the remove: %v", err)
		}
	})
}

// Clients increment one counter with read, then CompareAndSwap, retrying
// on ErrConflict, through the splits of the keys around it: every
// increment that succeeded counts once, so the counter ends at their
// number (a lost update would leave it lower).
func TestCompareAndSwapCounter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		io := ioctx(t, c, "client.admin")
		if _, err := kv.Create(ctx, io, "store", kv.Options{K: 3}, kv.Config{}); err != nil {
			t.Fatal(err)
		}
		const clients, each = 4, 15
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		conflicts := make([]int, clients)
		for w := range clients {
			s, err := kv.Open(ctx, ioctx(t, c, fmt.Sprintf("client.w%d", w)), "store", kv.Config{Retries: 100})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for i := range each {
					// Neighbours that split the counter's leaf now and then.
					if err := s.Put(ctx, fmt.Sprintf("c.%d.%02d", w, i), []byte("x")); err != nil {
						errs <- err
						return
					}
					for {
						old, err := s.Get(ctx, "counter")
						var n int
						switch {
						case errors.Is(err, kv.ErrNotFound):
							old = nil
						case err != nil:
							errs <- err
							return
						default:
							if n, err = strconv.Atoi(string(old)); err != nil {
								errs <- fmt.Errorf("counter %q: %w", old, err)
								return
							}
						}
						err = s.CompareAndSwap(ctx, "counter", old, []byte(strconv.Itoa(n+1)))
						if errors.Is(err, kv.ErrConflict) {
							conflicts[w]++
							continue
						}
						if err != nil {
							errs <- err
							return
						}
						break
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
		v, err := s.Get(ctx, "counter")
		if err != nil || string(v) != strconv.Itoa(clients*each) {
			t.Fatalf("counter %q %v, want %d", v, err, clients*each)
		}
		total := 0
		for _, n := range conflicts {
			total += n
		}
		if total == 0 {
			t.Fatal("no compare ever failed: the test did not race")
		}
		t.Logf("%d increments, %d conflicts retried, %d leaves", clients*each, total, len(s.Leaves()))
	})
}

// Apply: a batch of puts and removes in one leaf lands whole or not at
// all; keys in several leaves are refused.
func TestApplyBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		s, err := kv.Create(ctx, ioctx(t, c, "client.admin"), "store", kv.Options{K: 2}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, kv.Batch{Puts: []kv.Pair{{Key: "a1", Value: []byte("1")}, {Key: "a2", Value: []byte("2")}}}); err != nil {
			t.Fatal(err)
		}
		// A failing condition: neither the put nor the remove lands.
		err = s.Apply(ctx, kv.Batch{Conds: []kv.Cond{{Key: "a1", Value: []byte("wrong")}},
			Puts: []kv.Pair{{Key: "a3", Value: []byte("3")}}, Removes: []string{"a2"}})
		if !errors.Is(err, kv.ErrConflict) {
			t.Fatalf("a batch with a false condition: %v", err)
		}
		if _, err := s.Get(ctx, "a3"); !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("a3 after a failed batch: %v", err)
		}
		if v, err := s.Get(ctx, "a2"); err != nil || string(v) != "2" {
			t.Fatalf("a2 after a failed batch: %q %v", v, err)
		}
		// Grow the store past one leaf (k 2: four keys each).
		for i := range 12 {
			if err := s.Put(ctx, fmt.Sprintf("z%02d", i), []byte("z")); err != nil {
				t.Fatal(err)
			}
		}
		if len(s.Leaves()) < 2 {
			t.Fatalf("%d leaves, want several", len(s.Leaves()))
		}
		err = s.Apply(ctx, kv.Batch{Puts: []kv.Pair{{Key: "a1", Value: []byte("x")}, {Key: "z11", Value: []byte("x")}}})
		if !errors.Is(err, kv.ErrSpansLeaves) {
			t.Fatalf("a batch over two leaves: %v, want ErrSpansLeaves", err)
		}
		if v, _ := s.Get(ctx, "a1"); string(v) != "1" {
			t.Fatalf("a1 after a refused batch: %q", v)
		}
	})
}

package kv

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
)

// simPool starts a monitor and three OSDs in the simulator with a pool
// "kv", and returns a function connecting a client to it.
func simPool(t *testing.T) func(client string) *rados.IOContext {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 9, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "kv", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	return func(client string) *rados.IOContext {
		io, err := c.Client(client).OpenIOContext("kv")
		if err != nil {
			t.Fatal(err)
		}
		return io
	}
}

// fullStore creates store "s" with k 2 holding a, b, c, d (2k: the next
// insert splits), and opens it in a second client.
func fullStore(t *testing.T, cfg Config) (a, b *Store) {
	t.Helper()
	connect := simPool(t)
	ctx := context.Background()
	a, err := Create(ctx, connect("client.a"), "s", Options{K: 2}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		if err := a.Put(ctx, k, []byte("A")); err != nil {
			t.Fatal(err)
		}
	}
	b, err = Open(ctx, connect("client.b"), "s", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// A write that reaches a leaf while a split copies it waits for the
// split and lands in the new leaf: the freeze is what keeps the copy
// from losing it (without it, this test fails).
func TestSplitFreezesWriters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{})
		ctx := context.Background()
		done := make(chan error, 1)
		a.afterStep = func(step string) error {
			if step == stepRead {
				a.afterStep = nil
				go func() { done <- b.Put(ctx, "a", []byte("B")) }()
				synctest.Wait() // b has met the frozen leaf and waits
			}
			return nil
		}
		if err := a.Put(ctx, "e", []byte("A")); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if v, err := a.Get(ctx, "a"); err != nil || string(v) != "B" {
			t.Fatalf("a = %q, %v; b's update was lost", v, err)
		}
		if n := len(a.Leaves()); n != 2 {
			t.Fatalf("%d leaves after one split", n)
		}
	})
}

var errDied = errors.New("the splitting client died")

// A splitting client that dies after each step of a split: no key is
// lost or wrong at any point, and what other clients can still do is
// what the design says until cleanup exists (docs/KV.md, "Not yet"):
// before the swap, the marked entry refuses other splits and the frozen
// leaf refuses writes (ErrBusy); after it, the store works and only the
// old leaf is left behind. Cleanup will turn every ErrBusy row here into
// success.
func TestSplitStoppedAtEachStep(t *testing.T) {
	for _, tt := range []struct {
		step   string
		insert error // b inserting a fifth key (which needs a split)
		update error // b updating a key of the leaf
	}{
		{step: stepMarked, insert: ErrBusy, update: nil},
		{step: stepFrozen, insert: ErrBusy, update: ErrBusy},
		{step: stepRead, insert: ErrBusy, update: ErrBusy},
		{step: stepLeft, insert: ErrBusy, update: ErrBusy},
		{step: stepRight, insert: ErrBusy, update: ErrBusy},
		{step: stepSwapped, insert: nil, update: nil},
	} {
		t.Run(tt.step, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := fullStore(t, Config{Retries: 4})
				ctx := context.Background()
				a.afterStep = func(step string) error {
					if step == tt.step {
						return errDied
					}
					return nil
				}
				if err := a.Put(ctx, "e", []byte("A")); !errors.Is(err, errDied) {
					t.Fatalf("a's put: %v", err)
				}
				for _, k := range []string{"a", "b", "c", "d"} {
					if v, err := b.Get(ctx, k); err != nil || string(v) != "A" {
						t.Fatalf("get %q: %q %v", k, v, err)
					}
				}
				if _, err := b.Get(ctx, "e"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("get of the insert that died: %v", err)
				}
				if err := b.Put(ctx, "f", []byte("B")); !errors.Is(err, tt.insert) {
					t.Fatalf("b's insert: %v, want %v", err, tt.insert)
				}
				if err := b.Put(ctx, "a", []byte("B")); !errors.Is(err, tt.update) {
					t.Fatalf("b's update: %v, want %v", err, tt.update)
				}
				var objects int
				for _, err := range b.io.Objects(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					objects++
				}
				if err := b.refresh(ctx); err != nil {
					t.Fatal(err)
				}
				leaves := len(b.Leaves())
				// The index, its leaves, and (before the swap) the new
				// leaves written, or (after it) the old leaf.
				want := 1 + leaves
				switch tt.step {
				case stepLeft:
					want++
				case stepRight:
					want += 2
				case stepSwapped:
					want++
				}
				if objects != want {
					t.Fatalf("%d objects, want %d (%d leaves)", objects, want, leaves)
				}
			})
		})
	}
}

// Two clients split the same full leaf: the second's mark finds the
// first's (EBUSY), it waits, re-reads the index and inserts into the
// new leaf; the leaf is split once.
func TestSecondSplitterWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{})
		ctx := context.Background()
		done := make(chan error, 1)
		bSplits := 0
		b.afterStep = func(step string) error {
			if step == stepMarked {
				bSplits++
			}
			return nil
		}
		a.afterStep = func(step string) error {
			if step == stepMarked {
				a.afterStep = nil
				go func() { done <- b.Put(ctx, "bb", []byte("B")) }()
				synctest.Wait() // b's mark failed and b waits
			}
			return nil
		}
		if err := a.Put(ctx, "e", []byte("A")); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if bSplits != 0 {
			t.Fatalf("b split %d times", bSplits)
		}
		if err := a.refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(a.Leaves()); n != 2 {
			t.Fatalf("%d leaves, want 2", n)
		}
		for k, want := range map[string]string{"a": "A", "bb": "B", "d": "A", "e": "A"} {
			if v, err := a.Get(ctx, k); err != nil || string(v) != want {
				t.Fatalf("%s = %q %v, want %q", k, v, err, want)
			}
		}
	})
}

// A remove that would leave a leaf under k rebalances it with its right
// neighbour when the two hold more than 2k (the half losing the key gets
// the odd entry), and merges the last leaf into its left neighbour when
// they hold 2k (docs/KV.md, "Merge and rebalance").
func TestRebalanceThenMerge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := fullStore(t, Config{}) // a b c d, k 2
		ctx := context.Background()
		if err := a.Put(ctx, "e", []byte("A")); err != nil { // split: [a b] [c d e]
			t.Fatal(err)
		}
		bounds := func() []string {
			var bs []string
			for _, e := range a.Leaves() {
				bs = append(bs, e.Bounds.String())
			}
			return bs
		}
		if got := bounds(); len(got) != 2 || got[0] != `["", "c")` {
			t.Fatalf("after the split: %v", got)
		}
		if err := a.Remove(ctx, "a"); err != nil { // rebalance: [a b c] [d e], then a goes
			t.Fatal(err)
		}
		if got := bounds(); len(got) != 2 || got[0] != `["", "d")` || got[1] != `["d", +inf)` {
			t.Fatalf("after the rebalance: %v", got)
		}
		if err := a.Remove(ctx, "d"); err != nil { // merge: [b c d e], then d goes
			t.Fatal(err)
		}
		if got := bounds(); len(got) != 1 || got[0] != `["", +inf)` {
			t.Fatalf("after the merge: %v", got)
		}
		ps, _, err := a.List(ctx, "", "", 10)
		if err != nil || len(ps) != 3 || ps[0].Key != "b" || ps[1].Key != "c" || ps[2].Key != "e" {
			t.Fatalf("after the merge: %v %v", ps, err)
		}
		var objects int
		for _, err := range a.io.Objects(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			objects++
		}
		if objects != 2 {
			t.Fatalf("%d objects, want the index and one leaf", objects)
		}
	})
}

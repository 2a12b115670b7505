package kv

import (
	"context"
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
	_, connect := simCluster(t, 9)
	return connect
}

// simCluster is simPool returning the cluster too, its network seeded
// with netSeed.
func simCluster(t *testing.T, netSeed uint64) (*sim.Cluster, func(client string) *rados.IOContext) {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: netSeed, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "kv", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	return c, func(client string) *rados.IOContext {
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

// Removes that shrink a full leaf between the put that found it full and
// the split's freeze: the split finds fewer than 2k entries and is
// undone (its halves would hold under k), and the put lands (found by
// the seeded TestRandomClientsDie: a leaf of 2 with k 3).
func TestSplitOfAShrunkLeafUndone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{}) // a b c d in one leaf, k 2
		ctx := context.Background()
		marked := 0
		a.afterStep = func(step string) error {
			if step == stepMarked {
				marked++
				if marked == 1 {
					for _, k := range []string{"a", "b"} {
						if err := b.Remove(ctx, k); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}
		if err := a.Put(ctx, "e", []byte("A")); err != nil {
			t.Fatal(err)
		}
		if marked != 1 {
			t.Fatalf("%d splits marked", marked)
		}
		checkStore(t, a, map[string]string{"c": "A", "d": "A", "e": "A"}, nil)
		if n := len(a.Leaves()); n != 1 {
			t.Fatalf("%d leaves", n)
		}
	})
}

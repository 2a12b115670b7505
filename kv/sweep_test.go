package kv

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/kv/plan"
)

// A client dies after its split's swap, before removing the old leaf:
// the frozen old leaf is an orphan no client meets again. A sweep leaves
// it while it is younger than the timeout and removes it after; another
// store whose name starts with "s.leaf" keeps its leaves.
func TestSweepAfterDeathPastSwap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{MarkTimeout: time.Second})
		ctx := context.Background()
		other, err := Create(ctx, a.io, "s.leaf", Options{K: 2}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Put(ctx, "x", []byte("X")); err != nil {
			t.Fatal(err)
		}
		old := a.Leaves()[0].Leaf
		a.afterStep = func(step string) error {
			if step == stepSwapped {
				return errDied
			}
			return nil
		}
		if err := a.Put(ctx, "e", []byte("A")); !errors.Is(err, errDied) {
			t.Fatalf("a: %v", err)
		}
		r, err := b.Sweep(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Removed) != 0 || len(r.Young) != 1 || r.Young[0].Leaf != old || r.Young[0].Frozen == "" || r.Leaves != 3 {
			t.Fatalf("sweep before the timeout: %+v; want only %s young", r, old)
		}
		time.Sleep(time.Second)
		r, err = b.Sweep(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Removed) != 1 || r.Removed[0].Leaf != old || len(r.Young) != 0 {
			t.Fatalf("sweep after the timeout: %+v; want %s removed", r, old)
		}
		if r, err = b.Sweep(ctx, 0); err != nil || len(r.Removed)+len(r.Young) != 0 {
			t.Fatalf("second sweep: %+v, %v", r, err)
		}
		if v, err := other.Get(ctx, "x"); err != nil || string(v) != "X" {
			t.Fatalf("store s.leaf: x = %q, %v", v, err)
		}
		checkStore(t, b, map[string]string{"a": "A", "b": "A", "c": "A", "d": "A"}, func(name string) bool {
			return name == indexName("s.leaf") || slices.ContainsFunc(other.Leaves(), func(e plan.Entry) bool { return e.Leaf == name })
		})
	})
}

// A client dies after writing its split's left leaf: the new leaf is
// named only by the mark. Past the timeout a sweep removes nothing (the
// mark names it; the cleanup of the client that meets the mark decides);
// after that cleanup rolled the split back, nothing is left to sweep.
func TestSweepLeavesMarkedLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{MarkTimeout: time.Second})
		ctx := context.Background()
		a.afterStep = func(step string) error {
			if step == stepRightFails {
				return errDied
			}
			return nil
		}
		if err := a.Put(ctx, "e", []byte("A")); !errors.Is(err, errDied) {
			t.Fatalf("a: %v", err)
		}
		time.Sleep(2 * time.Second)
		r, err := b.Sweep(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Removed)+len(r.Young) != 0 || r.Leaves != 2 {
			t.Fatalf("sweep of a marked split: %+v; want 2 leaves, nothing orphaned", r)
		}
		if err := b.Put(ctx, "bb", []byte("B")); err != nil {
			t.Fatal(err)
		}
		if r, err = b.Sweep(ctx, 0); err != nil || len(r.Removed)+len(r.Young) != 0 {
			t.Fatalf("sweep after the cleanup: %+v, %v", r, err)
		}
		checkStore(t, b, map[string]string{"a": "A", "b": "A", "c": "A", "d": "A", "bb": "B"}, func(string) bool { return false })
	})
}

// The owner stalls after reading the leaf; a cleaner takes its split
// over and rolls it back (no new leaf existed), then splits the leaf
// itself; the owner resumes and writes both
// new leaves, which the index will never name (its swap fails and it
// retries with a split of its own). The sweep leaves them while young
// and removes them after the timeout; the store then has no stray object.
func TestSweepRolledBackOwnersLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{MarkTimeout: time.Second})
		ctx := context.Background()
		stalled, resume := make(chan struct{}), make(chan struct{})
		first := true
		a.afterStep = func(step string) error {
			if step == stepRead && first {
				first = false
				close(stalled)
				<-resume
			}
			return nil
		}
		done := make(chan error, 1)
		go func() { done <- a.Put(ctx, "e", []byte("A")) }()
		<-stalled
		if err := b.Put(ctx, "bb", []byte("B")); err != nil {
			t.Fatal(err)
		}
		close(resume)
		if err := <-done; err != nil {
			t.Fatalf("a after it resumed: %v", err)
		}
		r, err := b.Sweep(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Removed) != 0 || len(r.Young) != 2 {
			t.Fatalf("sweep before the timeout: %+v; want a's two rolled-back leaves young", r)
		}
		time.Sleep(time.Second)
		if r, err = b.Sweep(ctx, 0); err != nil || len(r.Removed) != 2 || len(r.Young) != 0 {
			t.Fatalf("sweep after the timeout: %+v, %v; want 2 removed", r, err)
		}
		for _, o := range r.Removed {
			if o.Frozen != "" {
				t.Fatalf("removed %+v: a new leaf, never frozen", o)
			}
		}
		checkStore(t, b, map[string]string{"a": "A", "b": "A", "c": "A", "d": "A", "bb": "B", "e": "A"}, func(string) bool { return false })
	})
}

// A sweep with no age margin runs in the middle of a live split, a
// rebalance and a merge, after each of their steps: it removes nothing
// the operation needs (at most the old leaves once swapped out, which
// the owner would remove next), and the operation completes with nothing
// lost and no stray object.
func TestSweepRacesLiveOperations(t *testing.T) {
	for _, sc := range scenarios {
		for _, step := range sc.steps {
			t.Run(sc.name+"/"+step, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					a, _, c, model := sc.start(t)
					ctx := context.Background()
					before := map[string]bool{}
					for _, e := range a.Leaves() {
						before[e.Leaf] = true
					}
					swept := 0
					a.afterStep = func(s string) error {
						if s != step {
							return nil
						}
						time.Sleep(time.Second) // every leaf is older than the margin
						r, err := c.Sweep(ctx, time.Nanosecond)
						if err != nil {
							t.Errorf("sweep: %v", err)
						}
						for _, o := range r.Removed {
							if !before[o.Leaf] || o.Frozen == "" || !strings.HasSuffix(step, stepSwapped) {
								t.Errorf("the sweep after %s removed %+v", step, o)
							}
						}
						swept++
						return nil
					}
					if err := sc.apply(ctx, a, model); err != nil {
						t.Fatal(err)
					}
					if swept != 1 {
						t.Fatalf("the operation passed step %s %d times", step, swept)
					}
					checkStore(t, a, model, func(string) bool { return false })
				})
			})
		}
	}
}

func TestIsLeafName(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"kv.s.leaf.0123456789abcdef.7", true},
		{"kv.s.leaf.0123456789abcdef.", false},
		{"kv.s.leaf.0123456789abcdeF.7", false},
		{"kv.s.leaf.0123456789abcde.7", false},
		{"kv.s.leaf.0123456789abcdef.7x", false},
		{"kv.s.leaf.leaf.0123456789abcdef.7", false}, // store "s.leaf"
		{"kv.s.leaf.0123456789abcdef.leaf.0123456789abcdef.7", false},
		{"kv.s.index", false},
		{"kv.t.leaf.0123456789abcdef.7", false},
	} {
		if got := isLeafName(tt.name, "kv.s.leaf."); got != tt.want {
			t.Errorf("isLeafName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

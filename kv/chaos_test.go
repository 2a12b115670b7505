package kv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

var osdFailureSeeds = flag.Int("kv.chaos.seeds", 3, "how many seeds TestRandomOSDFailures runs")

// Seeded: four clients put and remove shared keys (two of them may die
// at random steps of their splits, joins and cleanups) while OSDs are
// stopped, killed and restarted and links between OSDs, and between a
// client and an OSD, are cut and mended; a fifth client scans the whole
// store page by page the whole time, and every pass must be in key order
// with no duplicate and hold every key of a set no one writes. Two
// writers of a key race, so the model keeps each key's operations with
// their start and end on one logical clock: the key's final value must
// be that of an operation no other operation of the key began after the
// end of (an operation whose client died is not applied: it dies before
// its write). At the end, with every fault mended and past the mark
// timeout, every leaf is looked at once more and the pool swept: the
// store holds one of its possible values for every key, Check finds
// nothing, and the pool holds only the index and its leaves.
func TestRandomOSDFailures(t *testing.T) {
	for seed := range uint64(*osdFailureSeeds) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomOSDFailures(t, seed) })
		})
	}
}

// keyOp is one completed put (absent false) or remove of a key, with
// its start and end on the test's logical clock.
type keyOp struct {
	start, end uint64
	val        string
	absent     bool
}

func randomOSDFailures(t *testing.T, seed uint64) {
	c, connect := simCluster(t, 100+seed)
	ctx := context.Background()
	cfg := Config{MarkTimeout: time.Second, Retries: 200}
	admin, err := Create(ctx, connect("client.admin"), "s", Options{K: 3}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Stable keys: written once before, never touched after; every scan
	// pass must hold them all.
	stable := map[string]string{}
	for i := range 12 {
		k := fmt.Sprintf("k%02d.stable", i*3)
		stable[k] = "stable"
		if err := admin.Put(ctx, k, []byte("stable")); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	var clock atomic.Uint64
	var mu sync.Mutex
	history := map[string][]keyOp{}
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	var deaths, ops atomic.Int64
	for w := range writers {
		s, err := Open(ctx, connect(fmt.Sprintf("client.%d", w)), "s", cfg)
		if err != nil {
			t.Fatal(err)
		}
		wr := rand.New(rand.NewPCG(seed, uint64(w)))
		dead := false
		s.afterStep = func(string) error {
			if w >= 2 && wr.IntN(40) == 0 { // clients 0 and 1 live on
				dead = true
				return errDied
			}
			return nil
		}
		wg.Go(func() {
			for i := 0; !dead && !stopped(); i++ {
				time.Sleep(time.Duration(5+wr.IntN(40)) * time.Millisecond)
				key := fmt.Sprintf("k%02d", wr.IntN(36))
				op := keyOp{start: clock.Add(1)}
				var err error
				if wr.IntN(3) == 0 {
					op.absent = true
					err = s.Remove(ctx, key)
				} else {
					op.val = fmt.Sprintf("%d.%d", w, i)
					err = s.Put(ctx, key, []byte(op.val))
				}
				op.end = clock.Add(1)
				if errors.Is(err, errDied) {
					deaths.Add(1)
					return
				}
				if err != nil {
					errs <- fmt.Errorf("client %d: %s: %w", w, key, err)
					return
				}
				ops.Add(1)
				mu.Lock()
				history[key] = append(history[key], op)
				mu.Unlock()
			}
		})
	}
	scanner, err := Open(ctx, connect("client.scanner"), "s", cfg)
	if err != nil {
		t.Fatal(err)
	}
	passes := 0
	wg.Go(func() {
		for !stopped() {
			if err := scanPass(ctx, scanner, stable); err != nil {
				errs <- fmt.Errorf("scan pass %d: %w", passes, err)
				return
			}
			passes++
		}
	})

	// The faults, one at a time: each lasts a few hundred milliseconds
	// of the writers' work.
	ids := slices.Sorted(maps.Keys(c.OSDs))
	done := map[string]int{}
	for range 6 {
		time.Sleep(time.Duration(100+rng.IntN(300)) * time.Millisecond)
		o := c.OSDs[ids[rng.IntN(len(ids))]]
		other := c.OSDs[ids[(slices.Index(ids, o.ID)+1+rng.IntN(len(ids)-1))%len(ids)]]
		var mend func()
		switch k := rng.IntN(4); k {
		case 0:
			c.StopOSD(o.ID)
			mend = func() { c.StartOSD(o.ID) }
			done["stop"]++
		case 1:
			c.KillOSD(o.ID) // the monitors are not told
			mend = func() { c.StartOSD(o.ID) }
			done["kill"]++
		case 2:
			c.Net.Partition(o.Addr, other.Addr)
			mend = c.Net.Heal
			done["partition osds"]++
		default:
			c.Net.Partition(fmt.Sprintf("client.%d", rng.IntN(writers)), o.Addr)
			mend = c.Net.Heal
			done["partition client"]++
		}
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		mend()
	}
	c.WaitForEpoch(c.Epoch())
	time.Sleep(500 * time.Millisecond) // the writers work on the mended cluster
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Past the timeout, a last look at every leaf, then the sweep.
	time.Sleep(2 * time.Second)
	if err := admin.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range admin.Leaves() {
		if err := admin.cleanup(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	swept, err := admin.Sweep(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(swept.Young) != 0 {
		t.Fatalf("young orphans on a quiet store: %+v", swept.Young)
	}

	fresh, err := Open(ctx, admin.io, "s", Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	ps, more, err := fresh.List(ctx, "", "", 10000)
	if err != nil || more {
		t.Fatalf("final scan: more %v, %v", more, err)
	}
	for _, p := range ps {
		got[p.Key] = string(p.Value)
	}
	for k, v := range stable {
		if got[k] != v {
			t.Fatalf("stable key %s = %q", k, got[k])
		}
		delete(got, k)
	}
	for i := range 36 {
		key := fmt.Sprintf("k%02d", i)
		v, present := got[key]
		delete(got, key)
		if ok, possible := possibleFinal(history[key], v, present); !ok {
			t.Fatalf("key %s: present %v value %q; possible: %v (history %+v)", key, present, v, possible, history[key])
		}
	}
	if len(got) != 0 {
		t.Fatalf("keys no one wrote: %v", got)
	}
	problems, _, err := fresh.Check(ctx)
	if err != nil || len(problems) != 0 {
		t.Fatalf("check: %v, %v", problems, err)
	}
	names := map[string]bool{indexName("s"): true}
	for _, e := range fresh.Leaves() {
		names[e.Leaf] = true
	}
	for o, err := range admin.io.Objects(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if !names[o.Name] {
			t.Fatalf("object %s is neither the index nor a leaf after the sweep", o.Name)
		}
	}
	if passes == 0 || ops.Load() == 0 {
		t.Fatalf("%d scan passes, %d operations", passes, ops.Load())
	}
	t.Logf("seed %d: faults %v; %d operations, %d clients died, %d scan passes, %d orphans swept, %d keys, %d leaves",
		seed, done, ops.Load(), deaths.Load(), passes, len(swept.Removed), len(ps), len(fresh.Leaves()))
}

// possibleFinal reports whether a key's final state (present with value
// v, or absent) is that of an operation of its history that no other
// began after the end of (absent if it has no history), and lists those
// possible states.
func possibleFinal(history []keyOp, v string, present bool) (bool, []string) {
	if len(history) == 0 {
		return !present, []string{"absent"}
	}
	var possible []string
	ok := false
	for _, o := range history {
		last := true
		for _, p := range history {
			if p.start > o.end {
				last = false
				break
			}
		}
		if !last {
			continue
		}
		if o.absent {
			possible = append(possible, "absent")
			ok = ok || !present
		} else {
			possible = append(possible, o.val)
			ok = ok || (present && v == o.val)
		}
	}
	return ok, possible
}

// scanPass lists the whole store in pages of 5 and checks that the keys
// come in strictly increasing order (no duplicate) and that every stable
// key is there with its value (no gap).
func scanPass(ctx context.Context, s *Store, stable map[string]string) error {
	seen := map[string]bool{}
	last, start := "", ""
	for {
		ps, more, err := s.List(ctx, start, "", 5)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if last != "" && p.Key <= last {
				return fmt.Errorf("key %q after %q", p.Key, last)
			}
			last = p.Key
			if v, ok := stable[p.Key]; ok {
				if string(p.Value) != v {
					return fmt.Errorf("stable key %q = %q", p.Key, p.Value)
				}
				seen[p.Key] = true
			}
		}
		if !more {
			break
		}
		start = last + "\x00"
	}
	if len(seen) != len(stable) {
		return fmt.Errorf("%d of the %d stable keys seen", len(seen), len(stable))
	}
	return nil
}

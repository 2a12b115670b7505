package rbd_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rbd"
)

// asyncRounds is how many batches TestAsyncAgainstModel issues, and
// asyncSeeds how many seeds it runs (go test ./rbd -run TestAsyncAgainstModel
// -rbd.async-rounds 200 -rbd.async-seeds 10 for a soak).
var (
	asyncRounds = flag.Int("rbd.async-rounds", 5, "batches of asynchronous calls per seed in TestAsyncAgainstModel")
	asyncSeeds  = flag.Int("rbd.async-seeds", 1, "seeds TestAsyncAgainstModel runs")
)

// smallCache is a cache small enough for the tests to fill: eviction,
// the flusher's target and writers waiting at max dirty all happen.
func smallCache() *rbd.CacheOptions {
	o := rbd.DefaultCacheOptions()
	o.Size, o.MaxDirty, o.TargetDirty = 256*kib, 128*kib, 64*kib
	o.WritethroughUntilFlush = false
	return &o
}

// Batches of asynchronous writes, reads, discards and flushes issued
// without waiting, many overlapping (a hot 256 KiB), checked against a
// model updated in issue order: a read returns what the calls issued
// before it wrote, whatever the interleaving. With the cache off and on
// (a small one); then the image reopened without the cache holds the
// model.
func TestAsyncAgainstModel(t *testing.T) {
	for seed, cached := range func(yield func(int, bool) bool) {
		for seed := range *asyncSeeds {
			for _, cached := range []bool{false, true} {
				if !yield(seed, cached) {
					return
				}
			}
		}
	} {
		t.Run(fmt.Sprintf("seed=%d/cache=%v", seed, cached), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, p := cluster(t)
				ctx := context.Background()
				const size = 1 * mib
				if err := p.Create(ctx, "disk", size, rbd.CreateOptions{Order: 16}); err != nil {
					t.Fatal(err)
				}
				o := rbd.OpenOptions{MaxAsync: 8}
				if cached {
					o.Cache = smallCache()
				}
				img, err := p.Open(ctx, "disk", o)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(3, uint64(4+seed)))
				model := make([]byte, size)
				type call struct {
					c         *rbd.Completion
					what      string
					buf, want []byte
				}
				for round := range *asyncRounds {
					var calls []call
					for range 40 {
						span := size
						if rng.IntN(2) == 0 {
							span = 256 * kib
						}
						off := rng.IntN(span - 1)
						n := 1 + rng.IntN(min(span-off, 64*kib))
						switch k := rng.IntN(10); {
						case k < 4:
							data := random(rng, n)
							calls = append(calls, call{c: img.WriteAsync(ctx, data, uint64(off)), what: fmt.Sprintf("write [%d,+%d)", off, n)})
							copy(model[off:], data)
						case k < 7:
							buf := make([]byte, n)
							calls = append(calls, call{c: img.ReadAsync(ctx, buf, uint64(off)), what: fmt.Sprintf("read [%d,+%d)", off, n),
								buf: buf, want: bytes.Clone(model[off : off+n])})
						case k < 8:
							calls = append(calls, call{c: img.DiscardAsync(ctx, uint64(off), uint64(n)), what: fmt.Sprintf("discard [%d,+%d)", off, n)})
							clear(model[off : off+n])
						default:
							calls = append(calls, call{c: img.FlushAsync(ctx), what: "flush"})
						}
					}
					for i, c := range calls {
						if err := c.c.Wait(); err != nil {
							t.Fatalf("round %d call %d (%s): %v", round, i, c.what, err)
						}
						if c.want != nil && !bytes.Equal(c.buf, c.want) {
							t.Fatalf("round %d call %d (%s): read differs from the writes issued before it", round, i, c.what)
						}
					}
				}
				if err := img.FlushAsync(ctx).Wait(); err != nil {
					t.Fatal(err)
				}
				if got := read(t, img); !bytes.Equal(got, model) {
					t.Fatal("the image differs from the model")
				}
				if err := img.Close(ctx); err != nil {
					t.Fatal(err)
				}
				again, err := p.Open(ctx, "disk", rbd.OpenOptions{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				if got := read(t, again); !bytes.Equal(got, model) {
					t.Fatal("reopened, the image differs from the model")
				}
				if err := again.Close(ctx); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// Overlapping writes issued at once complete in issue order (each one's
// Done is closed only after every earlier one's) and the last one issued
// is what the image holds; a flush issued after them completes after all
// of them; a read issued after them sees the last.
func TestAsyncOverlappingWritesInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 1*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		img, err := p.Open(ctx, "disk", rbd.OpenOptions{MaxAsync: 32})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		const n = 24
		cs := make([]*rbd.Completion, n)
		var mu sync.Mutex
		var problems []string
		var last []byte
		for i := range cs {
			// Each spans objects 0 and 1 (64 KiB objects), at shifting offsets.
			off := uint64(32*kib + rng.IntN(16*kib))
			last = bytes.Repeat([]byte{byte(i + 1)}, 64*kib)
			cs[i] = img.WriteAsync(ctx, last, off)
			cs[i].OnDone(func(err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					problems = append(problems, fmt.Sprintf("write %d: %v", i, err))
				}
				for j := range i {
					select {
					case <-cs[j].Done():
					default:
						problems = append(problems, fmt.Sprintf("write %d completed before write %d", i, j))
					}
				}
			})
			if i == n-1 { // the last write covers [64 KiB, 96 KiB) whatever its offset
				buf := make([]byte, 32*kib)
				flush := img.FlushAsync(ctx)
				rd := img.ReadAsync(ctx, buf, 64*kib)
				if err := flush.Wait(); err != nil {
					t.Fatal(err)
				}
				for j, c := range cs {
					select {
					case <-c.Done():
					default:
						t.Fatalf("the flush completed before write %d", j)
					}
				}
				if err := rd.Wait(); err != nil || !bytes.Equal(buf, bytes.Repeat([]byte{byte(n)}, 32*kib)) {
					t.Fatalf("read after the writes: %v, %x...", err, buf[:4])
				}
			}
		}
		for _, c := range cs {
			if err := c.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		if err := img.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// MaxAsync bounds the calls in flight: with 1, a call issued while
// another is in flight waits for it (even on another range), and one
// whose context has ended completes at once with the context's error.
func TestAsyncMaxInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 1*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		img := openImage(t, p, "disk", rbd.OpenOptions{MaxAsync: 1})
		for i := range 5 {
			a := img.WriteAsync(ctx, bytes.Repeat([]byte{1}, 64*kib), 0)
			b := img.ReadAsync(ctx, make([]byte, 4*kib), 512*kib)
			select {
			case <-a.Done():
			default:
				t.Fatalf("round %d: a second call was issued while the first was in flight (MaxAsync 1)", i)
			}
			if err := b.Wait(); err != nil || a.Err() != nil {
				t.Fatal(err, a.Err())
			}
		}
		a := img.WriteAsync(ctx, make([]byte, 64*kib), 0)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := img.ReadAsync(cctx, make([]byte, 10), 0).Wait(); !errors.Is(err, context.Canceled) {
			t.Fatalf("a call whose context ended waiting for a slot: %v", err)
		}
		if err := a.Wait(); err != nil {
			t.Fatal(err)
		}
		var got error = errors.New("not called")
		c := img.FlushAsync(ctx)
		_ = c.Wait()
		c.OnDone(func(err error) { got = err }) // complete already: called at once
		if got != nil {
			t.Fatalf("OnDone on a complete call: %v", got)
		}
	})
}

package rbd_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

// openImage opens image name and closes it when the test ends (if the
// test did not), so a failed test leaves no flusher behind.
func openImage(t *testing.T, p *rbd.Pool, name string, o rbd.OpenOptions) *rbd.Image {
	t.Helper()
	img, err := p.Open(context.Background(), name, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = img.Close(context.Background()) })
	return img
}

// writeBack is a cache that writes back only when asked (Flush, a full
// cache): an hour's age, targets at the cache's size.
func writeBack() *rbd.CacheOptions {
	return &rbd.CacheOptions{Size: 8 * mib, MaxDirty: 8 * mib, TargetDirty: 8 * mib, MaxDirtyAge: time.Hour}
}

// With the cache on, writes stay in it until Flush (no data object is
// made, another opener reads zeros) while the writer reads them back;
// Flush writes them all; random unaligned writes, discards and reads
// then match a model through the cache and, after Close (which flushes),
// without it. A snapshot has the writes cached before it.
func TestCacheWriteBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, p := cluster(t)
		ctx := context.Background()
		const size = 1 * mib
		if err := p.Create(ctx, "disk", size, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		img := openImage(t, p, "disk", rbd.OpenOptions{Cache: writeBack()})
		prefix := img.Stat().BlockNamePrefix
		rng := rand.New(rand.NewPCG(1, 1))
		model := make([]byte, size)
		for range 20 {
			off := rng.IntN(size - 1)
			data := random(rng, 1+rng.IntN(min(size-off, 40*kib)))
			if err := img.WriteAt(ctx, data, uint64(off)); err != nil {
				t.Fatal(err)
			}
			copy(model[off:], data)
		}
		if got := read(t, img); !bytes.Equal(got, model) {
			t.Fatal("the writer does not read its cached writes back")
		}
		if objs := objects(t, conn, "rbd", prefix); len(objs) != 0 {
			t.Fatalf("data objects %v before any flush: the writes were not cached", objs)
		}
		other := openImage(t, p, "disk", rbd.OpenOptions{ReadOnly: true})
		if got := read(t, other); !bytes.Equal(got, make([]byte, size)) {
			t.Fatal("another opener reads data not yet flushed")
		}
		if st := img.CacheStats(); st.DirtyBytes == 0 || st.Bytes < st.DirtyBytes {
			t.Fatalf("cache stats %+v", st)
		}
		if err := img.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if st := img.CacheStats(); st.DirtyBytes != 0 {
			t.Fatalf("dirty after flush: %+v", st)
		}
		if got := read(t, other); !bytes.Equal(got, model) {
			t.Fatal("after Flush, another opener does not read the writes")
		}

		// A mix through the cache: the writer always reads the model.
		for op := range 150 {
			off := rng.IntN(size - 1)
			n := 1 + rng.IntN(min(size-off, 50*kib))
			switch k := rng.IntN(10); {
			case k < 5:
				data := random(rng, n)
				if err := img.WriteAt(ctx, data, uint64(off)); err != nil {
					t.Fatal(err)
				}
				copy(model[off:], data)
			case k < 8:
				buf := make([]byte, n)
				if err := img.ReadAt(ctx, buf, uint64(off)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf, model[off:off+n]) {
					t.Fatalf("op %d: read [%d,+%d) differs from the model", op, off, n)
				}
			case k < 9:
				if err := img.Discard(ctx, uint64(off), uint64(n)); err != nil {
					t.Fatal(err)
				}
				clear(model[off : off+n])
			default:
				if err := img.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Allocated extents (NBD block status, export) count cached writes.
		if err := img.Discard(ctx, 512*kib, 128*kib); err != nil {
			t.Fatal(err)
		}
		clear(model[512*kib : 640*kib])
		if err := img.WriteAt(ctx, []byte("cached"), 600*kib); err != nil {
			t.Fatal(err)
		}
		copy(model[600*kib:], "cached")
		if ext, err := img.AllocatedExtents(ctx, 512*kib, 128*kib); err != nil || len(ext) == 0 {
			t.Fatalf("allocated extents over a cached write: %v %v", ext, err)
		}
		if err := img.WriteAt(ctx, []byte("before the snapshot"), 0); err != nil {
			t.Fatal(err)
		}
		copy(model, "before the snapshot")
		if err := img.SnapCreate(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		at := openImage(t, p, "disk", rbd.OpenOptions{Snap: "s"})
		if got := read(t, at); !bytes.Equal(got, model) {
			t.Fatal("the snapshot lacks the writes cached before it")
		}
		if err := img.WriteAt(ctx, []byte("after"), 0); err != nil {
			t.Fatal(err)
		}
		copy(model, "after")
		if err := img.Close(ctx); err != nil {
			t.Fatal(err)
		}
		again := openImage(t, p, "disk", rbd.OpenOptions{})
		if got := read(t, again); !bytes.Equal(got, model) {
			t.Fatal("reopened without the cache, the image differs from the model: Close did not flush")
		}
	})
}

// With the defaults, writes go through until the first Flush (another
// opener sees each at once), and are cached after it.
func TestCacheWritethroughUntilFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 1*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		o := rbd.DefaultCacheOptions()
		o.MaxDirtyAge = time.Hour
		img := openImage(t, p, "disk", rbd.OpenOptions{Cache: &o})
		other := openImage(t, p, "disk", rbd.OpenOptions{ReadOnly: true})
		peek := func() string {
			buf := make([]byte, 6)
			if err := other.ReadAt(ctx, buf, 0); err != nil {
				t.Fatal(err)
			}
			return string(buf)
		}
		if err := img.WriteAt(ctx, []byte("first!"), 0); err != nil {
			t.Fatal(err)
		}
		if got := peek(); got != "first!" {
			t.Fatalf("before any flush the write is not through: %q", got)
		}
		if err := img.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := img.WriteAt(ctx, []byte("second"), 0); err != nil {
			t.Fatal(err)
		}
		if got := peek(); got != "first!" {
			t.Fatalf("after a flush the write went through: %q", got)
		}
		if err := img.WriteAtFUA(ctx, []byte("third!"), 0); err != nil {
			t.Fatal(err)
		}
		if got := peek(); got != "third!" {
			t.Fatalf("a FUA write is not through: %q", got)
		}
	})
}

// A write-back that fails (the client blocklisted) is returned by Flush
// and the data stays dirty; once the client is let back, Flush writes it
// and the image holds it.
func TestCacheWriteBackFailureSurfacesInFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, conn, p := simCluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 1*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		img := openImage(t, p, "disk", rbd.OpenOptions{Cache: writeBack()})
		data := random(rand.New(rand.NewPCG(2, 2)), 100*kib)
		if err := img.WriteAt(ctx, data, 10*kib); err != nil {
			t.Fatal(err)
		}
		c.Run("osd blocklist add", "addr", conn.Instance())
		c.WaitForEpoch(c.Epoch())
		if err := img.Flush(ctx); !errors.Is(err, rados.ErrBlocklisted) {
			t.Fatalf("Flush with the client blocklisted: %v, want rados.ErrBlocklisted", err)
		}
		if st := img.CacheStats(); st.DirtyBytes != 100*kib {
			t.Fatalf("after a failed write-back: %+v, want 100 KiB dirty", st)
		}
		buf := make([]byte, len(data))
		if err := img.ReadAt(ctx, buf, 10*kib); err != nil || !bytes.Equal(buf, data) {
			t.Fatalf("the dirty data is not read back after the failure: %v", err)
		}
		c.Run("osd blocklist rm", "addr", conn.Instance())
		c.WaitForEpoch(c.Epoch())
		if err := img.Flush(ctx); err != nil {
			t.Fatalf("Flush once let back: %v", err)
		}
		if err := img.Close(ctx); err != nil {
			t.Fatal(err)
		}
		again := openImage(t, p, "disk", rbd.OpenOptions{ReadOnly: true})
		if err := again.ReadAt(ctx, buf, 10*kib); err != nil || !bytes.Equal(buf, data) {
			t.Fatalf("the data written back after the failure: %v", err)
		}
	})
}

// Two openers: one writing through its cache, the other asking for the
// exclusive lock. The holder writes its cache back before it lets the
// lock go, so the other reads every cached write; when the first takes
// the lock back it does not read its own stale clean blocks.
func TestCacheLockHandoverFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, p := simCluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 1*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		q, err := rbd.NewPool(c.Client("client.rbd"), "rbd", rbd.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a := openImage(t, p, "disk", rbd.OpenOptions{Cache: writeBack()})
		b := openImage(t, q, "disk", rbd.OpenOptions{})
		rng := rand.New(rand.NewPCG(4, 4))
		model := make([]byte, 1*mib)
		for i := range 6 {
			w := a
			if i%2 == 1 {
				w = b
			}
			for range 5 {
				off := rng.IntN(len(model) - 64*kib)
				data := random(rng, 1+rng.IntN(64*kib))
				if err := w.WriteAt(ctx, data, uint64(off)); err != nil {
					t.Fatal(err)
				}
				copy(model[off:], data)
			}
			// After b's turn each reads the other's writes: a's cached
			// ones were written back before b took the lock, and a's
			// clean blocks went with the lock. (After a's turn only a
			// does: reads take no lock, and a's writes are cached.)
			readers := []*rbd.Image{a, b}
			if w == a {
				readers = readers[:1]
			}
			for _, r := range readers {
				if got := read(t, r); !bytes.Equal(got, model) {
					t.Fatalf("round %d: an opener reads other than the model (a owns %v)", i, a.LockOwner())
				}
			}
		}
		if a.LockOwner() {
			t.Fatal("a holds the lock after b's last writes")
		}
		if st := a.CacheStats(); st.DirtyBytes != 0 {
			t.Fatalf("a gave the lock up with dirty data: %+v", st)
		}
	})
}

// A cache smaller than what is written: writers wait at max dirty, the
// flusher writes back toward the target, clean blocks are evicted, and
// the memory held stays within the cache's size.
func TestCacheBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		const size = 2 * mib
		if err := p.Create(ctx, "disk", size, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		o := smallCache()
		img := openImage(t, p, "disk", rbd.OpenOptions{Cache: o})
		rng := rand.New(rand.NewPCG(6, 6))
		model := make([]byte, size)
		for range 300 {
			off := rng.IntN(size/(4*kib)) * 4 * kib
			data := random(rng, 4*kib)
			if err := img.WriteAt(ctx, data, uint64(off)); err != nil {
				t.Fatal(err)
			}
			copy(model[off:], data)
			if st := img.CacheStats(); st.Bytes > o.Size || st.DirtyBytes > o.MaxDirty+4*kib {
				t.Fatalf("cache over its bounds: %+v", st)
			}
		}
		if got := read(t, img); !bytes.Equal(got, model) {
			t.Fatal("the image differs from the model")
		}
		if err := img.Close(ctx); err != nil {
			t.Fatal(err)
		}
		again := openImage(t, p, "disk", rbd.OpenOptions{ReadOnly: true})
		if got := read(t, again); !bytes.Equal(got, model) {
			t.Fatal("reopened, the image differs from the model")
		}
	})
}

// DefaultCacheOptions are the defaults of the rbd_cache_* options of the
// config schema (docs/CONFIG.md), which are librbd's.
func TestDefaultCacheOptionsMatchTheSchema(t *testing.T) {
	d := rbd.DefaultCacheOptions()
	for name, want := range map[string]string{
		"rbd_cache_size":                     strconv.FormatUint(d.Size, 10),
		"rbd_cache_max_dirty":                strconv.FormatUint(d.MaxDirty, 10),
		"rbd_cache_target_dirty":             strconv.FormatUint(d.TargetDirty, 10),
		"rbd_cache_max_dirty_age":            d.MaxDirtyAge.String(),
		"rbd_cache_writethrough_until_flush": strconv.FormatBool(d.WritethroughUntilFlush),
		"rbd_cache":                          "false",
	} {
		o, ok := config.Lookup(name)
		if !ok || o.Default != want {
			t.Errorf("%s: schema default %q (%v), DefaultCacheOptions %q", name, o.Default, ok, want)
		}
	}
}

// A rollback and a shrink with writes cached: the cache is written back
// first and its clean blocks dropped, so the image reads as the snapshot
// after the rollback, and as zeros beyond the old end after a shrink and
// a grow.
func TestCacheRollbackAndResize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		const size = 512 * kib
		if err := p.Create(ctx, "disk", size, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		img := openImage(t, p, "disk", rbd.OpenOptions{Cache: writeBack()})
		rng := rand.New(rand.NewPCG(7, 7))
		before := random(rng, size)
		if err := img.WriteAt(ctx, before, 0); err != nil {
			t.Fatal(err)
		}
		if err := img.SnapCreate(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := img.WriteAt(ctx, random(rng, 100*kib), 50*kib); err != nil {
			t.Fatal(err)
		}
		if err := img.SnapRollback(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if got := read(t, img); !bytes.Equal(got, before) {
			t.Fatal("after the rollback the image differs from the snapshot")
		}
		if err := img.WriteAt(ctx, random(rng, 64*kib), size-64*kib); err != nil {
			t.Fatal(err)
		}
		if err := img.Resize(ctx, size-128*kib, rbd.ResizeOptions{AllowShrink: true}); err != nil {
			t.Fatal(err)
		}
		if err := img.Resize(ctx, size, rbd.ResizeOptions{}); err != nil {
			t.Fatal(err)
		}
		want := bytes.Clone(before)
		clear(want[size-128*kib:])
		if got := read(t, img); !bytes.Equal(got, want) {
			t.Fatal("after a shrink and a grow the image differs: cached bytes beyond the old end came back")
		}
	})
}

// Two openers, both with the cache, taking turns with a write and then
// a batch of asynchronous writes and reads: each turn moves the exclusive
// lock (the last holder writing its cache back first), and every read
// sees the model, whichever opener wrote last.
func TestCacheTwoCachedWritersAsync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, p := simCluster(t)
		ctx := context.Background()
		const size = 512 * kib
		if err := p.Create(ctx, "disk", size, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		q, err := rbd.NewPool(c.Client("client.rbd"), "rbd", rbd.Options{})
		if err != nil {
			t.Fatal(err)
		}
		imgs := []*rbd.Image{
			openImage(t, p, "disk", rbd.OpenOptions{Cache: smallCache()}),
			openImage(t, q, "disk", rbd.OpenOptions{Cache: smallCache()}),
		}
		rng := rand.New(rand.NewPCG(8, 8))
		model := make([]byte, size)
		for turn := range 12 {
			img := imgs[turn%2]
			type rd struct {
				c         *rbd.Completion
				buf, want []byte
			}
			// A write first takes the lock: the other opener writes its
			// cache back before it lets go. (Until then this opener's
			// reads would not see the other's cached writes: reads take
			// no lock.)
			first := random(rng, 1+rng.IntN(8*kib))
			if err := img.WriteAt(ctx, first, uint64(turn*kib)); err != nil {
				t.Fatal(err)
			}
			copy(model[turn*kib:], first)
			var writes []*rbd.Completion
			var reads []rd
			for range 16 {
				off := rng.IntN(size - 1)
				n := 1 + rng.IntN(min(size-off, 32*kib))
				if rng.IntN(3) > 0 {
					data := random(rng, n)
					writes = append(writes, img.WriteAsync(ctx, data, uint64(off)))
					copy(model[off:], data)
				} else {
					buf := make([]byte, n)
					reads = append(reads, rd{img.ReadAsync(ctx, buf, uint64(off)), buf, bytes.Clone(model[off : off+n])})
				}
			}
			for _, w := range writes {
				if err := w.Wait(); err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
			}
			for _, r := range reads {
				if err := r.c.Wait(); err != nil || !bytes.Equal(r.buf, r.want) {
					t.Fatalf("turn %d: read %v, or it differs from the model", turn, err)
				}
			}
			if got := read(t, img); !bytes.Equal(got, model) {
				t.Fatalf("turn %d: the writer reads other than the model", turn)
			}
		}
		for _, img := range imgs {
			if err := img.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		again := openImage(t, p, "disk", rbd.OpenOptions{ReadOnly: true})
		if got := read(t, again); !bytes.Equal(got, model) {
			t.Fatal("reopened, the image differs from the model")
		}
	})
}

// A clone written through the cache: the write-back copies up the
// parent's bytes around the cached ones (the clone's way), so after a
// flush the clone, reopened without the cache, has the parent's data
// with the writes over it; reads through the cache read the parent
// where the clone has nothing.
func TestCacheClone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := cluster(t)
		ctx := context.Background()
		const size = 512 * kib
		if err := p.Create(ctx, "base", size, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		base := openImage(t, p, "base", rbd.OpenOptions{})
		rng := rand.New(rand.NewPCG(9, 9))
		model := random(rng, size)
		if err := base.WriteAt(ctx, model, 0); err != nil {
			t.Fatal(err)
		}
		if err := base.SnapCreate(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := base.SnapProtect(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := p.Clone(ctx, nil, "base", "s", "kid", rbd.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		kid := openImage(t, p, "kid", rbd.OpenOptions{Cache: writeBack()})
		if got := read(t, kid); !bytes.Equal(got, model) {
			t.Fatal("through the cache the clone does not read its parent")
		}
		for range 10 {
			off := rng.IntN(size - 1)
			data := random(rng, 1+rng.IntN(min(size-off, 20*kib)))
			if err := kid.WriteAt(ctx, data, uint64(off)); err != nil {
				t.Fatal(err)
			}
			copy(model[off:], data)
		}
		if err := kid.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		again := openImage(t, p, "kid", rbd.OpenOptions{ReadOnly: true})
		if got := read(t, again); !bytes.Equal(got, model) {
			t.Fatal("the clone, written back from the cache, differs from the model")
		}
	})
}

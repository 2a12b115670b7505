package rbd_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rbd"
)

// benchImage starts a monitor and three OSDs (memstores) on loopback
// TCP, in real time, and returns an image of size bytes (4 MiB objects)
// in a pool of size 3, opened with o.
func benchImage(b *testing.B, size uint64, o ...rbd.OpenOptions) *rbd.Image {
	c := sim.New(b, sim.Options{TCP: true})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "32", "size", "3")
	c.WaitForEpoch(c.Epoch())
	p, err := rbd.NewPool(c.Client("client.bench"), "rbd", rbd.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Create(ctx, "bench", size, rbd.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	img, err := p.Open(ctx, "bench", append(o, rbd.OpenOptions{})[0])
	if err != nil {
		b.Fatal(err)
	}
	return img
}

// random4KiB runs op at random 4 KiB-aligned offsets below span, 16 calls
// in flight (as rbd bench's --io-threads 16).
func random4KiB(b *testing.B, img *rbd.Image, span uint64, op func(ctx context.Context, buf []byte, off uint64) error) {
	b.SetBytes(4 << 10)
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
		buf := make([]byte, 4<<10)
		for pb.Next() {
			if err := op(context.Background(), buf, rng.Uint64N(span/4096)*4096); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// 4 KiB random writes over a 1 GiB image, 16 in flight.
func BenchmarkWrite4KiBRandom(b *testing.B) {
	img := benchImage(b, 1<<30)
	random4KiB(b, img, 1<<30, func(ctx context.Context, buf []byte, off uint64) error { return img.WriteAt(ctx, buf, off) })
}

// 4 KiB random writes over a 1 GiB image, 16 in flight, through the
// write-back cache (librbd's defaults), flushed first (so the writes are
// cached from the first) and once more at the end, in the time measured.
func BenchmarkWrite4KiBRandomCache(b *testing.B) {
	o := rbd.DefaultCacheOptions()
	img := benchImage(b, 1<<30, rbd.OpenOptions{Cache: &o})
	if err := img.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	random4KiB(b, img, 1<<30, func(ctx context.Context, buf []byte, off uint64) error { return img.WriteAt(ctx, buf, off) })
	if err := img.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// 4 KiB random writes as BenchmarkWrite4KiBRandom, issued asynchronously
// from one goroutine with 16 in flight (WriteAsync, MaxAsync 16).
func BenchmarkWrite4KiBRandomAsync(b *testing.B) {
	img := benchImage(b, 1<<30, rbd.OpenOptions{MaxAsync: 16})
	b.SetBytes(4 << 10)
	rng := rand.New(rand.NewPCG(1, 2))
	bufs := make([][]byte, 32) // a buffer is reused once its write is done
	for i := range bufs {
		bufs[i] = make([]byte, 4<<10)
	}
	cs := make([]*rbd.Completion, len(bufs))
	i := 0
	for b.Loop() {
		k := i % len(bufs)
		if cs[k] != nil {
			if err := cs[k].Wait(); err != nil {
				b.Fatal(err)
			}
		}
		cs[k] = img.WriteAsync(context.Background(), bufs[k], rng.Uint64N((1<<30)/4096)*4096)
		i++
	}
	for _, c := range cs {
		if c != nil {
			if err := c.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// 4 KiB random reads of 64 MiB written first, 16 in flight.
func BenchmarkRead4KiBRandom(b *testing.B) {
	img := benchImage(b, 64<<20)
	data := make([]byte, 4<<20)
	for off := uint64(0); off < 64<<20; off += 4 << 20 {
		if err := img.WriteAt(context.Background(), data, off); err != nil {
			b.Fatal(err)
		}
	}
	random4KiB(b, img, 64<<20, func(ctx context.Context, buf []byte, off uint64) error { return img.ReadAt(ctx, buf, off) })
}

// 4 MiB sequential writes, one at a time, each durable on return.
func BenchmarkWrite4MiBSequential(b *testing.B) {
	img := benchImage(b, 64<<30)
	data := make([]byte, 4<<20)
	b.SetBytes(int64(len(data)))
	var off uint64
	for b.Loop() {
		if err := img.WriteAt(context.Background(), data, off%(64<<30)); err != nil {
			b.Fatal(err)
		}
		off += uint64(len(data))
	}
}

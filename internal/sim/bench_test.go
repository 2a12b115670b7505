package sim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// benchCluster starts, on loopback TCP with blockstores in a temporary
// directory, one monitor and three OSDs and a pool of size 3, and returns
// a connected client's I/O context. It runs in real time: these are
// benchmarks of the whole I/O path in one process.
func benchCluster(b *testing.B, size int) *rados.IOContext {
	b.Helper()
	return benchClusterOpts(b, size, Options{TCP: true, StoreDir: b.TempDir()})
}

func benchClusterOpts(b testing.TB, size int, opts Options) *rados.IOContext {
	c := New(b, opts)
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "bench", "pg_num", "32", "size", fmt.Sprint(size), "min_size", "1", "yes_i_really_mean_it", "true")
	c.WaitForEpoch(c.Epoch())
	var mons []string
	for _, mi := range c.monmap.Mons {
		mons = append(mons, mi.Name+"="+mi.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := rados.Connect(ctx, rados.Config{Mons: mons, Name: "client.bench", Auth: "none"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	io, err := conn.OpenIOContext("bench")
	if err != nil {
		b.Fatal(err)
	}
	return io
}

// benchWrites writes b.N objects of size bytes with 16 writers, each
// write counted once committed on every replica.
func benchWrites(b *testing.B, replicas, size int) { benchWritesN(b, replicas, size, 16) }

func benchWritesN(b *testing.B, replicas, size, writers int) {
	runWrites(b, benchCluster(b, replicas), size, writers)
}

// runWrites writes b.N objects of size bytes with writers goroutines.
func runWrites(b *testing.B, io *rados.IOContext, size, writers int) {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.SetBytes(int64(size))
	b.ResetTimer()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := io.WriteFull(context.Background(), fmt.Sprintf("obj-%d-%d", w, i), data); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkRadosWrite4KOneWriter(b *testing.B) { benchWritesN(b, 3, 4<<10, 1) }
func BenchmarkRadosWrite4K(b *testing.B)          { benchWrites(b, 3, 4<<10) }
func BenchmarkRadosWrite4M(b *testing.B)          { benchWrites(b, 3, 4<<20) }
func BenchmarkRadosWrite4KSize1(b *testing.B)     { benchWrites(b, 1, 4<<10) }
func BenchmarkRadosWrite4MSize1(b *testing.B)     { benchWrites(b, 1, 4<<20) }

// BenchmarkRadosWrite4KMemStore is the 16-writer 4 KiB benchmark with
// stores in memory: the CPU cost of the I/O path without the disk.
func BenchmarkRadosWrite4KMemStore(b *testing.B) {
	runWrites(b, benchClusterOpts(b, 3, Options{TCP: true}), 4<<10, 16)
}

// BenchmarkRadosRead4K reads 4 KiB objects at random with 16 readers
// from a size-3 pool of 2,048 objects written first.
func BenchmarkRadosRead4K(b *testing.B) { benchReads(b, 3, 4<<10, 2048) }

// BenchmarkRadosRead4M is the same with 64 objects of 4 MiB.
func BenchmarkRadosRead4M(b *testing.B) { benchReads(b, 3, 4<<20, 64) }

func benchReads(b *testing.B, replicas, size, objects int) {
	io := benchCluster(b, replicas)
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(objects); i = next.Add(1) {
				if err := io.WriteFull(context.Background(), fmt.Sprintf("r-%d", i), data); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	next.Store(0)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for w := range 16 {
		wg.Go(func() {
			x := uint64(w)*0x9e3779b97f4a7c15 + 1
			for next.Add(1) <= int64(b.N) {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				name := fmt.Sprintf("r-%d", x%uint64(objects)+1)
				got, err := io.Read(context.Background(), name, 0, uint64(size))
				if err != nil || len(got) != size {
					b.Errorf("read %s: %d bytes, %v", name, len(got), err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkRadosOverwrite4K overwrites 256 objects of 4 KiB (written
// first) with 16 writers; BenchmarkRadosOverwrite4KSnapPool does the same
// in a pool that has a snapshot taken before the objects were written:
// every write reads its object's snap set, none clones. The difference
// is what a snapshot costs a write that preserves nothing.
func BenchmarkRadosOverwrite4K(b *testing.B)         { benchOverwrites(b, false, 0) }
func BenchmarkRadosOverwrite4KSnapPool(b *testing.B) { benchOverwrites(b, true, 0) }

// BenchmarkRadosOverwrite4KSnaps20 overwrites objects that have 20
// clones each: 20 self-managed snapshots, each followed by a rewrite of
// every object, as the acceptance run's objects have by its end (one
// snapshot a second for 20 s). The timed writes clone nothing (no
// snapshot follows the last rewrite): they show what a write pays for a
// large snap set, against BenchmarkRadosOverwrite4KSnapPool's empty one.
func BenchmarkRadosOverwrite4KSnaps20(b *testing.B) { benchOverwrites(b, false, 20) }

func benchOverwrites(b *testing.B, snap bool, selfManaged int) {
	const objects, size = 256, 4 << 10
	io := benchCluster(b, 3)
	ctx := context.Background()
	if snap {
		if _, err := io.CreatePoolSnap(ctx, "s1"); err != nil {
			b.Fatal(err)
		}
	}
	data := make([]byte, size)
	writeAll := func() {
		for i := range objects {
			if err := io.WriteFull(ctx, fmt.Sprintf("o-%d", i), data); err != nil {
				b.Fatal(err)
			}
		}
	}
	writeAll()
	var ids []uint64 // newest first
	for range selfManaged {
		id, err := io.SelfManagedSnapCreate(ctx)
		if err != nil {
			b.Fatal(err)
		}
		ids = append([]uint64{id}, ids...)
		if err := io.SetSnapWriteContext(id, ids); err != nil {
			b.Fatal(err)
		}
		writeAll()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.SetBytes(size)
	b.ResetTimer()
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := io.WriteFull(ctx, fmt.Sprintf("o-%d", i%objects), data); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

package blockstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/bench"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/objid"
)

// Benchmarks of the engine on a real file system (the temporary
// directory: set TMPDIR to choose the disk). docs/BENCHMARKS.md and
// scripts/bench-objectstore.sh compare them with fio.
//
//	go test -run '^$' -bench . ./internal/objectstore/blockstore/
//
// Two runs are behind environment variables because they are long:
//
//	CUTTLE_BENCH_1M=DIR      BenchmarkOpen1M: build (once, kept in DIR) a
//	                         store of 1,000,000 small objects, then time
//	                         Open, the key filter's build and stats of
//	                         present and absent objects, and check memory
//	                         against CacheBytes
//	CUTTLE_BENCH_REPORT=DIR  TestBenchReport: the workloads the script
//	                         compares with fio, as BENCHRESULT JSON lines;
//	                         CUTTLE_BENCH_ONLY=a,b runs only those, and
//	                         CUTTLE_BENCH_PROFILE=DIR writes a CPU profile
//	                         of each measured interval to DIR/NAME.cpu

// openBench makes a store of size bytes in dir (a fresh temporary
// directory if empty) and returns it with its data file's path.
func openBench(tb testing.TB, dir string, size uint64) (*blockstore.Store, string) {
	return openBenchUnit(tb, dir, size, 0)
}

// openBenchUnit is openBench with allocation units of unit bytes (the
// default if 0).
func openBenchUnit(tb testing.TB, dir string, size, unit uint64) (*blockstore.Store, string) {
	tb.Helper()
	if dir == "" {
		dir = tb.TempDir()
	}
	opts := blockstore.Options{Path: filepath.Join(dir, "store"), Size: size, AllocUnit: unit}
	if err := blockstore.Mkfs(opts); err != nil {
		tb.Fatal(err)
	}
	s, err := blockstore.Open(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s, filepath.Join(dir, "store", "block")
}

// runBench runs w for b.N operations and reports bytes and latency.
func runBench(b *testing.B, s objectstore.Store, w bench.Workload) {
	b.Helper()
	ctx := context.Background()
	w.Duration = time.Hour
	// Prefill outside the timer, then b.N operations.
	if w.Kind != bench.SeqWrite {
		if err := bench.Prefill(ctx, s, w); err != nil {
			b.Fatal(err)
		}
	}
	w.TotalBytes = uint64(b.N) * w.BlockSize
	b.SetBytes(int64(w.BlockSize))
	var g0, t0 uint64
	bs, _ := s.(*blockstore.Store)
	if bs != nil {
		g0, t0 = blockstore.GroupStats(bs)
	}
	b.ResetTimer()
	r, err := bench.RunObjectStore(ctx, s, w)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if bs != nil {
		// Transactions per commit group: how many share one WAL sync.
		g1, t1 := blockstore.GroupStats(bs)
		if g1 > g0 {
			b.ReportMetric(float64(t1-t0)/float64(g1-g0), "txn/group")
		}
	}
	b.ReportMetric(r.IOPS, "IOPS")
	b.ReportMetric(float64(r.P50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(r.P99.Microseconds()), "p99-µs")
}

func BenchmarkSeqWrite4M(b *testing.B) {
	s, _ := openBench(b, "", 8<<30)
	runBench(b, s, bench.Workload{Kind: bench.SeqWrite, ObjectSize: 4 << 20, BlockSize: 4 << 20})
}

// BenchmarkQueueWrite4M times Queue alone (the preparation the OSD's
// thread pays under the store's lock) for a 4 MiB overwrite of one
// object carrying its piece checksums, as the OSD sends them; the
// commit of each write is waited for outside the timer.
func BenchmarkQueueWrite4M(b *testing.B) {
	s, _ := openBench(b, "", 1<<30)
	c := objectstore.PGCollection(1, 0)
	o := objid.Object(1, "", "big")
	data := dio.AlignedBuf(4 << 20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	var crcs []uint32
	for p := 0; p < len(data); p += objectstore.DataCRCPiece {
		crcs = append(crcs, crc32.Checksum(data[p:p+objectstore.DataCRCPiece], crc32.MakeTable(crc32.Castagnoli)))
	}
	write := func(t *objectstore.Transaction) *objectstore.Transaction {
		t.Ops = append(t.Ops, objectstore.Op{Code: objectstore.OpWrite, Collection: c, Object: o, Data: data, DataCRCs: crcs})
		return t.SetAttr(c, o, "_", []byte("version"))
	}
	commit := func(t *objectstore.Transaction) { queueTimed(b, s, t) }
	commit(write(new(objectstore.Transaction).CreateCollection(c)))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		commit(write(new(objectstore.Transaction)))
	}
}

// BenchmarkQueueOverwrite4K times Queue alone for a 4 KiB overwrite at
// a random offset of a 4 MiB object in an OSD's geometry (4 KiB units,
// so 1,024 of them), the write an rbd image's 4 KiB random writes make
// on each OSD: the cost of copying and comparing the object's extent
// map shows here (format.UnitMap).
func BenchmarkQueueOverwrite4K(b *testing.B) {
	s, _ := openBenchUnit(b, "", 1<<30, 4096)
	c := objectstore.PGCollection(1, 0)
	o := objid.Object(1, "", "big")
	full := dio.AlignedBuf(4 << 20)
	queueTimed(b, s, new(objectstore.Transaction).CreateCollection(c).Write(c, o, 0, full))
	data := dio.AlignedBuf(4096)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		off := uint64(i*7919%1024) * 4096
		queueTimed(b, s, new(objectstore.Transaction).Write(c, o, off, data).SetAttr(c, o, "_", []byte("version")))
	}
}

// queueTimed queues t on s with the benchmark's timer running, and waits
// for its commit with the timer stopped.
func queueTimed(b *testing.B, s *blockstore.Store, t *objectstore.Transaction) {
	ctx := context.Background()
	comp, err := s.Queue(ctx, t)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := comp.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
}

func BenchmarkSeqRead4M(b *testing.B) {
	// Each of the b.N reads reads a different object once, from the
	// device: the page cache is dropped after the prefill.
	s, block := openBench(b, "", uint64(b.N+1)*(4<<20)+(64<<20))
	w := bench.Workload{Kind: bench.SeqRead, ObjectSize: 4 << 20, BlockSize: 4 << 20, Objects: b.N}
	w.BeforeMeasure = func(context.Context) error { return bench.DropPageCache(block) }
	runBench(b, s, w)
}

func BenchmarkRandWrite4K(b *testing.B) {
	for _, writers := range []int{1, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, _ := openBench(b, "", 1<<30)
			runBench(b, s, bench.Workload{Kind: bench.RandWrite, ObjectSize: 4 << 20, BlockSize: 4096, Objects: 64, Concurrency: writers})
		})
	}
}

func BenchmarkRandRead4K(b *testing.B) {
	s, block := openBench(b, "", 1<<30)
	w := bench.Workload{Kind: bench.RandRead, ObjectSize: 4 << 20, BlockSize: 4096, Objects: 128, Concurrency: 16}
	w.BeforeMeasure = func(context.Context) error { return bench.DropPageCache(block) }
	runBench(b, s, w)
}

// BenchmarkOpen1M builds a store of 1,000,000 objects of 1 KiB (kept in
// $CUTTLE_BENCH_1M so later runs skip building it), then times Open and
// a walk that stats 200,000 of them, and reports the record cache, Go
// heap and process RSS against the 64 MiB cache budget.
func BenchmarkOpen1M(b *testing.B) {
	dir := os.Getenv("CUTTLE_BENCH_1M")
	if dir == "" {
		b.Skip("set CUTTLE_BENCH_1M=DIR to run (builds a store of 1,000,000 objects in DIR)")
	}
	const objects = 1_000_000
	opts := blockstore.Options{Path: filepath.Join(dir, "store1m"), Size: 5 << 30, AllocUnit: 4096, CacheBytes: blockstore.DefaultCacheBytes}
	c := objectstore.PGCollection(1, 0)
	name := func(i int) objid.ID { return objid.Object(1, "", fmt.Sprintf("obj%07d", i)) }
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(opts.Path, "done")); err != nil {
		_ = os.RemoveAll(opts.Path)
		if err := blockstore.Mkfs(opts); err != nil {
			b.Fatal(err)
		}
		s, err := blockstore.Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := objectstore.Apply(ctx, s, new(objectstore.Transaction).CreateCollection(c)); err != nil {
			b.Fatal(err)
		}
		data := make([]byte, 1024)
		const perTxn = 1000
		var last *objectstore.Completion
		for i := 0; i < objects; i += perTxn {
			t := new(objectstore.Transaction)
			for j := i; j < i+perTxn; j++ {
				copy(data, strconv.Itoa(j))
				t.Write(c, name(j), 0, data)
				t.SetAttr(c, name(j), "_", data[:64])
			}
			if last, err = s.Queue(ctx, t); err != nil {
				b.Fatal(err)
			}
			if i%(50*perTxn) == 0 {
				if err := last.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := last.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(opts.Path, "done"), nil, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Logf("built %d objects in %v", objects, time.Since(start).Round(time.Millisecond))
	}
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		start := time.Now()
		s, err := blockstore.Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		openTime := time.Since(start)
		blockstore.WaitKeyFilter(s)
		filterTime := time.Since(start) - openTime
		start = time.Now()
		const walk = 200_000
		for i := range walk {
			if _, err := s.Stat(ctx, c, name(i*(objects/walk))); err != nil {
				b.Fatal(err)
			}
		}
		walkTime := time.Since(start)
		start = time.Now()
		for i := range walk {
			if _, err := s.Stat(ctx, c, name(objects+i)); !errors.Is(err, objectstore.ErrNotFound) {
				b.Fatalf("stat of an absent object: %v", err)
			}
		}
		absentTime := time.Since(start)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rss := rssBytes()
		cached := blockstore.RecordCacheBytes(s)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(openTime.Seconds()*1000, "open-ms")
		b.ReportMetric(float64(walkTime.Microseconds())/walk, "stat-µs")
		b.ReportMetric(filterTime.Seconds()*1000, "filter-ms")
		b.ReportMetric(float64(absentTime.Microseconds())/walk, "absent-stat-µs")
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
		b.ReportMetric(float64(cached)/(1<<20), "cache-MiB")
		if ms.HeapAlloc > 2*uint64(opts.CacheBytes)+64<<20 {
			b.Errorf("heap %d MiB after walking %d objects, cache budget %d MiB", ms.HeapAlloc>>20, walk, opts.CacheBytes>>20)
		}
	}
}

// rssBytes reads the process's resident set size from /proc (0 elsewhere).
func rssBytes() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestBenchReport runs the workloads scripts/bench-objectstore.sh
// compares with fio, on a store in $CUTTLE_BENCH_REPORT, and prints one
// "BENCHRESULT {json}" line per workload. CUTTLE_BENCH_DATA (bytes of the
// sequential data set, default 2 GiB) and CUTTLE_BENCH_SECONDS (random
// workloads' duration, default 10) size it.
func TestBenchReport(t *testing.T) {
	dir := os.Getenv("CUTTLE_BENCH_REPORT")
	if dir == "" {
		t.Skip("set CUTTLE_BENCH_REPORT=DIR to run")
	}
	data := envUint(t, "CUTTLE_BENCH_DATA", 2<<30)
	secs := envUint(t, "CUTTLE_BENCH_SECONDS", 10)
	only := os.Getenv("CUTTLE_BENCH_ONLY")
	_ = os.RemoveAll(filepath.Join(dir, "store"))
	s, block := openBench(t, dir, 2*data+(1<<30))
	dropCache := func(context.Context) error { return bench.DropPageCache(block) }
	const mib4 = 4 << 20
	objs := int(data / mib4)
	runs := []struct {
		name string
		w    bench.Workload
	}{
		{"seq-write", bench.Workload{Kind: bench.SeqWrite, ObjectSize: mib4, TotalBytes: data}},
		{"seq-read", bench.Workload{Kind: bench.SeqRead, ObjectSize: mib4, Objects: objs, BeforeMeasure: dropCache}},
		{"rand-write-1", bench.Workload{Kind: bench.RandWrite, ObjectSize: mib4, Objects: objs}},
		{"rand-write-16", bench.Workload{Kind: bench.RandWrite, ObjectSize: mib4, Objects: objs, Concurrency: 16}},
		{"rand-read-16", bench.Workload{Kind: bench.RandRead, ObjectSize: mib4, Objects: objs, Concurrency: 16, OnePass: true, BeforeMeasure: dropCache}},
	}
	for _, r := range runs {
		if only != "" && !strings.Contains(","+only+",", ","+r.name+",") {
			continue
		}
		w := r.w
		if w.Kind == bench.RandWrite {
			w.Duration = time.Duration(secs) * time.Second
		} else {
			w.Duration = time.Hour
		}
		stop := profileMeasured(t, &w, r.name)
		var cpu0 time.Duration
		before := w.BeforeMeasure
		w.BeforeMeasure = func(ctx context.Context) error {
			if before != nil {
				if err := before(ctx); err != nil {
					return err
				}
			}
			cpu0 = processCPU()
			return nil
		}
		res, err := bench.RunObjectStore(context.Background(), s, w)
		cpu := processCPU() - cpu0
		stop()
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		out, _ := json.Marshal(map[string]any{
			"name": r.name, "ops": res.Ops, "bytes": res.Bytes, "seconds": res.Elapsed.Seconds(),
			"mibps": res.MiBps, "iops": res.IOPS, "p50_us": res.P50.Microseconds(), "p99_us": res.P99.Microseconds(),
			"cpu_us_per_op": cpuPerOp(cpu, res.Ops),
		})
		fmt.Printf("BENCHRESULT %s\n", out)
		t.Logf("%v  cpu/op %.1fµs", res, cpuPerOp(cpu, res.Ops))
	}
}

// profileMeasured makes w write a CPU profile and an execution trace of
// its measured interval (not the prefill) to $CUTTLE_BENCH_PROFILE/NAME.cpu
// and NAME.trace when that variable is set; the returned function stops
// them.
func profileMeasured(t *testing.T, w *bench.Workload, name string) (stop func()) {
	dir := os.Getenv("CUTTLE_BENCH_PROFILE")
	if dir == "" {
		return func() {}
	}
	var f, tf *os.File
	before := w.BeforeMeasure
	w.BeforeMeasure = func(ctx context.Context) error {
		if before != nil {
			if err := before(ctx); err != nil {
				return err
			}
		}
		var err error
		if f, err = os.Create(filepath.Join(dir, name+".cpu")); err != nil {
			return err
		}
		if tf, err = os.Create(filepath.Join(dir, name+".trace")); err != nil {
			return err
		}
		if err := trace.Start(tf); err != nil {
			return err
		}
		return pprof.StartCPUProfile(f)
	}
	return func() {
		if f == nil {
			return
		}
		pprof.StopCPUProfile()
		trace.Stop()
		for _, c := range []*os.File{f, tf} {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}
	}
}

// cpuPerOp is the process's CPU time per operation in microseconds.
func cpuPerOp(cpu time.Duration, ops int64) float64 {
	if ops == 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / float64(ops)
}

func envUint(t *testing.T, name string, def uint64) uint64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// BenchmarkSmallObjectRead does what an OSD does for a client's read of a
// small object: stat it, read its info attribute, read its data with the
// data's checksum, from the record cache and the page cache.
func BenchmarkSmallObjectRead(b *testing.B) {
	s, _ := openBench(b, "", 1<<30)
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	const objects = 1000
	name := func(i int) objid.ID { return objid.Object(1, "", fmt.Sprintf("obj%04d", i)) }
	t := new(objectstore.Transaction).CreateCollection(c)
	data := make([]byte, 4096)
	for i := range objects {
		t.Write(c, name(i), 0, data)
		t.SetAttr(c, name(i), "_", data[:200])
	}
	if err := objectstore.Apply(ctx, s, t); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		o := name(i * 7919 % objects)
		if _, err := s.Stat(ctx, c, o); err != nil {
			b.Fatal(err)
		}
		if _, err := s.GetAttr(ctx, c, o, "_"); err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.ReadCRC(ctx, c, o, 0, 4096); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQueueCreate4K times Queue alone for the transaction an OSD
// builds for a 4 KiB object's creation: the data, the object's info
// attribute, and its PG's log entry and info in the PG's meta object
// (with the log's oldest entry trimmed), as in a 4 KiB write benchmark;
// the commit of each is waited for outside the timer. The store has the
// OSD's 4 KiB allocation units.
func BenchmarkQueueCreate4K(b *testing.B) {
	s, _ := openBenchUnit(b, "", 4<<30, 4096)
	c := objectstore.PGCollection(1, 0)
	meta := objid.Object(1, "", "pgmeta_1.0")
	data := make([]byte, 4096)
	info := make([]byte, 150)
	entry := make([]byte, 120)
	pgInfo := make([]byte, 200)
	commit := func(t *objectstore.Transaction) { queueTimed(b, s, t) }
	commit(new(objectstore.Transaction).CreateCollection(c).Touch(c, meta))
	logKey := func(i int) string { return fmt.Sprintf("%020d", i) }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		o := objid.Object(1, "", "benchmark_data_host_12345_object"+strconv.Itoa(i))
		t := new(objectstore.Transaction).Write(c, o, 0, data).SetAttr(c, o, "_", info)
		t.OmapSetKeys(c, meta, map[string][]byte{logKey(i): entry, "info": pgInfo})
		if i >= 100 {
			t.OmapRmKeys(c, meta, logKey(i-100))
		}
		commit(t)
	}
}

// BenchmarkSmallWriteCPU compares, in an OSD's geometry (4 KiB units),
// the store's whole cost of the two 4 KiB writes issue 41 sets side by
// side: an overwrite at a random offset of one of 256 objects of 4 MiB
// (what `cuttle rbd bench` 4 KiB random writes make each OSD do) and the
// creation of a 4 KiB object (`cuttle bench -b 4K write`). Each
// transaction is shaped as the OSD's: the data with its piece checksums,
// the object's info attribute, and a PG log entry and the PG's info in
// the omap of the PG's meta object, over 32 PGs; 16 are in flight, as
// with 16 clients' writes. It reports the process's CPU per write
// (Queue, the committer, syncer and applier, Pebble's flushes and
// compactions: getrusage, not the timer), the bytes the metadata
// database's log took in per write (the deferred data included) and the
// allocations.
//
//	go test -run '^$' -bench SmallWriteCPU -benchtime 20000x ./internal/objectstore/blockstore/
func BenchmarkSmallWriteCPU(b *testing.B) {
	for _, kind := range []string{"overwrite-4M", "create-4K"} {
		b.Run(kind, func(b *testing.B) { benchSmallWrites(b, kind == "create-4K") })
	}
}

func benchSmallWrites(b *testing.B, create bool) {
	const (
		pgs      = 32
		objects  = 256
		inFlight = 16
		objSize  = 4 << 20
	)
	ctx := context.Background()
	s, _ := openBenchUnit(b, "", 4<<30, 4096)
	coll := func(i int) objectstore.CollectionID { return objectstore.PGCollection(1, uint32(i%pgs)) }
	meta := func(i int) objid.ID { return objid.Object(-2, "", "pgmeta.1."+strconv.Itoa(i%pgs)) }
	table := crc32.MakeTable(crc32.Castagnoli)
	data := dio.AlignedBuf(4096)
	for i := range data {
		data[i] = byte(i * 13)
	}
	crcs := []uint32{crc32.Checksum(data, table)}
	full := dio.AlignedBuf(objSize)
	var fullCRCs []uint32
	for p := 0; p < objSize; p += objectstore.DataCRCPiece {
		fullCRCs = append(fullCRCs, crc32.Checksum(full[p:p+objectstore.DataCRCPiece], table))
	}
	write := func(t *objectstore.Transaction, c objectstore.CollectionID, o objid.ID, off uint64, d []byte, cs []uint32) {
		t.Ops = append(t.Ops, objectstore.Op{Code: objectstore.OpWrite, Collection: c, Object: o, Offset: off, Data: d, DataCRCs: cs})
	}
	name := func(i int) objid.ID { return objid.Object(1, "", "rbd_data.1234abcd."+fmt.Sprintf("%016x", i)) }
	setup := new(objectstore.Transaction)
	for i := range pgs {
		setup.CreateCollection(coll(i)).Touch(coll(i), meta(i))
	}
	if err := objectstore.Apply(ctx, s, setup); err != nil {
		b.Fatal(err)
	}
	if !create {
		for i := range objects {
			t := new(objectstore.Transaction)
			write(t, coll(i), name(i), 0, full, fullCRCs)
			if err := objectstore.Apply(ctx, s, t.SetAttr(coll(i), name(i), "@", make([]byte, 12))); err != nil {
				b.Fatal(err)
			}
		}
	}
	info := make([]byte, 12)
	entry := make([]byte, 90)
	pgInfo := make([]byte, 60)
	logKey := func(i int) string { return fmt.Sprintf("log.%016x.%016x", 1, i/pgs) }
	var window []*objectstore.Completion
	wait := func(c *objectstore.Completion) {
		if err := c.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	kv0, err := s.KVStats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	rng := uint64(1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := range b.N {
		rng = rng*6364136223846793005 + 1442695040888963407
		var o objid.ID
		var off uint64
		pg := i % pgs
		if create {
			o = objid.Object(1, "", "benchmark_data_host_12345_object"+strconv.Itoa(i))
		} else {
			k := int(rng>>33) % (objects / pgs)
			o, off = name(k*pgs+pg), (rng>>20)%(objSize/4096)*4096
		}
		t := new(objectstore.Transaction)
		write(t, coll(pg), o, off, data, crcs)
		t.SetAttr(coll(pg), o, "@", info)
		t.OmapSetKeys(coll(pg), meta(pg), map[string][]byte{logKey(i): entry, "info": pgInfo})
		comp, err := s.Queue(ctx, t)
		if err != nil {
			b.Fatal(err)
		}
		if window = append(window, comp); len(window) == inFlight {
			wait(window[0])
			window = window[1:]
		}
	}
	for _, c := range window {
		wait(c)
	}
	cpu := processCPU() - cpu0
	b.StopTimer()
	kv1, err := s.KVStats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(kv1.WALBytesIn-kv0.WALBytesIn)/float64(b.N), "wal-B/op")
}

// Package bench drives load against a local object store
// (objectstore.Store) and measures it: throughput, operations per second
// and latency percentiles. It is what `cuttle objectstore bench` and the
// blockstore benchmarks (internal/objectstore/blockstore/bench_test.go,
// scripts/bench-objectstore.sh) run, so the figures in docs/BENCHMARKS.md
// come from one place.
//
// A Workload names one of four access patterns, the object and block
// sizes, the number of concurrent workers and when to stop. Writes wait
// for Committed (durable) unless the workload says Applied is enough, so
// a write benchmark measures the same durability as fio with fsync.
// RunObjectStore prefills the objects a read or overwrite workload needs
// (outside the measured interval), calls Workload.BeforeMeasure (a hook to
// drop the page cache, say), then runs the workload and returns a Result.
//
// The same package drives a cluster through the rados client library for
// `cuttle bench` (rados.go, timed.go): Timed keeps N operations in flight
// for a duration and reports every second, RunRados writes or reads
// objects as `rados bench` does.
//
// bench knows nothing of any engine or daemon: it uses the objectstore
// interface and the rados client library only.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// Kind is a workload's access pattern.
type Kind string

// The workloads.
const (
	// SeqWrite writes each worker's own objects front to back, one block
	// per transaction, starting new objects as they fill.
	SeqWrite Kind = "seq-write"
	// SeqRead reads the prefilled objects front to back, one block per
	// read; each worker reads its own share of the objects.
	SeqRead Kind = "seq-read"
	// RandWrite overwrites random block-aligned blocks of the prefilled
	// objects, one block per transaction.
	RandWrite Kind = "rand-write"
	// RandRead reads random block-aligned blocks of the prefilled objects.
	RandRead Kind = "rand-read"
)

// Kinds lists every workload.
var Kinds = []Kind{SeqWrite, SeqRead, RandWrite, RandRead}

// ParseKind parses a workload name.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown workload %q (want seq-write, seq-read, rand-write or rand-read)", s)
}

// Workload describes one benchmark run. Zero fields take the defaults
// given.
type Workload struct {
	Kind Kind
	// ObjectSize is the size of each object (default 4 MiB).
	ObjectSize uint64
	// BlockSize is the bytes of one operation (default: ObjectSize for
	// the sequential workloads, 4 KiB for the random ones). It must
	// divide ObjectSize.
	BlockSize uint64
	// Objects is the number of objects the read and overwrite workloads
	// spread over (prefilled before measuring). Default: enough for 1 GiB
	// but no more than 4096, and at least one per worker.
	Objects int
	// Concurrency is the number of workers, each with one operation in
	// flight (default 1).
	Concurrency int
	// Duration and TotalBytes stop the run, whichever comes first; with
	// neither, the run stops after 10 seconds. The sequential read
	// workload also stops when every worker has read its objects once.
	Duration   time.Duration
	TotalBytes uint64
	// OnePass makes the random workloads visit every block of the
	// objects once, in random order, and stop after that one pass (like
	// fio's random map without time_based): no block is read twice, so a
	// read run after dropping the page cache reads the device only.
	OnePass bool
	// AppliedOnly makes writers wait for Applied rather than Committed.
	AppliedOnly bool
	// Collection holds the benchmark's objects; it is created if missing.
	// Default: placement group 1.0.
	Collection *objectstore.CollectionID
	// Prefix starts every object name (default "bench").
	Prefix string
	// Seed seeds the random offsets (default 1).
	Seed uint64
	// BeforeMeasure, if set, runs after the prefill and before the clock
	// starts (to drop the page cache, for example).
	BeforeMeasure func(context.Context) error
}

// Result is what one run measured.
type Result struct {
	Workload    Kind
	BlockSize   uint64
	Concurrency int
	Ops         int64
	Bytes       uint64
	Elapsed     time.Duration
	MiBps       float64 // MiB (2^20 bytes) per second
	IOPS        float64 // operations per second
	P50, P99    time.Duration
	Max         time.Duration
}

func (r Result) String() string {
	return fmt.Sprintf("%-10s bs=%-7d jobs=%-2d ops=%-8d %8.1f MiB/s %9.0f IOPS  p50 %-9v p99 %-9v max %v",
		r.Workload, r.BlockSize, r.Concurrency, r.Ops, r.MiBps, r.IOPS,
		r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Max.Round(time.Microsecond))
}

func (w Workload) withDefaults() (Workload, error) {
	if _, err := ParseKind(string(w.Kind)); err != nil {
		return w, err
	}
	if w.ObjectSize == 0 {
		w.ObjectSize = 4 << 20
	}
	if w.BlockSize == 0 {
		w.BlockSize = w.ObjectSize
		if w.Kind == RandWrite || w.Kind == RandRead {
			w.BlockSize = min(4096, w.ObjectSize)
		}
	}
	if w.ObjectSize%w.BlockSize != 0 {
		return w, fmt.Errorf("block size %d does not divide object size %d", w.BlockSize, w.ObjectSize)
	}
	if w.Concurrency <= 0 {
		w.Concurrency = 1
	}
	if w.Objects <= 0 {
		w.Objects = int(min(4096, max(1, (1<<30)/w.ObjectSize)))
	}
	w.Objects = max(w.Objects, w.Concurrency)
	if w.Duration == 0 && w.TotalBytes == 0 {
		w.Duration = 10 * time.Second
	}
	if w.Collection == nil {
		c := objectstore.PGCollection(1, 0)
		w.Collection = &c
	}
	if w.Prefix == "" {
		w.Prefix = "bench"
	}
	if w.Seed == 0 {
		w.Seed = 1
	}
	return w, nil
}

// object names the i-th prefilled object, or a sequential writer's
// object when worker >= 0.
func (w Workload) object(worker, i int) objid.ID {
	pool := w.Collection.Pool
	if worker >= 0 {
		return objid.Object(pool, "", fmt.Sprintf("%s_w%d_%d", w.Prefix, worker, i))
	}
	return objid.Object(pool, "", fmt.Sprintf("%s_%d", w.Prefix, i))
}

// RunObjectStore runs w against s and returns what it measured.
func RunObjectStore(ctx context.Context, s objectstore.Store, w Workload) (Result, error) {
	w, err := w.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if err := ensureCollection(ctx, s, *w.Collection); err != nil {
		return Result{}, err
	}
	if w.Kind != SeqWrite {
		if err := Prefill(ctx, s, w); err != nil {
			return Result{}, err
		}
	}
	if w.BeforeMeasure != nil {
		if err := w.BeforeMeasure(ctx); err != nil {
			return Result{}, fmt.Errorf("bench: before measure: %w", err)
		}
	}
	return run(ctx, s, w)
}

func ensureCollection(ctx context.Context, s objectstore.Store, c objectstore.CollectionID) error {
	ok, err := s.CollectionExists(ctx, c)
	if err != nil || ok {
		return err
	}
	t := new(objectstore.Transaction).CreateCollection(c)
	if err := objectstore.Apply(ctx, s, t); err != nil && !errors.Is(err, objectstore.ErrExists) {
		return fmt.Errorf("bench: create collection %v: %w", c, err)
	}
	return nil
}

// Prefill writes the objects a read or overwrite workload uses, unless
// they exist with the right size already, in transactions of up to
// 4 MiB (by default w.Concurrency at a time).
func Prefill(ctx context.Context, s objectstore.Store, w Workload) error {
	w, err := w.withDefaults()
	if err != nil {
		return err
	}
	if err := ensureCollection(ctx, s, *w.Collection); err != nil {
		return err
	}
	chunk := min(w.ObjectSize, 4<<20)
	chunk -= chunk % w.BlockSize
	chunk = max(chunk, w.BlockSize)
	data := fill(chunk, w.Seed)
	var next atomic.Int64
	errs := make(chan error, w.Concurrency)
	for range w.Concurrency {
		go func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= w.Objects {
					errs <- nil
					return
				}
				o := w.object(-1, i)
				if info, err := s.Stat(ctx, *w.Collection, o); err == nil && info.Size == w.ObjectSize {
					continue
				}
				for off := uint64(0); off < w.ObjectSize; off += chunk {
					n := min(chunk, w.ObjectSize-off)
					t := new(objectstore.Transaction).Write(*w.Collection, o, off, data[:n])
					if err := objectstore.Apply(ctx, s, t); err != nil {
						errs <- fmt.Errorf("bench: prefill %v: %w", o, err)
						return
					}
				}
			}
		}()
	}
	var first error
	for range w.Concurrency {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// fill returns n bytes of incompressible-looking data.
func fill(n, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x6275636b6574))
	b := make([]byte, n)
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// worker state shared by the measuring loop.
type runner struct {
	s        objectstore.Store
	w        Workload
	data     []byte
	deadline time.Time
	bytes    atomic.Uint64 // bytes done or claimed, for TotalBytes
	perm     []uint32      // OnePass: the blocks in visiting order
	next     atomic.Int64  // OnePass: index of the next block in perm
}

// claim reserves one operation's bytes; false when the run is over.
func (r *runner) claim() bool {
	if !r.deadline.IsZero() && time.Now().After(r.deadline) {
		return false
	}
	if r.w.TotalBytes == 0 {
		return true
	}
	return r.bytes.Add(r.w.BlockSize) <= r.w.TotalBytes
}

func run(ctx context.Context, s objectstore.Store, w Workload) (Result, error) {
	r := &runner{s: s, w: w}
	if w.Kind == SeqWrite || w.Kind == RandWrite {
		// One buffer per run: transactions keep a reference until they
		// apply, and the bytes never change, so sharing it is safe.
		r.data = fill(w.BlockSize, w.Seed+1)
	}
	if w.OnePass && (w.Kind == RandWrite || w.Kind == RandRead) {
		n := uint64(w.Objects) * (w.ObjectSize / w.BlockSize)
		if n > 1<<32 {
			return Result{}, fmt.Errorf("bench: %d blocks are too many for one pass", n)
		}
		r.perm = make([]uint32, n)
		for i := range r.perm {
			r.perm[i] = uint32(i)
		}
		rand.New(rand.NewPCG(w.Seed, 7)).Shuffle(len(r.perm), func(i, j int) { r.perm[i], r.perm[j] = r.perm[j], r.perm[i] })
	}
	lats := make([][]time.Duration, w.Concurrency)
	errs := make([]error, w.Concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	if w.Duration > 0 {
		r.deadline = start.Add(w.Duration)
	}
	for i := range w.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lats[i], errs[i] = r.worker(ctx, i)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return Result{}, err
	}
	all := slices.Concat(lats...)
	slices.Sort(all)
	res := Result{
		Workload:    w.Kind,
		BlockSize:   w.BlockSize,
		Concurrency: w.Concurrency,
		Ops:         int64(len(all)),
		Bytes:       uint64(len(all)) * w.BlockSize,
		Elapsed:     elapsed,
	}
	if secs := elapsed.Seconds(); secs > 0 {
		res.MiBps = float64(res.Bytes) / (1 << 20) / secs
		res.IOPS = float64(res.Ops) / secs
	}
	if n := len(all); n > 0 {
		res.P50 = all[n*50/100]
		res.P99 = all[min(n-1, n*99/100)]
		res.Max = all[n-1]
	}
	return res, nil
}

func (r *runner) worker(ctx context.Context, id int) ([]time.Duration, error) {
	w := r.w
	c := *w.Collection
	rng := rand.New(rand.NewPCG(w.Seed, uint64(id)+1))
	blocksPerObject := w.ObjectSize / w.BlockSize
	var lats []time.Duration
	// Sequential position: object index and offset within it.
	obj, off := 0, uint64(0)
	// Sequential readers take every Concurrency-th object from id on.
	if w.Kind == SeqRead {
		obj = id
	}
	for r.claim() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var o objid.ID
		switch w.Kind {
		case SeqWrite:
			o = w.object(id, obj)
		case SeqRead:
			if obj >= w.Objects {
				return lats, nil
			}
			o = w.object(-1, obj)
		default:
			if r.perm == nil {
				o = w.object(-1, rng.IntN(w.Objects))
				off = rng.Uint64N(blocksPerObject) * w.BlockSize
				break
			}
			i := r.next.Add(1) - 1
			if i >= int64(len(r.perm)) {
				return lats, nil
			}
			blk := uint64(r.perm[i])
			o = w.object(-1, int(blk/blocksPerObject))
			off = blk % blocksPerObject * w.BlockSize
		}
		t0 := time.Now()
		switch w.Kind {
		case SeqWrite, RandWrite:
			t := new(objectstore.Transaction).Write(c, o, off, r.data)
			comp, err := r.s.Queue(ctx, t)
			if err == nil {
				if w.AppliedOnly {
					err = comp.WaitApplied(ctx)
				} else {
					err = comp.Wait(ctx)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("bench: write %v at %d: %w", o, off, err)
			}
		default:
			b, err := r.s.Read(ctx, c, o, off, w.BlockSize)
			if err != nil {
				return nil, fmt.Errorf("bench: read %v at %d: %w", o, off, err)
			}
			if uint64(len(b)) != w.BlockSize {
				return nil, fmt.Errorf("bench: read %v at %d: %d bytes, want %d (object smaller than ObjectSize?)", o, off, len(b), w.BlockSize)
			}
		}
		lats = append(lats, time.Since(t0))
		if w.Kind == SeqWrite || w.Kind == SeqRead {
			off += w.BlockSize
			if off >= w.ObjectSize {
				off = 0
				if w.Kind == SeqRead {
					obj += w.Concurrency
				} else {
					obj++
				}
			}
		}
	}
	return lats, nil
}

package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/rados"
)

// RadosMode is what a cluster benchmark does, as `rados bench` names it.
type RadosMode string

// The cluster benchmarks.
const (
	// RadosWrite writes new objects of OpSize bytes, one per operation,
	// counting each once it is committed (durable on every replica).
	RadosWrite RadosMode = "write"
	// RadosSeq reads the objects a previous RadosWrite left, in the
	// order they were written, until all are read or the time is up.
	RadosSeq RadosMode = "seq"
	// RadosRand reads those objects at random until the time is up.
	RadosRand RadosMode = "rand"
)

// ParseRadosMode parses a benchmark mode.
func ParseRadosMode(s string) (RadosMode, error) {
	switch m := RadosMode(s); m {
	case RadosWrite, RadosSeq, RadosRand:
		return m, nil
	}
	return "", fmt.Errorf("unknown benchmark mode %q (want write, seq or rand)", s)
}

// DefaultRunName names the object in which a write benchmark records
// what it wrote, so that seq and rand find the objects (rados bench's
// benchmark_last_metadata).
const DefaultRunName = "benchmark_last_metadata"

// RadosWorkload describes one cluster benchmark run.
type RadosWorkload struct {
	Mode RadosMode
	// Duration is how long operations are started.
	Duration time.Duration
	// OpSize is the size of the objects a write creates (default 4
	// MiB). seq and rand read the size the write recorded.
	OpSize uint64
	// Concurrency is the number of operations in flight (default 16).
	Concurrency int
	// RunName names the metadata object (default DefaultRunName).
	RunName string
	// Prefix starts the names of the objects a write creates (default
	// "benchmark_data"); the CLI adds the host and process id, as rados
	// bench does.
	Prefix string
	// Seed seeds rand's choice of objects.
	Seed uint64
	// MaxObjects, if not zero, bounds the objects a write creates (it
	// ends sooner if they are all written).
	MaxObjects int64
	// Reuse, if not zero, makes a write overwrite Reuse objects in turn
	// instead of creating one per operation: they are written once
	// before the timed run (not measured), then each operation rewrites
	// the next one whole. Only overwrites make copy-on-write clones, so
	// this is the write to measure snapshots' cost with.
	Reuse int64
	// SnapEvery, if not zero, takes a snapshot of the pool every
	// SnapEvery during a write (radossnaps.go), and removes them all at
	// the end.
	SnapEvery time.Duration
	// Progress, if set, receives a report every second.
	Progress func(Progress)
	// Traffic, if set, counts the operations as they finish.
	Traffic *Traffic
}

// RadosResult is what a cluster benchmark measured, with what it worked
// on.
type RadosResult struct {
	Mode RadosMode
	Summary
	Meta RadosMetadata // the objects written (write) or read from (seq, rand)
	// Snaps is how many snapshots SnapEvery took (and removed).
	Snaps int
	// SnapMode says which kind: "selfmanaged" or "pool" (empty: none).
	SnapMode string
}

// RadosMetadata is what a write benchmark leaves in its metadata object:
// the objects' name prefix, their number and size.
type RadosMetadata struct {
	Prefix     string
	Objects    int64
	ObjectSize uint64
}

// ObjectName returns the name of the benchmark's object n.
func (m RadosMetadata) ObjectName(n int64) string {
	return m.Prefix + "_object" + strconv.FormatInt(n, 10)
}

// pickObject chooses the object the n-th random read reads, from a
// generator seeded by the read's number, so that a run reads the same
// objects however its workers interleave. The generator stays on the
// stack (rand.New would put two allocations on every read).
func pickObject(seed uint64, n, objects int64) int64 {
	var g rand.PCG
	g.Seed(seed, uint64(n))
	hi, _ := bits.Mul64(g.Uint64(), uint64(objects)) // Lemire's multiply-shift: uniform to within objects/2^64
	return int64(hi)
}

const radosMetadataVersion = 1

// maxPrefix bounds the prefix a metadata object may hold.
const maxPrefix = 4096

// MarshalBinary encodes the metadata: version 1: prefix, objects
// (uvarint), object size (uvarint).
func (m RadosMetadata) MarshalBinary() ([]byte, error) {
	var e encoding.Encoder
	mk := e.Begin(radosMetadataVersion, 1)
	e.String(m.Prefix)
	e.Uvarint(uint64(m.Objects))
	e.Uvarint(m.ObjectSize)
	e.End(mk)
	return e.Data(), nil
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (m *RadosMetadata) UnmarshalBinary(b []byte) error {
	d := encoding.NewDecoder(b)
	d.Begin(radosMetadataVersion)
	var n RadosMetadata
	n.Prefix = d.String(maxPrefix)
	objects := d.Uvarint()
	n.ObjectSize = d.Uvarint()
	d.End()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("bench: decode metadata: %w", err)
	}
	if objects > 1<<62 || n.ObjectSize > 1<<40 {
		return fmt.Errorf("bench: decode metadata: %w: %d objects of %d bytes", encoding.ErrCorrupt, objects, n.ObjectSize)
	}
	n.Objects = int64(objects)
	*m = n
	return nil
}

func (w RadosWorkload) withDefaults() (RadosWorkload, error) {
	if _, err := ParseRadosMode(string(w.Mode)); err != nil {
		return w, err
	}
	if w.OpSize == 0 {
		w.OpSize = 4 << 20
	}
	if w.Concurrency == 0 {
		w.Concurrency = 16
	}
	if w.RunName == "" {
		w.RunName = DefaultRunName
	}
	if w.Prefix == "" {
		w.Prefix = "benchmark_data"
	}
	if w.Duration <= 0 {
		return w, fmt.Errorf("bench: duration %v: want a positive time", w.Duration)
	}
	if w.Concurrency < 0 {
		return w, fmt.Errorf("bench: concurrency %d", w.Concurrency)
	}
	if w.Reuse < 0 || w.SnapEvery < 0 {
		return w, fmt.Errorf("bench: reuse %d, snapshot interval %v: want 0 or more", w.Reuse, w.SnapEvery)
	}
	if (w.Reuse != 0 || w.SnapEvery != 0) && w.Mode != RadosWrite {
		return w, fmt.Errorf("bench: reusing objects and taking snapshots are for write, not %s", w.Mode)
	}
	return w, nil
}

// ErrNoMetadata: the pool has no metadata object of a write benchmark.
var ErrNoMetadata = errors.New("bench: no benchmark metadata")

// ReadRadosMetadata reads the metadata object runName of the pool.
func ReadRadosMetadata(ctx context.Context, io *rados.IOContext, runName string) (RadosMetadata, error) {
	if runName == "" {
		runName = DefaultRunName
	}
	b, err := io.Read(ctx, runName, 0, 0)
	if errors.Is(err, rados.ErrNotFound) {
		return RadosMetadata{}, fmt.Errorf("%w: pool %s has no object %q: run a write benchmark with --no-cleanup first",
			ErrNoMetadata, io.PoolName(), runName)
	}
	if err != nil {
		return RadosMetadata{}, fmt.Errorf("bench: read metadata %q: %w", runName, err)
	}
	var m RadosMetadata
	if err := m.UnmarshalBinary(b); err != nil {
		return m, fmt.Errorf("metadata object %q: %w", runName, err)
	}
	return m, nil
}

// RunRados runs a cluster benchmark on the pool (and namespace) of io.
// A write records its objects in the metadata object RunName and leaves
// both in place; CleanupRados removes them.
func RunRados(ctx context.Context, io *rados.IOContext, w RadosWorkload) (RadosResult, error) {
	w, err := w.withDefaults()
	if err != nil {
		return RadosResult{}, err
	}
	t := Timed{Concurrency: w.Concurrency, Duration: w.Duration, Progress: w.Progress, Traffic: w.Traffic}
	res := RadosResult{Mode: w.Mode}
	var data []byte
	if w.Mode == RadosWrite {
		res.Meta = RadosMetadata{Prefix: w.Prefix, ObjectSize: w.OpSize}
		data = fill(w.OpSize, 1)
		t.MaxOps = w.MaxObjects
		t.Op = func(ctx context.Context, n int64) error {
			// WriteFull returns once the write is committed.
			return io.WriteFull(ctx, res.Meta.ObjectName(n), data)
		}
		if w.Reuse > 0 {
			if err := prepareObjects(ctx, io, res.Meta, w.Reuse, w.Concurrency, data); err != nil {
				return res, err
			}
			t.Op = func(ctx context.Context, n int64) error {
				return io.WriteFull(ctx, res.Meta.ObjectName(n%w.Reuse), data)
			}
		}
	} else {
		if res.Meta, err = ReadRadosMetadata(ctx, io, w.RunName); err != nil {
			return res, err
		}
		if res.Meta.Objects == 0 {
			return res, fmt.Errorf("bench: metadata object %q lists no objects", w.RunName)
		}
		data = fill(res.Meta.ObjectSize, 1)
		// Each read is checked in the reply's own buffer, handed back to
		// the client once compared (as rados bench reads into
		// bufferlists, without a copy).
		read := func(ctx context.Context, n int64) error {
			name := res.Meta.ObjectName(n)
			got, err := io.ReadBuffer(ctx, name, 0, 0)
			if err != nil {
				return fmt.Errorf("bench: read %s: %w", name, err)
			}
			defer got.Release()
			if !bytes.Equal(got.Data, data) {
				return fmt.Errorf("bench: read %s: %d bytes, not the %d the write benchmark wrote", name, len(got.Data), len(data))
			}
			return nil
		}
		if w.Mode == RadosSeq {
			t.MaxOps = res.Meta.Objects
			t.Op = read
		} else {
			t.Op = func(ctx context.Context, n int64) error {
				return read(ctx, pickObject(w.Seed, n, res.Meta.Objects))
			}
		}
	}
	t.OpBytes = res.Meta.ObjectSize
	var snapper *snapshotter
	if w.SnapEvery > 0 {
		snapper = startSnapshots(ctx, io, w.Prefix, w.SnapEvery)
	}
	s, err := t.Run(ctx)
	if snapper != nil {
		res.Snaps, res.SnapMode = snapper.stop(ctx)
		err = cmpOr(err, snapper.err)
	}
	if err != nil {
		return res, err
	}
	res.Summary = s
	if w.Mode == RadosWrite {
		// Every operation started finished, in order: objects 0 to
		// Ops-1 exist (0 to Reuse-1 when reused).
		res.Meta.Objects = s.Ops
		if w.Reuse > 0 {
			res.Meta.Objects = w.Reuse
		}
		b, _ := res.Meta.MarshalBinary()
		if err := io.WriteFull(ctx, w.RunName, b); err != nil {
			return res, fmt.Errorf("bench: write metadata %q: %w", w.RunName, err)
		}
	}
	return res, nil
}

// CleanupRados removes the objects the write benchmark recorded in
// runName, then runName itself, with concurrency removals in flight. It
// returns how many objects it removed; objects already gone are skipped.
func CleanupRados(ctx context.Context, io *rados.IOContext, runName string, concurrency int) (int64, error) {
	if runName == "" {
		runName = DefaultRunName
	}
	m, err := ReadRadosMetadata(ctx, io, runName)
	if err != nil {
		return 0, err
	}
	concurrency = max(concurrency, 1)
	var (
		next, removed atomic.Int64
		wg            sync.WaitGroup
		mu            sync.Mutex
		first         error
	)
	for range concurrency {
		wg.Go(func() {
			for {
				n := next.Add(1) - 1
				if n >= m.Objects {
					return
				}
				err := io.Delete(ctx, m.ObjectName(n))
				switch {
				case err == nil:
					removed.Add(1)
				case errors.Is(err, rados.ErrNotFound):
				default:
					mu.Lock()
					first = cmpOr(first, fmt.Errorf("bench: remove %s: %w", m.ObjectName(n), err))
					mu.Unlock()
					next.Store(m.Objects)
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return removed.Load(), first
	}
	if err := io.Delete(ctx, runName); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return removed.Load(), fmt.Errorf("bench: remove metadata %q: %w", runName, err)
	}
	return removed.Load(), nil
}

// cmpOr returns the first non-nil error.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

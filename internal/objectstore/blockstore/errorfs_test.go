package blockstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
)

// The stream of TestErrorInjection: errorfsPre transactions in the base
// store, then errorfsTxns in each injection run.
const (
	errorfsSeed = 11
	errorfsPre  = 8
	errorfsTxns = 24
)

// opCounter counts the file-system operations that pass through it.
type opCounter struct{ n atomic.Int64 }

func (c *opCounter) String() string { return "count" }
func (c *opCounter) MaybeError(errorfs.Op) error {
	c.n.Add(1)
	return nil
}

// TestErrorInjection fails the I/O operation with index i (every index
// the run performs; every second with -race, every fourth with -short,
// or every $CUTTLE_ERRORFS_STEP) of a store that opens, replays deferred
// writes and commits a stream of transactions on a crashable MemFS: data
// file writes, reads and syncs, and the operations on Pebble's WAL,
// OPTIONS and sstables (faultable says which are left out). Whatever
// fails:
//
//   - nothing panics, Open and Close return (an error or not), and every
//     Queue and completion returns;
//   - once a completion reports an error, the store refuses every later
//     Queue (it stops writing after a commit error);
//   - a crash clone of the file system taken after Close, keeping only
//     synced data, reopens without faults to the state after some prefix
//     of the stream that holds every transaction reported committed
//     (so no transaction is reported committed that is not durable, and
//     none is there partially).
func TestErrorInjection(t *testing.T) {
	ctx := context.Background()
	base := vfs.NewCrashableMem()
	opts := testOptions(base)
	opts.Size = 8 << 20
	// The base store holds the first errorfsPre transactions of the
	// stream with their deferred writes unapplied, so that every run's
	// Open replays them under injection too.
	skip := opts
	skip.testSkipDeferredApply = true
	s := mkfsOpen(t, skip)
	g := newStreamGen(errorfsSeed, 0)
	for range errorfsPre {
		apply(t, s, g.next())
	}
	if n := s.data.len(); n == 0 {
		t.Fatal("the base store has no deferred writes to replay")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fresh := func() *vfs.MemFS { return base.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}) }

	// A run without faults counts the operations.
	var count opCounter
	res := errorfsRun(t, fresh(), &faultable{inj: &count}, -1)
	if res.openErr != nil || res.failedAt >= 0 || res.committed != errorfsTxns {
		t.Fatalf("run without faults: open %v, failed at %d, committed %d", res.openErr, res.failedAt, res.committed)
	}
	total := int(count.n.Load())
	step := 1
	switch {
	case testing.Short():
		step = 4
	case raceEnabled:
		step = 2
	}
	step = intSetting(0, "CUTTLE_ERRORFS_STEP", step)
	start := time.Now()
	var openFails, commitFails, queueFails, readFails, closeFails, unnoticed int
	for i := 0; i < total+10; i += step {
		mem := fresh()
		res := errorfsRun(t, mem, &faultable{inj: errorfs.OnIndex(int32(i))}, i)
		switch {
		case res.openErr != nil:
			openFails++
		case res.failedAt >= 0:
			commitFails++
		case res.queueErr != nil:
			queueFails++
		case res.readErrs > 0:
			readFails++
		case res.closeErr != nil:
			closeFails++
		default:
			unnoticed++ // Pebble retried or ignored it (background work, obsolete files), or past the end
		}
		// Reopen a crash clone (synced data only) without faults.
		clone := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		o := opts
		o.FS = clone
		s, err := Open(o)
		if err != nil {
			t.Fatalf("index %d: reopen without faults: %v (open %v, failed at %d, close %v)", i, err, res.openErr, res.failedAt, res.closeErr)
		}
		errorfsCheck(t, ctx, s, res, i)
		checkQuiescent(t, s)
		if err := s.Close(); err != nil {
			t.Fatalf("index %d: close after reopen: %v", i, err)
		}
	}
	t.Logf("%d operations, injected at every %d: %d open failures, %d commit failures, %d queue failures, %d read failures, %d close failures, %d without a visible failure, in %v",
		total, step, openFails, commitFails, queueFails, readFails, closeFails, unnoticed, time.Since(start).Round(time.Millisecond))
}

// faultable passes to inj only the operations whose failure the store
// can report as an error, and counts them:
//
//   - While Open runs (until opened is set), only the data file's
//     operations (deferred-write replay). Pebble v2.1.7 cannot fail its
//     own Open cleanly once the WAL-recovery flush has started background
//     work: Open's cleanup closes the file cache under a running table
//     stats collector or compaction, which crashes the process (integer
//     divide by zero in fileCacheKey.Shard).
//   - Never a MANIFEST write (including the marker that names the current
//     MANIFEST) or a sync of Pebble's directory: Pebble treats those as
//     fatal by design (Logger.Fatalf or a panic, from background flushes
//     too), so the process dies and restarts as after a crash, which
//     TestSigkill covers. The commit pipeline's Fatalf on a WAL write or
//     sync error is recovered by the committer and tested here.
type faultable struct {
	inj    errorfs.Injector
	opened atomic.Bool
}

func (f *faultable) String() string { return "faultable(" + f.inj.String() + ")" }

func (f *faultable) MaybeError(op errorfs.Op) error {
	base := path.Base(op.Path)
	if !f.opened.Load() && base != "block" {
		return nil
	}
	if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && (strings.HasPrefix(base, "MANIFEST") || strings.HasPrefix(base, "marker.manifest") || base == "db") {
		return nil
	}
	return f.inj.MaybeError(op)
}

type errorfsResult struct {
	openErr   error
	queueErr  error // a Queue that failed before any commit error
	closeErr  error
	queued    int // transactions queued successfully
	committed int // leading transactions whose completions succeeded
	failedAt  int // first transaction whose completion failed, or -1
	readErrs  int
}

// errorfsRun opens the store on mem through inj and commits the stream,
// a few transactions in flight at a time, reading as it goes.
func errorfsRun(t *testing.T, mem *vfs.MemFS, inj *faultable, index int) errorfsResult {
	t.Helper()
	ctx := context.Background()
	res := errorfsResult{failedAt: -1}
	opts := testOptions(errorfs.Wrap(mem, inj))
	s, err := Open(opts)
	if err != nil {
		res.openErr = err
		return res
	}
	inj.opened.Store(true)
	g := newStreamGen(errorfsSeed, 0)
	for range errorfsPre {
		g.next()
	}
	r := rand.New(rand.NewPCG(uint64(index+2), 3))
	var comps []*objectstore.Completion
	reap := func(all bool) {
		for res.failedAt < 0 && res.committed < len(comps) {
			c := comps[res.committed]
			if !all && !isClosed(c.Committed()) {
				return
			}
			if err := c.Wait(ctx); err != nil {
				res.failedAt = res.committed
				return
			}
			res.committed++
		}
	}
	for range errorfsTxns {
		tx := g.next()
		c, err := s.Queue(ctx, tx)
		if err != nil {
			if res.failedAt < 0 {
				reap(true)
			}
			if res.failedAt < 0 {
				res.queueErr = err
			}
			break
		}
		res.queued++
		comps = append(comps, c)
		if r.IntN(3) == 0 {
			reap(true)
		} else {
			reap(false)
		}
		// A read through the same file system: a failed read is an
		// error, never a panic or wrong bytes (checked at reopen).
		if _, err := s.Read(ctx, g.colls[0], g.objs[r.IntN(len(g.objs))], 0, 0); err != nil && !errors.Is(err, objectstore.ErrNotFound) {
			res.readErrs++
		}
		if res.failedAt >= 0 {
			break
		}
	}
	reap(true)
	// Every completion returns; after a commit error, none succeeds and
	// the store refuses new transactions.
	for j, c := range comps {
		err := c.Wait(ctx)
		if res.failedAt >= 0 && j > res.failedAt && err == nil {
			t.Errorf("index %d: transaction %d committed after transaction %d failed", index, j, res.failedAt)
		}
	}
	if res.failedAt >= 0 {
		if _, err := s.Queue(ctx, new(objectstore.Transaction).Touch(g.colls[0], g.objs[0])); err == nil {
			t.Errorf("index %d: Queue succeeded after a commit error", index)
		}
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case res.closeErr = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("index %d: Close hangs", index)
	}
	return res
}

// errorfsCheck checks that s holds a prefix of the stream between the
// committed transactions and the queued ones.
func errorfsCheck(t *testing.T, ctx context.Context, s *Store, res errorfsResult, index int) {
	t.Helper()
	g := newStreamGen(errorfsSeed, 0)
	m := memstore.New(memstore.Options{})
	defer m.Close()
	got, err := dumpStream(ctx, s, g)
	if err != nil {
		t.Fatalf("index %d: dump after reopen: %v", index, err)
	}
	for k := 0; ; k++ {
		if k >= errorfsPre+res.committed {
			want, err := dumpStream(ctx, m, g)
			if err != nil {
				t.Fatal(err)
			}
			if got == want {
				return
			}
			if k >= errorfsPre+res.queued {
				t.Fatalf("index %d: reopened store holds no prefix of the stream in [%d, %d] (open %v, queue %v, failed at %d, close %v): at %d: %s",
					index, errorfsPre+res.committed, errorfsPre+res.queued, res.openErr, res.queueErr, res.failedAt, res.closeErr, k, diffLines(got, want))
			}
		}
		if err := objectstore.Apply(ctx, m, g.next()); err != nil {
			t.Fatalf("memstore rejects transaction %d: %v", k, err)
		}
	}
}

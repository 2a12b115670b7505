package monstore

import (
	"errors"
	"math/rand/v2"
	"path"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// errorfsOps is the number of writes of each TestErrorInjection run.
const errorfsOps = 40

// faultable passes to inj only the operations whose failure the store can
// report as an error:
//
//   - none while Open runs (until opened is set): Pebble v2.1.7 cannot fail
//     its own Open cleanly once WAL recovery has started background work
//     (blockstore's errorfs test documents the crash);
//   - never a MANIFEST write, the marker naming it, or a sync of the
//     database directory: Pebble treats those as fatal by design, from
//     background flushes too, so the process dies and restarts as after a
//     crash, which TestCrashConsistency covers.
//
// WAL writes and syncs, sstable I/O and every read may fail.
type faultable struct {
	inj    errorfs.Injector
	opened atomic.Bool
	n      atomic.Int64 // operations passed to inj
}

func (f *faultable) String() string { return "faultable(" + f.inj.String() + ")" }

func (f *faultable) MaybeError(op errorfs.Op) error {
	if !f.opened.Load() {
		return nil
	}
	base := path.Base(op.Path)
	if op.Kind.ReadOrWrite() == errorfs.OpIsWrite &&
		(strings.HasPrefix(base, "MANIFEST") || strings.HasPrefix(base, "marker.") || base == "mon" || base == ".") {
		return nil
	}
	f.n.Add(1)
	return f.inj.MaybeError(op)
}

type errorfsResult struct {
	done       int   // writes that returned nil
	lastSynced int   // last synced write that returned nil
	failedAt   int   // the write that failed, or 0
	writeErr   error // its error
	readErrs   int
}

// errorfsRun opens a store on fs, performs the seeded stream of writes
// with reads in between, and stops at the first failed write.
func errorfsRun(t *testing.T, fs vfs.FS, inj *faultable) errorfsResult {
	t.Helper()
	var res errorfsResult
	s, err := Open(Options{FS: fs, Dir: "mon", EntryCacheBytes: -1})
	if err != nil {
		t.Fatalf("open without faults: %v", err)
	}
	inj.opened.Store(true)
	g := &opStream{r: rand.New(rand.NewPCG(5, 5)), term: 1}
	for n := 1; n <= errorfsOps; n++ {
		synced, err := g.next(s)
		if err != nil {
			res.failedAt, res.writeErr = n, err
			break
		}
		res.done = n
		if synced {
			res.lastSynced = n
		}
		if n%10 == 0 {
			// Move data into sstables so that reads and compactions do
			// I/O. The WAL rotation that starts a flush runs without
			// faults: Pebble panics on an error there (a process death,
			// which TestCrashConsistency covers). The flush itself may
			// fail; Pebble retries it.
			inj.opened.Store(false)
			done, err := s.db.AsyncFlush()
			inj.opened.Store(true)
			if err == nil {
				<-done
			}
		}
		// Reads through the same file system fail with errors, never
		// panics or wrong data (checked after reopening).
		first, _ := s.FirstIndex()
		last, _ := s.LastIndex()
		if last >= first {
			if _, err := s.Entries(first, last+1, 1<<20); err != nil {
				res.readErrs++
			}
		}
		if _, err := s.Get("kv", []byte("k1")); err != nil && !errors.Is(err, ErrNotFound) {
			res.readErrs++
		}
		if _, _, err := s.SnapshotData(); err != nil {
			res.readErrs++
		}
	}
	if res.failedAt > 0 && s.failed != nil {
		if err := s.Append(mkHardState(99, 1, 0), nil, nil); !errors.Is(err, ErrFailed) {
			t.Errorf("append after a failed write: %v, want ErrFailed", err)
		}
	}
	_ = s.Close() // may fail; must return
	inj.opened.Store(false)
	return res
}

// TestErrorInjection fails the I/O operation with index i, for every i a
// run performs (every third with -race or -short), and checks that the
// store returns errors, never panics, refuses writes after a failed one,
// and that a crash clone of what was synced reopens to the state after
// some write between the last acknowledged synced one and the failed one.
func TestErrorInjection(t *testing.T) {
	// Reference states, without faults.
	ref := vfs.NewMem()
	s := testOpen(t, ref, "mon")
	g := &opStream{r: rand.New(rand.NewPCG(5, 5)), term: 1}
	dumps := []string{dump(t, s)}
	for n := 1; n <= errorfsOps; n++ {
		if _, err := g.next(s); err != nil {
			t.Fatal(err)
		}
		dumps = append(dumps, dump(t, s))
	}
	s.Close()

	count := &faultable{inj: errorfs.OnIndex(-1)}
	errorfsRun(t, errorfs.Wrap(vfs.NewCrashableMem(), count), count)
	total := int(count.n.Load())
	step := 1
	if testing.Short() || raceEnabled {
		step = 3
	}
	var failures, reads, unnoticed int
	for i := 0; i < total; i += step {
		mem := vfs.NewCrashableMem()
		inj := &faultable{inj: errorfs.OnIndex(int32(i))}
		res := errorfsRun(t, errorfs.Wrap(mem, inj), inj)
		switch {
		case res.failedAt > 0:
			failures++
		case res.readErrs > 0:
			reads++
		default:
			unnoticed++ // retried or ignored by Pebble (background work)
		}
		clone := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		c, err := Open(Options{FS: clone, Dir: "mon"})
		if err != nil {
			t.Fatalf("index %d: reopen without faults: %v (write %d failed: %v)", i, err, res.failedAt, res.writeErr)
		}
		got := dump(t, c)
		c.Close()
		hi := res.done
		if res.failedAt > 0 {
			hi = res.failedAt
		}
		k := hi
		for k >= res.lastSynced && dumps[k] != got {
			k--
		}
		if k < res.lastSynced {
			t.Fatalf("index %d: reopened store matches no state in [%d, %d] (write %d failed: %v): %s",
				i, res.lastSynced, hi, res.failedAt, res.writeErr, diffLines(got, dumps[hi]))
		}
	}
	if failures == 0 {
		t.Fatal("no injected error made a write fail")
	}
	t.Logf("%d operations, every %d: %d write failures, %d read-only failures, %d unnoticed", total, step, failures, reads, unnoticed)
}

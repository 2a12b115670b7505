package monstore

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"
)

// TestConcurrentReaders reads the log, the key space and snapshots while
// one writer appends, commits, compacts and installs snapshots; run with
// -race. Readers see only raft's sentinels for ranges that moved under
// them, never another error.
func TestConcurrentReaders(t *testing.T) {
	s, err := Open(Options{FS: vfs.NewMem(), Dir: "mon", EntryCacheBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var readErrs []error
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				first, _ := s.FirstIndex()
				last, _ := s.LastIndex()
				var errs []error
				if last >= first {
					_, err := s.Entries(first, last+1, 1<<20)
					errs = append(errs, err)
					_, err = s.Term(last)
					errs = append(errs, err)
				}
				_, err := s.Snapshot()
				errs = append(errs, err)
				errs = append(errs, s.Scan("kv", nil, func(k, v []byte) error { return nil }))
				for _, err := range errs {
					if err != nil && !errors.Is(err, raft.ErrCompacted) && !errors.Is(err, raft.ErrUnavailable) &&
						!errors.Is(err, raft.ErrSnapshotTemporarilyUnavailable) {
						mu.Lock()
						readErrs = append(readErrs, err)
						mu.Unlock()
					}
				}
			}
		})
	}
	g := &opStream{r: rand.New(rand.NewPCG(9, 9)), term: 1}
	for range 300 {
		if _, err := g.next(s); err != nil {
			t.Error(err)
			break
		}
	}
	close(done)
	wg.Wait()
	for _, err := range readErrs {
		t.Error(err)
	}
}

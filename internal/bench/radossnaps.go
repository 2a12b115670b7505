package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// Snapshots during a write benchmark (RadosWorkload.SnapEvery), so that
// the cost of copy-on-write is one command to measure: the issue's
// acceptance run is a 4 KiB overwrite benchmark with a snapshot every
// second against the same without (docs/SNAPSHOTS.md).

// snapshotter takes a snapshot every interval until stopped. It uses
// self-managed snapshots, setting the IOContext's write context after
// each (what a block image does), unless the pool already has pool
// snapshots; then it makes pool snapshots named PREFIX_snapN.
type snapshotter struct {
	io     *rados.IOContext
	prefix string
	quit   chan struct{} // closed by stop
	done   chan struct{}

	// Owned by the run goroutine until done is closed.
	pool  bool     // pool snapshots
	ids   []uint64 // self-managed ids, newest first
	names []string // pool snapshot names
	err   error
}

func startSnapshots(ctx context.Context, io *rados.IOContext, prefix string, every time.Duration) *snapshotter {
	s := &snapshotter{io: io, prefix: prefix, quit: make(chan struct{}), done: make(chan struct{})}
	go s.run(ctx, every)
	return s
}

func (s *snapshotter) run(ctx context.Context, every time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		// Stopping waits for a snapshot being taken rather than cancel
		// it: the monitors may have made it already, and a snapshot
		// the snapshotter did not hear of would never be removed.
		select {
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		case <-tick.C:
		}
		if err := s.take(ctx); err != nil {
			if ctx.Err() == nil {
				s.err = err
			}
			return
		}
	}
}

// take takes one snapshot; each call returns once the client's map has
// it, so the writes that follow preserve what it covers.
func (s *snapshotter) take(ctx context.Context) error {
	if !s.pool {
		id, err := s.io.SelfManagedSnapCreate(ctx)
		if errors.Is(err, rados.ErrInvalid) && len(s.ids) == 0 {
			s.pool = true // the pool has pool snapshots
		} else if err != nil {
			return fmt.Errorf("bench: self-managed snapshot: %w", err)
		} else {
			s.ids = append([]uint64{id}, s.ids...)
			return s.io.SetSnapWriteContext(id, s.ids)
		}
	}
	name := fmt.Sprintf("%s_snap%d", s.prefix, len(s.names))
	if _, err := s.io.CreatePoolSnap(ctx, name); err != nil {
		return fmt.Errorf("bench: pool snapshot %s: %w", name, err)
	}
	s.names = append(s.names, name)
	return nil
}

// stop ends the snapshots and removes those taken (the OSDs then trim
// their clones in the background). It returns how many there were and
// their kind.
func (s *snapshotter) stop(ctx context.Context) (int, string) {
	close(s.quit)
	<-s.done
	mode := "selfmanaged"
	if s.pool {
		mode = "pool"
	}
	n := len(s.ids) + len(s.names)
	if n == 0 {
		return 0, ""
	}
	if len(s.ids) > 0 {
		// Later writes preserve nothing for the removed ids.
		s.err = cmpOr(s.err, s.io.SetSnapWriteContext(s.ids[0], nil))
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan func() error)
	for range min(n, 8) {
		wg.Go(func() {
			for f := range work {
				if err := f(); err != nil {
					mu.Lock()
					s.err = cmpOr(s.err, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, id := range slices.Backward(s.ids) {
		work <- func() error {
			if err := s.io.SelfManagedSnapRemove(ctx, id); err != nil {
				return fmt.Errorf("bench: remove self-managed snapshot %d: %w", id, err)
			}
			return nil
		}
	}
	for _, name := range s.names {
		work <- func() error {
			if err := s.io.RemovePoolSnap(ctx, name); err != nil {
				return fmt.Errorf("bench: remove pool snapshot %s: %w", name, err)
			}
			return nil
		}
	}
	close(work)
	wg.Wait()
	return n, mode
}

// prepareObjects writes objects 0 to n-1 of m with data, concurrency at
// a time: the set a reusing write then overwrites.
func prepareObjects(ctx context.Context, io *rados.IOContext, m RadosMetadata, n int64, concurrency int, data []byte) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range min(int64(max(concurrency, 1)), n) {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				if err := io.WriteFull(ctx, m.ObjectName(i), data); err != nil {
					mu.Lock()
					first = cmpOr(first, fmt.Errorf("bench: prepare %s: %w", m.ObjectName(i), err))
					mu.Unlock()
					next.Store(n)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

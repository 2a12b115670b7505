package kv

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
	"github.com/cuttlestore/cuttle/rados"
)

// Waking the writers that wait for a busy leaf (docs/KV.md, "Waiting
// for a busy leaf"). A client whose operation meets a leaf frozen (or an
// index entry marked) by another client's split or join watches the
// index object; the operation's client notifies on the index once its
// swap has landed (or once it rolled back), with the entries it
// replaced, and every watching client applies the change to its cache
// and wakes its waiters, which retry at once. The backoff of
// Config.Backoff stays as the fallback for a notify that never comes:
// the operation's client died, and cleanup finishes it once its mark is
// Config.MarkTimeout old.

// notifyTimeout is how long the OSD holds a notify for the watchers'
// acks. Nobody waits for them (the notify is sent in the background), so
// it only bounds how long a notify to a dead watcher stays pending.
const notifyTimeout = 2 * time.Second

// notice is the payload of a notify on the index: the entries a swap
// replaced (high bound, leaf) and those it added. Both empty: an
// operation was rolled back (its leaves thawed, its mark removed).
type notice struct {
	Old, New []clskv.IndexEntry
}

// maxNoticeEntries bounds a notice's lists: a swap replaces at most two
// entries by at most two.
const maxNoticeEntries = 16

// encode: version 1: old, new, each a count and (high, leaf) pairs.
func (n notice) encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	for _, l := range [][]clskv.IndexEntry{n.Old, n.New} {
		e.Uvarint(uint64(len(l)))
		for _, x := range l {
			e.String(x.High)
			e.String(x.Leaf)
		}
	}
	e.End(mk)
	return e.Data()
}

func decodeNotice(b []byte) (notice, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	var lists [2][]clskv.IndexEntry
	for i := range lists {
		n := d.Uvarint()
		if n > maxNoticeEntries {
			d.Fail(fmt.Errorf("%d entries (at most %d)", n, maxNoticeEntries))
			break
		}
		for range n {
			lists[i] = append(lists[i], clskv.IndexEntry{High: d.String(MaxKeyLen), Leaf: d.String(maxLeafName)})
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return notice{}, fmt.Errorf("kv index notice: %w", err)
	}
	return notice{Old: lists[0], New: lists[1]}, nil
}

// maxLeafName bounds a leaf's name: "kv." + a store name of at most 128
// bytes + ".leaf." + 16 hex digits + "." + a counter.
const maxLeafName = 256

// lockWatch takes the right to register the watch (held across the
// registration's round trip, so a channel: a waiter for it is blocked
// on a channel, not a mutex, and may give up with its context); false
// if ctx ended first.
func (s *Store) lockWatch(ctx context.Context) bool {
	select {
	case s.watchLock <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Store) unlockWatch() { <-s.watchLock }

// changes returns the channel the next notify on the index closes, and
// whether the store watched the index when it was taken: a notify sent
// after that reaches this client.
func (s *Store) changes() (<-chan struct{}, bool) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed, s.watch != nil
}

// wake wakes every waiter.
func (s *Store) wake() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
}

// ensureWatch watches the index unless the store does already, and says
// whether it does. Failing to watch is not an error: waiters fall back
// to the backoff.
func (s *Store) ensureWatch(ctx context.Context) bool {
	if s.cfg.NoWatch {
		return false
	}
	if !s.lockWatch(ctx) {
		return false
	}
	defer s.unlockWatch()
	s.wmu.Lock()
	have, closed := s.watch != nil, s.closed
	s.wmu.Unlock()
	if have || closed {
		return have
	}
	s.watchGen++
	gen := s.watchGen
	w, err := s.io.Watch(ctx, indexName(s.name), func(ev rados.WatchEvent) []byte {
		s.onNotify(gen, ev)
		return nil
	})
	if err != nil {
		s.log.Debug("kv: watch the index (waiters fall back to the backoff)", "err", err)
		return false
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.watch = w
	return true
}

// onNotify handles an event of the watch registered as gen: a notice is
// applied to the cache (or nothing done if the cache holds what the swap
// added already, or the index re-read if it holds neither that nor what
// the swap replaced), then the waiters are woken; the watch's loss
// (it may have missed notifies) forgets the watch, so the next waiter
// watches again, and wakes the waiters.
func (s *Store) onNotify(gen uint64, ev rados.WatchEvent) {
	if ev.Err != nil {
		s.log.Debug("kv: the watch on the index is lost", "err", ev.Err)
		s.lockWatch(context.Background())
		s.wmu.Lock()
		if s.watchGen == gen {
			s.watch = nil
		}
		s.wmu.Unlock()
		s.unlockWatch()
		s.wake()
		return
	}
	n, err := decodeNotice(ev.Payload)
	applied := false
	if err != nil {
		s.log.Warn("kv: a notify on the index does not decode: re-reading the index", "notifier", ev.Notifier, "err", err)
	} else {
		s.mu.Lock()
		var next plan.Index
		if next, applied = s.index.Apply(n.Old, n.New); applied {
			s.index = next
			s.epoch++
		} else if len(n.New) > 0 && s.index.Holds(n.New) {
			// The cache has it already: this client's own swap, or an
			// index read after it.
			applied = true
		}
		s.mu.Unlock()
	}
	if !applied {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := s.refresh(ctx); err != nil {
			s.log.Debug("kv: re-read the index after a notify", "err", err)
		}
		cancel()
	}
	s.wake()
}

// announce notifies the index's watchers of n, in the background: the
// operation does not wait for their acks (a dead watcher's never come).
func (s *Store) announce(ctx context.Context, n notice) {
	s.wmu.Lock()
	closed := s.closed
	if !closed {
		s.notifies.Add(1)
	}
	s.wmu.Unlock()
	if closed {
		return
	}
	payload := n.encode()
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer s.notifies.Done()
		ctx, cancel := context.WithTimeout(ctx, notifyTimeout+time.Minute)
		defer cancel()
		if _, err := s.io.Notify(ctx, indexName(s.name), payload, notifyTimeout); err != nil && !errors.Is(err, rados.ErrTimedOut) {
			s.log.Debug("kv: notify on the index", "err", err)
		}
	}()
}

// named reports whether the index still names each of leaves (by their
// high bounds): one read of those entries.
func (s *Store) named(ctx context.Context, leaves []plan.Entry) (bool, error) {
	var keys []string
	for _, l := range leaves {
		if l.Leaf != "" {
			keys = append(keys, clskv.IndexKey(l.Bounds.High))
		}
	}
	if len(keys) == 0 {
		return true, nil
	}
	vals, err := s.io.GetOmapValuesByKeys(ctx, indexName(s.name), keys...)
	if err != nil {
		return false, fmt.Errorf("kv: store %s: read the index: %w", s.name, err)
	}
	for _, l := range leaves {
		if l.Leaf == "" {
			continue
		}
		raw, ok := vals[clskv.IndexKey(l.Bounds.High)]
		if !ok {
			return false, nil
		}
		x, err := clskv.DecodeEntry(raw)
		if err != nil {
			return false, fmt.Errorf("kv: object %s: entry %q: %w: %v", indexName(s.name), l.Bounds.High, ErrCorrupt, err)
		}
		if x.Leaf != l.Leaf {
			return false, nil
		}
	}
	return true, nil
}

// Close ends the store's watch on the index, if it has one, and waits
// for its notifies in flight. The Store must not be used after.
func (s *Store) Close(ctx context.Context) error {
	s.lockWatch(context.Background())
	s.wmu.Lock()
	w := s.watch
	s.watch, s.closed = nil, true
	s.wmu.Unlock()
	s.unlockWatch()
	var err error
	if w != nil {
		if err = w.Unwatch(ctx); err != nil {
			err = fmt.Errorf("kv: store %s: unwatch the index: %w", s.name, err)
		}
	}
	s.notifies.Wait()
	return err
}

// waitCounters count a Store's waits for busy leaves.
type waitCounters struct {
	woken, backedOff atomic.Int64
	waited           atomic.Int64 // nanoseconds
}

// WaitStats counts the waits of a Store's operations for busy leaves
// (frozen, or their index entries marked, by another client's
// operation) since it was opened.
type WaitStats struct {
	// Woken: waits a notify on the index ended; BackedOff: waits that
	// ran their backoff out (no notify came in time).
	Woken, BackedOff int64
	// Waited is the time spent in them.
	Waited time.Duration
}

// Waits returns the store's WaitStats.
func (s *Store) Waits() WaitStats {
	return WaitStats{Woken: s.waits.woken.Load(), BackedOff: s.waits.backedOff.Load(), Waited: time.Duration(s.waits.waited.Load())}
}

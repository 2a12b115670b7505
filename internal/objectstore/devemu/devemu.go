// Package devemu emulates the timing of a storage device over an object
// store, for experiments with mixed clusters on one machine (an OSD's
// osd_emulate_device option: hdd or ssd). It owns the device model and
// the wrapper that applies it; the data still lives in the store below.
//
// The model (docs/OSD.md, "Device emulation"): one queue, served in
// order, each I/O taking the profile's latency (an HDD's seek and
// rotation, an SSD's access) plus its bytes over the profile's bandwidth.
// An I/O that arrives while the device is busy waits for the I/Os before
// it, so the device's bandwidth bounds its throughput. A read returns
// once its I/O is done; a transaction is visible to readers when the
// store below applies it (a cache) and committed — durable, acknowledged
// — once its I/O is done, in the order transactions were queued.
// Metadata lookups (stat, attributes, omap, listings) are not charged:
// an OSD's metadata is cached, as BlueStore's is in RocksDB's.
//
// Time comes from an internal/clock Clock, so tests run the model in
// virtual time. Concurrency: a Store is safe for concurrent use.
package devemu

import (
	"context"
	"fmt"
	"hash/crc32"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// Profile is a device's timing.
type Profile struct {
	Name string
	// Latency is what every I/O costs besides its transfer.
	Latency time.Duration
	// Bandwidth is the transfer rate, in bytes per second.
	Bandwidth float64
}

// The profiles osd_emulate_device names: a 7200 rpm disk and a SATA SSD,
// as the experiments of issue 42 describe them.
var (
	HDD = Profile{Name: "hdd", Latency: 8 * time.Millisecond, Bandwidth: 150e6}
	SSD = Profile{Name: "ssd", Latency: 100 * time.Microsecond, Bandwidth: 500e6}
)

// ByName returns the profile of osd_emulate_device's value: hdd or ssd;
// false for none (no emulation) and anything else.
func ByName(name string) (Profile, bool) {
	switch name {
	case HDD.Name:
		return HDD, true
	case SSD.Name:
		return SSD, true
	}
	return Profile{}, false
}

// Cost is how long the device takes for one I/O of n bytes.
func (p Profile) Cost(n int) time.Duration {
	return p.Latency + time.Duration(float64(n)/p.Bandwidth*float64(time.Second))
}

// Store is a store with a device's timing.
type Store struct {
	objectstore.Store
	p   Profile
	clk clock.Clock

	mu      sync.Mutex
	busy    time.Time     // when the device finishes the I/Os booked so far
	commits []*pending    // transactions not yet marked committed, in queue order
	drained chan struct{} // closed when commits empties, for Close; nil if none waits
	stats   Stats
}

// pending is a transaction whose commit waits for the store below
// (stored), for its I/O (done), and for those queued before it.
type pending struct {
	out    *objectstore.Completion
	done   time.Time
	stored bool
	err    error
}

// Stats counts what the device did.
type Stats struct {
	Reads, Writes         uint64
	ReadBytes, WriteBytes uint64
	Busy                  time.Duration // the I/Os' time, summed
	Waited                time.Duration // time I/Os queued behind others
}

// Wrap returns st with p's timing on clk. It keeps st's optional
// interfaces: objectstore.KVReporter and Recycler if st has them; reads
// through CRCReader and DeviceReader are charged like Read.
func Wrap(st objectstore.Store, p Profile, clk clock.Clock) objectstore.Store {
	s := &Store{Store: st, p: p, clk: clk}
	if _, ok := st.(objectstore.KVReporter); ok {
		return kvStore{s}
	}
	return s
}

// kvStore is a Store over a store that reports its key-value database.
type kvStore struct{ *Store }

// KVStats implements objectstore.KVReporter.
func (k kvStore) KVStats(ctx context.Context) (objectstore.KVStats, error) {
	return k.Store.Store.(objectstore.KVReporter).KVStats(ctx)
}

// Profile returns the device's profile.
func (s *Store) Profile() Profile { return s.p }

// Stats returns the counts so far.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// book queues an I/O of n bytes on the device and returns when it ends.
func (s *Store) book(n int, write bool) time.Time {
	now := s.clk.Now()
	cost := s.p.Cost(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	start := now
	if s.busy.After(now) {
		start = s.busy
		s.stats.Waited += s.busy.Sub(now)
	}
	s.busy = start.Add(cost)
	s.stats.Busy += cost
	if write {
		s.stats.Writes++
		s.stats.WriteBytes += uint64(n)
	} else {
		s.stats.Reads++
		s.stats.ReadBytes += uint64(n)
	}
	return s.busy
}

// waitUntil returns at t, or with ctx's error.
func (s *Store) waitUntil(ctx context.Context, t time.Time) error {
	d := t.Sub(s.clk.Now())
	if d <= 0 {
		return nil
	}
	tm := s.clk.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("devemu: waiting for the emulated %s: %w", s.p.Name, ctx.Err())
	}
}

// read charges a read of n bytes.
func (s *Store) read(ctx context.Context, n int) error { return s.waitUntil(ctx, s.book(n, false)) }

// Read implements objectstore.Store.
func (s *Store) Read(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, error) {
	b, err := s.Store.Read(ctx, c, o, off, length)
	if err != nil {
		return nil, err
	}
	if err := s.read(ctx, len(b)); err != nil {
		return nil, err
	}
	return b, nil
}

// ReadCRC implements objectstore.CRCReader, with the store's own when it
// has one.
func (s *Store) ReadCRC(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, uint32, error) {
	var b []byte
	var crc uint32
	var err error
	if cr, ok := s.Store.(objectstore.CRCReader); ok {
		b, crc, err = cr.ReadCRC(ctx, c, o, off, length)
	} else if b, err = s.Store.Read(ctx, c, o, off, length); err == nil {
		crc = crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	}
	if err != nil {
		return nil, 0, err
	}
	if err := s.read(ctx, len(b)); err != nil {
		return nil, 0, err
	}
	return b, crc, nil
}

// ReadDevice implements objectstore.DeviceReader.
func (s *Store) ReadDevice(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, error) {
	b, err := objectstore.ReadDevice(ctx, s.Store, c, o, off, length)
	if err != nil {
		return nil, err
	}
	if err := s.read(ctx, len(b)); err != nil {
		return nil, err
	}
	return b, nil
}

// StatAttrs implements objectstore.AttrStater (not charged: metadata).
func (s *Store) StatAttrs(ctx context.Context, c objectstore.CollectionID, o objid.ID, names [2]string) (objectstore.StatAttrs, error) {
	return objectstore.StatAttrsOf(ctx, s.Store, c, o, names)
}

// Recycle implements objectstore.Recycler: buffers go back to the store
// below if it reuses them.
func (s *Store) Recycle(b []byte) {
	if r, ok := s.Store.(objectstore.Recycler); ok {
		r.Recycle(b)
	}
}

// txnBytes is what a transaction writes to the device: data, attribute
// and omap values, keys.
func txnBytes(t *objectstore.Transaction) int {
	n := 0
	for i := range t.Ops {
		op := &t.Ops[i]
		n += len(op.Data)
		for k, v := range op.Attrs {
			n += len(k) + len(v)
		}
	}
	return n
}

// Queue implements objectstore.Store: the transaction applies as the
// store below applies it and commits once that store has committed it
// and the device has written it, after the transactions queued before.
func (s *Store) Queue(ctx context.Context, t *objectstore.Transaction) (*objectstore.Completion, error) {
	inner, err := s.Store.Queue(ctx, t)
	if err != nil {
		return nil, err
	}
	p := &pending{out: objectstore.NewCompletion(), done: s.book(txnBytes(t), true)}
	s.mu.Lock()
	s.commits = append(s.commits, p)
	s.mu.Unlock()
	inner.OnApplied(p.out.MarkApplied)
	inner.OnCommitted(func(err error) {
		s.mu.Lock()
		p.stored, p.err = true, err
		s.mu.Unlock()
		s.pump()
	})
	return p.out, nil
}

// pump marks committed, in order, the transactions at the head of the
// queue that are stored and written, and arms a timer for the next one
// that is stored but not yet written.
func (s *Store) pump() {
	now := s.clk.Now()
	s.mu.Lock()
	var ready []*pending
	for len(s.commits) > 0 {
		h := s.commits[0]
		if !h.stored {
			break
		}
		if h.done.After(now) {
			s.clk.AfterFunc(h.done.Sub(now), s.pump)
			break
		}
		ready = append(ready, h)
		s.commits[0] = nil
		s.commits = s.commits[1:]
	}
	if len(s.commits) == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
	s.mu.Unlock()
	for _, p := range ready {
		p.out.MarkCommitted(p.err)
	}
}

// Close implements objectstore.Store: it closes the store below, which
// waits for its transactions to commit, then waits for the device to
// have written them.
func (s *Store) Close() error {
	err := s.Store.Close()
	s.mu.Lock()
	if len(s.commits) == 0 {
		s.mu.Unlock()
		return err
	}
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	ch := s.drained
	s.mu.Unlock()
	<-ch
	return err
}

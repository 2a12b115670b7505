package monstore

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/pebblelog"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Store is the monitor's durable store. See the package documentation.
type Store struct {
	opts Options
	log  *slog.Logger
	db   *pebble.DB

	// mu guards everything below. Readers of the log and of the applied
	// state hold it shared; every write holds it exclusively from building
	// its batch to updating the fields after the batch is durable, so the
	// fields always describe what Pebble holds.
	mu       sync.RWMutex
	closed   bool
	failed   error         // first write error; writes refuse after it
	hs       *pb.HardState // nil until one is stored
	logStart logState
	last     uint64 // index of the last entry, logStart.index if none
	applied  appliedState
	cache    entryCache
	snap     *pb.Snapshot // last snapshot Snapshot built, for reuse at the same index
}

// Open opens the store in opts.Dir, creating it if it does not exist. It
// reads and checks the whole raft log (bounded by Compact) and refuses a
// store whose records are corrupt or inconsistent with ErrCorrupt.
func Open(opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	db, err := pebble.Open(opts.Dir, &pebble.Options{
		FS:     opts.FS,
		Logger: pebblelog.Logger{Log: opts.Logger.WithGroup("pebble"), Prefix: "monstore"},
	})
	if err != nil {
		return nil, fmt.Errorf("monstore open %s: pebble: %w", opts.Dir, err)
	}
	s := &Store{
		opts:  opts,
		log:   opts.Logger.With("monstore", opts.Dir),
		db:    db,
		cache: entryCache{budget: uint64(opts.EntryCacheBytes)},
	}
	if err := s.load(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("monstore open %s: %w", opts.Dir, err)
	}
	s.log.Info("monstore: opened", "first_index", s.logStart.index+1, "last_index", s.last,
		"applied", s.applied.index, "commit", s.hs.GetCommit(), "term", s.hs.GetTerm())
	return s, nil
}

// load reads the raft state and checks the log, or initialises an empty
// database.
func (s *Store) load() error {
	v, err := s.get(keyFormat)
	if errors.Is(err, ErrNotFound) {
		return s.initEmpty()
	}
	if err != nil {
		return err
	}
	ver, err := decodeFormat(v)
	if err != nil {
		return err
	}
	if ver != formatVersion {
		return fmt.Errorf("%w: format version %d, this build reads %d", ErrCorrupt, ver, formatVersion)
	}
	if v, err := s.get(keyHardState); err == nil {
		if s.hs, err = decodeHardState(v); err != nil {
			return err
		}
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	if v, err := s.get(keyLogState); err == nil {
		if s.logStart, err = decodeLogState(v); err != nil {
			return err
		}
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	s.applied = appliedState{conf: &pb.ConfState{}}
	if v, err := s.get(keyApplied); err == nil {
		if s.applied, err = decodeApplied(v); err != nil {
			return err
		}
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	if err := s.loadLog(); err != nil {
		return err
	}
	if s.applied.index < s.logStart.index || s.applied.index > s.last {
		return fmt.Errorf("%w: applied index %d outside the log [%d, %d]", ErrCorrupt, s.applied.index, s.logStart.index, s.last)
	}
	return nil
}

// initEmpty writes the format record into a database that has none, which
// must then be empty: a crash can leave a new database without it.
func (s *Store) initEmpty() error {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return err
	}
	nonEmpty := it.First()
	var key []byte
	if nonEmpty {
		key = append(key, it.Key()...)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	if nonEmpty {
		return fmt.Errorf("%w: no format record, but the database holds key %x", ErrCorrupt, key)
	}
	s.applied = appliedState{conf: &pb.ConfState{}}
	b := s.db.NewBatch()
	_ = b.Set(keyFormat, encodeFormat(), nil)
	return s.commitBatch(b, pebble.Sync)
}

// loadLog reads every log entry, checks that they decode and are
// contiguous after logStart, sets last and fills the cache with the
// newest.
func (s *Store) loadLog() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: entryKey(0), UpperBound: entryKeyEnd})
	if err != nil {
		return err
	}
	defer it.Close()
	s.last = s.logStart.index
	var prevTerm uint64
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		ent, err := decodeEntry(it.Key(), v)
		if err != nil {
			return err
		}
		if ent.GetIndex() != s.last+1 {
			return fmt.Errorf("%w: log entry %d follows %d (first index %d)", ErrCorrupt, ent.GetIndex(), s.last, s.logStart.index+1)
		}
		if ent.GetTerm() < max(prevTerm, s.logStart.term) {
			return fmt.Errorf("%w: log entry %d has term %d below the previous term %d", ErrCorrupt, ent.GetIndex(), ent.GetTerm(), max(prevTerm, s.logStart.term))
		}
		prevTerm = ent.GetTerm()
		s.last = ent.GetIndex()
		s.cache.append([]*pb.Entry{ent})
	}
	return it.Error()
}

// get returns a copy of the value of key, or ErrNotFound.
func (s *Store) get(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("monstore: read key %x: %w", key, err)
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}

// checkWritable returns why the store cannot write, or nil. Call with mu
// held.
func (s *Store) checkWritable() error {
	if s.closed {
		return ErrClosed
	}
	if s.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, s.failed)
	}
	return nil
}

// commitBatch commits b and closes it. A failure fails the store: the batch
// may or may not be durable, so the fields may no longer describe the disk.
// Call with mu held exclusively (or before the store is shared).
func (s *Store) commitBatch(b *pebble.Batch, opts *pebble.WriteOptions) error {
	err := pebblelog.Recover(func() error { return b.Commit(opts) })
	// A batch whose commit hit a Pebble fatal is still referenced by the
	// broken commit pipeline; leave it to the garbage collector.
	if err == nil {
		err = b.Close()
	}
	if err != nil {
		s.failed = err
		s.log.Error("monstore: write failed; the store refuses writes until reopened", "err", err)
		return fmt.Errorf("monstore: write: %w", err)
	}
	return nil
}

// Close closes the store. Later calls of any method return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	s.cache.reset()
	s.snap = nil
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("monstore close %s: %w", s.opts.Dir, err)
	}
	return nil
}

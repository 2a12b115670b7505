package kv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
	"github.com/cuttlestore/cuttle/rados"
)

// Limits of keys and values (the kv class's).
const (
	MaxKeyLen   = clskv.MaxKeyLen
	MaxValueLen = clskv.MaxValueLen
)

// Errors; test for them with errors.Is.
var (
	// ErrNotFound: the key is not in the store (Get), or the store does
	// not exist (Open).
	ErrNotFound = errors.New("kv: not found")
	// ErrExists: Create found a store of that name.
	ErrExists = errors.New("kv: store exists")
	// ErrBusy: the key's leaf stayed frozen or its index entry marked
	// for twice Config.MarkTimeout and through every retry after: an
	// operation of another client that cleanup could not finish.
	ErrBusy = errors.New("kv: leaf busy")
	// ErrInvalid: an empty or oversized key or value.
	ErrInvalid = errors.New("kv: invalid argument")
	// ErrCorrupt: a stored index or leaf does not decode.
	ErrCorrupt = errors.New("kv: corrupt store")
	// ErrConflict: a condition of Apply or CompareAndSwap did not hold;
	// nothing was written.
	ErrConflict = errors.New("kv: condition does not hold")
	// ErrSpansLeaves: a batch's keys are in more than one leaf.
	ErrSpansLeaves = errors.New("kv: batch keys span leaves")
)

// Options are a store's settings, fixed at Create.
type Options struct {
	// K: a leaf holds at most 2K entries, and at least K unless it is
	// the only one. Default 400 (the design document's optimum was near
	// 400-800).
	K uint32
}

// Config is how a client uses a store.
type Config struct {
	// Logger receives the store's events (splits); nil discards them.
	Logger *slog.Logger
	// Retries bounds the attempts of one operation that meets a stale
	// cache or a busy leaf (default 20).
	Retries int
	// Backoff is the first wait after a busy leaf, doubled up to 64 times
	// it (default 1ms).
	Backoff time.Duration
	// MarkTimeout is how old (by the OSD's clock) another client's mark
	// must be before this client takes its operation over as abandoned
	// and rolls it forward or back (default 5s). An operation waits for a
	// busy leaf up to twice this long before it fails with ErrBusy.
	MarkTimeout time.Duration
	// NoWatch: wait for busy leaves by the backoff alone, never watching
	// the index (how the store waited before it had notifies; for
	// comparisons). Operations still notify the watchers of others.
	NoWatch bool
}

// The objects of store N: its index "kv.N.index" and leaves
// "kv.N.leaf.<client nonce>.<counter>".
func indexName(store string) string { return "kv." + store + ".index" }

const storeAttr = "kv.store"

// info is the index's storeAttr: the store's options.
type info struct{ K uint32 }

// encode: version 1: k.
func (i info) encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(uint64(i.K))
	e.End(mk)
	return e.Data()
}

func decodeInfo(b []byte) (info, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	k := d.Uvarint()
	d.End()
	if k == 0 || k > 1<<30 {
		d.Fail(fmt.Errorf("k %d out of range", k))
	}
	if err := d.Finish(); err != nil {
		return info{}, fmt.Errorf("kv store info: %w", err)
	}
	return info{K: uint32(k)}, nil
}

// Store is a client's handle on one store.
type Store struct {
	io      *rados.IOContext
	name    string
	k       uint32
	cfg     Config
	log     *slog.Logger
	nonce   string
	counter atomic.Uint64

	mu    sync.Mutex
	index plan.Index
	epoch uint64 // bumped by every index read, so racing readers keep the newest

	// The watch on the index and its waiters (wake.go).
	watchLock chan struct{} // held while registering the watch (lockWatch)
	watchGen  uint64        // the registration the watch is; under watchLock
	wmu       sync.Mutex
	watch     *rados.Watch
	changed   chan struct{} // closed by the next notify on the index
	closed    bool
	notifies  sync.WaitGroup // notifies sent in the background
	waits     waitCounters

	// afterStep, set only by this package's tests, runs after each step
	// of a split; its error stops the split there.
	afterStep func(step string) error
	// onWait, set only by this package's tests, runs when an operation
	// starts to wait for a busy leaf.
	onWait func()
}

// Create makes store name in io's pool with one empty leaf and opens it.
func Create(ctx context.Context, io *rados.IOContext, name string, opts Options, cfg Config) (*Store, error) {
	if opts.K == 0 {
		opts.K = 400
	}
	s, err := newStore(io, name, opts.K, cfg)
	if err != nil {
		return nil, err
	}
	leaf := s.newName("leaf")
	if err := s.writeLeaf(ctx, leaf, clskv.Bounds{}, nil); err != nil {
		return nil, err
	}
	w := rados.NewWriteOp()
	w.Create(true)
	w.SetXattr(storeAttr, info(opts).encode())
	w.SetOmap(map[string][]byte{clskv.IndexKey(""): clskv.Entry{Leaf: leaf}.Encode()})
	if err := io.OperateWrite(ctx, indexName(name), w); err != nil {
		_ = io.Delete(ctx, leaf)
		if errors.Is(err, rados.ErrExists) {
			return nil, fmt.Errorf("kv: create %s: %w", name, ErrExists)
		}
		return nil, fmt.Errorf("kv: create %s: %w", name, err)
	}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Open opens store name in io's pool.
func Open(ctx context.Context, io *rados.IOContext, name string, cfg Config) (*Store, error) {
	b, err := io.GetXattr(ctx, indexName(name), storeAttr)
	if errors.Is(err, rados.ErrNotFound) || errors.Is(err, rados.ErrNoAttr) {
		return nil, fmt.Errorf("kv: open %s: %w", name, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("kv: open %s: %w", name, err)
	}
	in, err := decodeInfo(b)
	if err != nil {
		return nil, fmt.Errorf("kv: open %s: object %s: %w: %v", name, indexName(name), ErrCorrupt, err)
	}
	s, err := newStore(io, name, in.K, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func newStore(io *rados.IOContext, name string, k uint32, cfg Config) (*Store, error) {
	if name == "" || len(name) > 128 {
		return nil, fmt.Errorf("kv: store name of %d bytes (want 1 to 128): %w", len(name), ErrInvalid)
	}
	if cfg.Retries <= 0 {
		cfg.Retries = 20
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Millisecond
	}
	if cfg.MarkTimeout <= 0 {
		cfg.MarkTimeout = 5 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("kv: nonce: %w", err)
	}
	return &Store{io: io, name: name, k: k, cfg: cfg, log: log.With("kv", name), nonce: hex.EncodeToString(b[:]),
		watchLock: make(chan struct{}, 1)}, nil
}

// K is the store's k.
func (s *Store) K() uint32 { return s.k }

// newName returns a name no other client or operation uses.
func (s *Store) newName(kind string) string {
	return fmt.Sprintf("kv.%s.%s.%s.%d", s.name, kind, s.nonce, s.counter.Add(1))
}

// Leaves returns the cached index: the leaves in key order.
func (s *Store) Leaves() []plan.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index.Entries()
}

// refresh re-reads the index.
func (s *Store) refresh(ctx context.Context) error {
	s.mu.Lock()
	epoch := s.epoch
	s.mu.Unlock()
	var entries []clskv.IndexEntry
	after := ""
	for {
		kvs, more, err := s.io.GetOmapValues(ctx, indexName(s.name), after, "", 1024)
		if err != nil {
			if errors.Is(err, rados.ErrNotFound) {
				return fmt.Errorf("kv: store %s: %w", s.name, ErrNotFound)
			}
			return fmt.Errorf("kv: store %s: read index: %w", s.name, err)
		}
		for _, p := range kvs {
			high, err := clskv.HighOf(p.Key)
			if err != nil {
				return fmt.Errorf("kv: object %s: %w: %v", indexName(s.name), ErrCorrupt, err)
			}
			x, err := clskv.DecodeEntry(p.Value)
			if err != nil {
				return fmt.Errorf("kv: object %s: entry %q: %w: %v", indexName(s.name), high, ErrCorrupt, err)
			}
			entries = append(entries, clskv.IndexEntry{High: high, Leaf: x.Leaf})
			after = p.Key
		}
		if !more || len(kvs) == 0 {
			break
		}
	}
	ix, err := plan.NewIndex(entries)
	if err != nil {
		return fmt.Errorf("kv: object %s: %w: %v", indexName(s.name), ErrCorrupt, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch == epoch {
		s.index = ix
	}
	s.epoch++
	return nil
}

// swapped updates the cache after this client's own swap replaced the
// index entries old by new: the swap is applied to the cache, as a
// notify's notice is, if the cache holds exactly the entries it replaced
// (no index read on the operation's path); else the index is re-read.
func (s *Store) swapped(ctx context.Context, old, new []clskv.IndexEntry) error {
	s.mu.Lock()
	next, ok := s.index.Apply(old, new)
	if ok {
		s.index = next
		s.epoch++
	}
	s.mu.Unlock()
	if ok {
		return nil
	}
	return s.refresh(ctx)
}

func (s *Store) lookup(key string) plan.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index.Lookup(key)
}

// errno returns the errno of a failed class call, 0 for other errors.
func errno(err error) int32 {
	var oe *rados.OpError
	if errors.As(err, &oe) {
		return int32(oe.Errno)
	}
	return 0
}

func checkKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("kv: key of %d bytes (want 1 to %d): %w", len(key), MaxKeyLen, ErrInvalid)
	}
	return nil
}

// retry runs attempt against the key's leaf until it succeeds or fails
// for good: a leaf that no longer covers the key (EXDEV) or no longer
// exists (ENOENT) refreshes the index; a frozen leaf (EBUSY) waits for
// the operation to finish, then retries; a full one (EFBIG) is split;
// one a remove would leave under k entries (ERANGE) is merged or
// rebalanced with a neighbour.
//
// A wait for a busy leaf ends when a notify on the index says an
// operation finished (wake.go; the cache is then up to date and the
// attempt is made at once), or after the backoff, the fallback for an
// operation whose client died (the index is then re-read). Waits do not
// count against Config.Retries until the leaf has been busy for twice
// Config.MarkTimeout; from MarkTimeout on, each wait ends with a cleanup
// of the leaf (an abandoned operation is taken over).
func (s *Store) retry(ctx context.Context, key string, attempt func(leaf plan.Entry) error) error {
	wait := s.cfg.Backoff
	var last error
	var busySince time.Time
	n := 0
	// busy waits for the leaves, changed being the channel a notify
	// closes taken before the attempt (watching: the index was watched
	// then), cleans up once they have been busy long enough, and says
	// whether a notify woke it.
	busy := func(changed <-chan struct{}, watching bool, leaves ...plan.Entry) (bool, error) {
		if busySince.IsZero() {
			busySince = time.Now()
		}
		if !watching && s.ensureWatch(ctx) {
			// Watching from now on: a notify sent before the watch
			// was registered is missed, so look at the index once.
			named, err := s.named(ctx, leaves)
			if err != nil {
				return false, err
			}
			if !named {
				return false, nil
			}
		}
		if s.onWait != nil {
			s.onWait()
		}
		woken := false
		began := time.Now()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-changed:
			t.Stop()
			woken = true
			s.waits.woken.Add(1)
		case <-t.C:
			wait = min(2*wait, 64*s.cfg.Backoff)
			s.waits.backedOff.Add(1)
		}
		s.waits.waited.Add(int64(time.Since(began)))
		if time.Since(busySince) >= s.cfg.MarkTimeout {
			woken = false
			for _, l := range leaves {
				if err := s.cleanup(ctx, l); err != nil {
					return false, err
				}
			}
		}
		if time.Since(busySince) < 2*s.cfg.MarkTimeout {
			n-- // not an attempt
		}
		return woken, nil
	}
	for ; n < s.cfg.Retries; n++ {
		changed, watching := s.changes()
		leaf := s.lookup(key)
		err := attempt(leaf)
		last = err
		switch errno(err) {
		case 0:
			return err
		case clskv.ErrnoNotMine, 2: // ENOENT: removed by a split
		case clskv.ErrnoBusy:
			woken, err := busy(changed, watching, leaf)
			if err != nil {
				return err
			}
			if woken {
				continue
			}
		case clskv.ErrnoFull:
			switch err := s.split(ctx, leaf); {
			case err == nil:
				continue
			case errno(err) == clskv.ErrnoBusy || errors.Is(err, ErrBusy):
				woken, err := busy(changed, watching, leaf)
				if err != nil {
					return err
				}
				if woken {
					continue
				}
			case errors.Is(err, errStale), errno(err) == clskv.ErrnoNotMine, errno(err) == 2, errno(err) == clskv.ErrnoNoMark:
			default:
				return err
			}
		case clskv.ErrnoTooSmall:
			switch err := s.join(ctx, leaf, key); {
			case err == nil:
				continue
			case errno(err) == clskv.ErrnoBusy || errors.Is(err, ErrBusy):
				s.mu.Lock()
				l, r, _ := s.index.Neighbours(leaf)
				s.mu.Unlock()
				woken, err := busy(changed, watching, l, r)
				if err != nil {
					return err
				}
				if woken {
					continue
				}
			case errors.Is(err, errStale), errno(err) == clskv.ErrnoNotMine, errno(err) == 2, errno(err) == clskv.ErrnoNoMark:
			default:
				return err
			}
		case 5: // EIO
			return fmt.Errorf("kv: leaf %s: %w: %v", leaf.Leaf, ErrCorrupt, err)
		default:
			return err
		}
		if err := s.refresh(ctx); err != nil {
			return err
		}
	}
	return fmt.Errorf("kv: %q: gave up after %d attempts: %w (last: %v)", key, s.cfg.Retries, ErrBusy, last)
}

// Get returns key's value, or ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var val []byte
	found := false
	err := s.retry(ctx, key, func(leaf plan.Entry) error {
		r := rados.NewReadOp()
		st := r.Exec(clskv.Class, "read", clskv.ReadRequest{Keys: []string{key}}.Encode())
		if err := s.io.OperateRead(ctx, leaf.Leaf, r); err != nil {
			return err
		}
		reply, err := clskv.DecodeReadReply(st.Output)
		if err != nil {
			return fmt.Errorf("kv: leaf %s: %w: %v", leaf.Leaf, ErrCorrupt, err)
		}
		for _, p := range reply.Pairs {
			if p.Key == key {
				val, found = p.Value, true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("kv: %q: %w", key, ErrNotFound)
	}
	return val, nil
}

// Put sets key to value.
func (s *Store) Put(ctx context.Context, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if len(value) > MaxValueLen {
		return fmt.Errorf("kv: value of %d bytes (at most %d): %w", len(value), MaxValueLen, ErrInvalid)
	}
	return s.write(ctx, key, clskv.WriteRequest{Puts: []clskv.Pair{{Key: key, Value: value}}})
}

// Remove removes key; removing a missing key is not an error.
func (s *Store) Remove(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.write(ctx, key, clskv.WriteRequest{Removes: []string{key}})
}

func (s *Store) write(ctx context.Context, key string, req clskv.WriteRequest) error {
	in := req.Encode()
	return s.retry(ctx, key, func(leaf plan.Entry) error {
		_, err := s.io.Exec(ctx, leaf.Leaf, clskv.Class, "write", in)
		return err
	})
}

// A Cond is a condition on a key's value when a batch applies: the key
// is absent, or holds exactly Value.
type Cond struct {
	Key    string
	Absent bool
	Value  []byte
}

// A Batch is puts and removes applied atomically — all or none — if
// every condition holds. Its keys must lie in one leaf (keys with a
// common prefix usually do; ErrSpansLeaves otherwise): the leaf's class
// method checks the conditions and applies the writes in one operation.
type Batch struct {
	Conds   []Cond
	Puts    []Pair
	Removes []string // applied after the puts
}

// Apply applies b: ErrConflict if a condition does not hold (nothing is
// written), ErrSpansLeaves if its keys are in several leaves.
func (s *Store) Apply(ctx context.Context, b Batch) error {
	req := clskv.WriteRequest{Removes: b.Removes}
	var keys []string
	for _, p := range b.Puts {
		if len(p.Value) > MaxValueLen {
			return fmt.Errorf("kv: value of %d bytes (at most %d): %w", len(p.Value), MaxValueLen, ErrInvalid)
		}
		req.Puts = append(req.Puts, clskv.Pair{Key: p.Key, Value: p.Value})
		keys = append(keys, p.Key)
	}
	keys = append(keys, b.Removes...)
	for _, c := range b.Conds {
		req.Conds = append(req.Conds, clskv.Cond{Key: c.Key, Absent: c.Absent, Value: c.Value})
		keys = append(keys, c.Key)
	}
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > clskv.MaxBatch {
		return fmt.Errorf("kv: a batch of %d keys (at most %d): %w", len(keys), clskv.MaxBatch, ErrInvalid)
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return err
		}
	}
	if !s.oneLeaf(keys) {
		// The cache may be stale: ask the index once before refusing.
		if err := s.refresh(ctx); err != nil {
			return err
		}
	}
	in := req.Encode()
	err := s.retry(ctx, keys[0], func(leaf plan.Entry) error {
		for _, k := range keys {
			if !leaf.Bounds.Contains(k) {
				return fmt.Errorf("kv: %q and %q are in different leaves: %w", keys[0], k, ErrSpansLeaves)
			}
		}
		_, err := s.io.Exec(ctx, leaf.Leaf, clskv.Class, "write", in)
		return err
	})
	if errno(err) == clskv.ErrnoMismatch {
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return err
}

// CompareAndSwap sets key to new if it holds old: old nil means the key
// must be absent, new nil removes it (an empty value is []byte{}).
// ErrConflict if key holds something else.
func (s *Store) CompareAndSwap(ctx context.Context, key string, old, new []byte) error {
	b := Batch{Conds: []Cond{{Key: key, Absent: old == nil, Value: old}}}
	if new == nil {
		b.Removes = []string{key}
	} else {
		b.Puts = []Pair{{Key: key, Value: new}}
	}
	return s.Apply(ctx, b)
}

// oneLeaf reports whether the cached index puts keys in one leaf.
func (s *Store) oneLeaf(keys []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.index.Lookup(keys[0])
	for _, k := range keys[1:] {
		if !first.Bounds.Contains(k) {
			return false
		}
	}
	return true
}

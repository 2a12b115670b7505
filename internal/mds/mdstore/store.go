package mdstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
)

// Error classes; test with errors.Is.
var (
	// ErrDamaged: a namespace object's contents do not decode (EIO);
	// the error is a *DamageError naming the object and key.
	ErrDamaged = errors.New("mdstore: metadata damaged (EIO)")
	// ErrStale: the object holds a write newer than this MDS's (a later
	// incarnation of the rank, or a later version): this MDS must stop
	// writing (ESTALE).
	ErrStale = errors.New("mdstore: object holds a newer write (ESTALE)")
	// ErrStaleBacktrace: a backtrace does not lead to its inode (it was
	// renamed or unlinked since the backtrace was written) (ESTALE).
	ErrStaleBacktrace = errors.New("mdstore: backtrace is stale (ESTALE)")
)

// DamageError is a namespace object whose contents do not decode.
type DamageError struct {
	// Object is the RADOS object, Pool its pool.
	Object string
	Pool   int64
	// Key is the omap key ("" for the object's data or header, named by
	// What).
	Key  string
	What string
	Err  error
}

func (e *DamageError) Error() string {
	where := e.What
	if e.Key != "" {
		where = fmt.Sprintf("omap key %q", e.Key)
	}
	return fmt.Sprintf("mdstore: object %q (pool %d): %s: %v (EIO)", e.Object, e.Pool, where, e.Err)
}

// Unwrap gives ErrDamaged and the decoder's error.
func (e *DamageError) Unwrap() []error { return []error{ErrDamaged, e.Err} }

// GuardXattr is the xattr on every object Store writes with a guard (a
// fragment, a base inode, an inode table): the Stamp of its last write.
const GuardXattr = "cuttle.stamp"

// Stamp orders the writes to one object: the incarnation of the rank that
// wrote it (the MDS map epoch at which the MDS took the rank) and the
// object's version. A write is applied only if the stored stamp is not
// above the writer's, compared by the OSD (cmpxattr) in the same atomic
// operation: so once an MDS of a later incarnation has written an object,
// no MDS of an earlier one can overwrite it, and an MDS cannot write an
// older version over a newer one. Equal stamps are allowed, so a write
// resent after a lost reply, or replayed from the journal, succeeds.
type Stamp struct {
	Incarnation uint64
	Version     uint64
}

// bytes encodes the stamp big-endian, so that bytewise order is the
// stamp's order.
func (s Stamp) bytes() []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, s.Incarnation)
	binary.BigEndian.PutUint64(b[8:], s.Version)
	return b
}

func parseStamp(b []byte) (Stamp, error) {
	switch len(b) {
	case 0:
		return Stamp{}, nil
	case 16:
		return Stamp{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}, nil
	}
	return Stamp{}, fmt.Errorf("stamp of %d bytes, want 16", len(b))
}

func (s Stamp) String() string { return fmt.Sprintf("%d.%d", s.Incarnation, s.Version) }

// Config configures a Store.
type Config struct {
	// Conn is the MDS's RADOS connection.
	Conn *rados.Conn
	// MetaPool is the metadata pool's id.
	MetaPool int64
	// Rank is the MDS rank this store writes for (its mdsdir, strays and
	// inode table).
	Rank int
	// Incarnation is the MDS map epoch at which this MDS took the rank;
	// it orders this MDS's writes after those of the rank's earlier
	// holders (Stamp).
	Incarnation uint64
	// ReadBatch is how many dentries one read request of a fragment
	// returns (default 1024; at most 65536, the OSD's limit).
	ReadBatch int
	// Logger receives the store's events (default: discarded).
	Logger *slog.Logger
}

// Store reads and writes a file system's namespace objects.
type Store struct {
	cfg  Config
	meta *rados.IOContext
	log  *slog.Logger

	mu      sync.Mutex
	data    map[int64]*rados.IOContext // data pools by id, opened on first use
	damaged damageTable
}

// New opens the metadata pool and returns the Store.
func New(cfg Config) (*Store, error) {
	if cfg.Conn == nil {
		return nil, errors.New("mdstore: Config.Conn is nil")
	}
	if cfg.Rank < 0 || cfg.Rank >= mdtypes.MaxRank {
		return nil, fmt.Errorf("mdstore: rank %d out of range [0, %d)", cfg.Rank, mdtypes.MaxRank)
	}
	if cfg.ReadBatch <= 0 {
		cfg.ReadBatch = 1024
	}
	cfg.ReadBatch = min(cfg.ReadBatch, maxReadBatch)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	meta, err := openPool(cfg.Conn, cfg.MetaPool)
	if err != nil {
		return nil, fmt.Errorf("mdstore: metadata pool: %w", err)
	}
	return &Store{cfg: cfg, meta: meta, log: cfg.Logger.With("rank", cfg.Rank), data: map[int64]*rados.IOContext{}}, nil
}

func openPool(c *rados.Conn, id int64) (*rados.IOContext, error) {
	name, err := c.PoolName(id)
	if err != nil {
		return nil, err
	}
	return c.OpenIOContext(name)
}

// dataPool returns an IOContext on data pool id.
func (s *Store) dataPool(id int64) (*rados.IOContext, error) {
	if id == s.cfg.MetaPool {
		return s.meta, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if io, ok := s.data[id]; ok {
		return io, nil
	}
	io, err := openPool(s.cfg.Conn, id)
	if err != nil {
		return nil, fmt.Errorf("mdstore: data pool %d: %w", id, err)
	}
	s.data[id] = io
	return io, nil
}

// stamp is this MDS's stamp for version.
func (s *Store) stamp(version uint64) Stamp {
	return Stamp{Incarnation: s.cfg.Incarnation, Version: version}
}

// guard adds to w the comparison that refuses the write if the object's
// stamp is above st, and the setting of st.
func guard(w *rados.WriteOp, st Stamp) {
	b := st.bytes()
	w.CmpXattr(GuardXattr, rados.CmpLte, b)
	w.SetXattr(GuardXattr, b)
}

// staleError explains a refused guarded write, reading the stamp that
// refused it.
func (s *Store) staleError(ctx context.Context, io *rados.IOContext, object string, mine Stamp, err error) error {
	if !errors.Is(err, rados.ErrCompareFailed) {
		return fmt.Errorf("mdstore: write %q: %w", object, err)
	}
	stored := "unknown"
	if b, rerr := io.GetXattr(ctx, object, GuardXattr); rerr == nil {
		if st, perr := parseStamp(b); perr == nil {
			stored = st.String()
		}
	}
	s.log.Warn("write refused: the object holds a newer write", "object", object, "stored", stored, "mine", mine)
	return fmt.Errorf("%w: %q holds stamp %s, this MDS writes %s (incarnation.version); a later MDS has taken the rank or written a newer version", ErrStale, object, stored, mine)
}

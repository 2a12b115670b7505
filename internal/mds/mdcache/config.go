package mdcache

import (
	"log/slog"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// ClientID is the client's cephx global id, as in
// wire.ClientSession.ClientID (= locker.ClientID's value).
type ClientID uint64

// Outbox sends messages to clients' sessions. The daemon implements it;
// calls never block (they queue); a message for a client without a
// session is dropped.
type Outbox interface {
	SendCaps(client ClientID, m *wire.ClientCaps)
	SendLease(client ClientID, m wire.ClientLease)
	// Fence asks for the client to be blocklisted in the OSD map (it
	// held caps it did not give back in time); the daemon sends the
	// monitor command and ends its session.
	Fence(client ClientID, reason string)
}

// Config configures a Cache.
type Config struct {
	// Meta is the file system's metadata pool.
	Meta *rados.IOContext
	// Conn is the MDS's RADOS connection (data pools: layouts,
	// backtraces, purging).
	Conn *rados.Conn
	// DataPool is the file system's default data pool.
	DataPool int64
	// Rank is the MDS rank this engine serves.
	Rank int
	// Incarnation is the MDS map epoch at which this daemon took the
	// rank (stamps of its writes).
	Incarnation uint64
	// Clock tells the time (default: the wall clock).
	Clock clock.Clock
	// Logger receives the engine's events (default: discarded).
	Logger *slog.Logger
	// Outbox sends caps and leases to clients (required).
	Outbox Outbox

	// WriteBackEvery is how often Tick writes back what the journal
	// holds and trims it (default 5 s).
	WriteBackEvery time.Duration
	// WriteBackBytes starts a write-back at the next Tick once the
	// journal holds this many bytes past its expire position (default
	// 16 MiB).
	WriteBackBytes uint64
	// InoBatch is how many inode numbers the engine takes from the
	// inode table at once for its creates (default 1024). Numbers taken
	// and unused when the MDS dies stay allocated (at most one batch a
	// failover).
	InoBatch uint64
	// CompletedPerClient bounds the completed requests remembered per
	// client beyond its OldestTid (default 4096).
	CompletedPerClient int
	// RevokeTimeout: a client that has not acked a cap revocation after
	// this long is fenced (default 60 s).
	RevokeTimeout time.Duration
	// JournalObjectSize is the object size of a new journal (default
	// 4 MiB).
	JournalObjectSize uint32
	// CacheInodes bounds the inodes the cache holds (default 100,000;
	// mds_cache_size): past it, clean fragments are evicted least
	// recently used first (evict.go). Dirty and pinned state stays, so
	// the bound is soft.
	CacheInodes int
	// DentryLease is how long a lookup's reply lets the client cache the
	// name (and a directory's attributes) without asking again (lease.go;
	// default 5 s; negative: no leases). A change revokes other clients'
	// leases first, waiting at most this long for a client that does not
	// answer.
	DentryLease time.Duration
	// Events are callbacks for what the engine does in the background
	// (for metrics and tests); nil fields are not called.
	Events Events
}

// Events are the engine's background events. Callbacks run on the
// engine's goroutines without its lock held, and must not block.
type Events struct {
	// Purged: an unlinked file's data and stray dentry are gone (err
	// nil), or removing its data failed (it stays a stray).
	Purged func(ino uint64, err error)
	// Truncated: a shrunk file's data past its new size is cut and
	// that is journaled (err nil), or cutting it failed (it is retried
	// by the rank's next holder).
	Truncated func(ino uint64, err error)
}

func (c Config) withDefaults() Config {
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.WriteBackEvery <= 0 {
		c.WriteBackEvery = 5 * time.Second
	}
	if c.WriteBackBytes == 0 {
		c.WriteBackBytes = 16 << 20
	}
	if c.InoBatch == 0 {
		c.InoBatch = 1024
	}
	if c.CompletedPerClient <= 0 {
		c.CompletedPerClient = 4096
	}
	if c.RevokeTimeout <= 0 {
		c.RevokeTimeout = 60 * time.Second
	}
	if c.CacheInodes <= 0 {
		c.CacheInodes = 100_000
	}
	if c.DentryLease == 0 {
		c.DentryLease = 5 * time.Second
	}
	if c.JournalObjectSize == 0 {
		c.JournalObjectSize = 4 << 20
	}
	return c
}

// Stats are the engine's counters for `cuttle fs status` and metrics.
type Stats struct {
	Inodes, Dentries, Frags int
	DirtyFrags              int
	// JournalBytes is the journal's length past its expire position.
	JournalBytes uint64
	Requests     uint64 // requests handled
	Replies      uint64 // safe replies sent
	Caps         int    // caps held by clients
	Strays       int    // unlinked inodes waiting to be purged
	Evicted      uint64 // clean fragments evicted from the cache
	Leases       int    // dentry and directory leases held by clients
	LeaseRevokes uint64 // leases revoked from clients for other clients' changes
	// Damaged counts the damaged metadata objects found (Damage).
	Damaged int
}

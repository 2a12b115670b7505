package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// ClientID is a client's cephx global id, as wire.ClientSession.ClientID
// carries it (the engine's mdcache.ClientID, locker.ClientID's value).
type ClientID uint64

// Outbox is how the engine reaches clients: the Server implements it.
// Calls never block (they queue); a message for a client without a
// session is dropped.
type Outbox interface {
	SendCaps(client ClientID, m *wire.ClientCaps)
	SendLease(client ClientID, m wire.ClientLease)
	// Fence asks for client to be blocklisted in the OSD map (it held
	// caps it did not give back in time); the server sends the monitor
	// command and ends its session.
	Fence(client ClientID, reason string)
}

// Engine is the MDS engine's side of the seam (docs/MDS.md, "The
// engine"; internal/mds/mdcache's *Cache): the methods the server calls,
// as the contract between the two names them. The server knows nothing
// else of it.
type Engine interface {
	// Reconnect takes a client's report in state reconnect; Resume ends
	// the reconnect phase.
	Reconnect(client ClientID, m *wire.ClientReconnect) error
	Resume()
	// Handle runs one metadata request and calls reply once (safe) or
	// twice (unsafe, then safe); it may be called from many goroutines.
	Handle(ctx context.Context, client ClientID, req *wire.ClientRequest, reply func(*wire.ClientReply))
	// HandleCaps takes a client's cap message.
	HandleCaps(ctx context.Context, client ClientID, m *wire.ClientCaps)
	// SessionOpened and SessionEnded follow the server's sessions.
	SessionOpened(client ClientID)
	SessionEnded(client ClientID, reason locker.EndReason)
	// Fenced says that the blocklist entry Outbox.Fence asked for is in
	// the OSD map the daemon has: the client's caps stop blocking
	// others.
	Fenced(client ClientID)
	// Tick is called about once a second.
	Tick(now time.Time)
	// Health reports what the monitors' health checks show of the
	// engine at now (the daemon sends it in its beacons).
	Health(now time.Time) EngineHealth
	// Close stops serving, flushes the journal and writes back what is
	// dirty.
	Close(ctx context.Context) error
}

// LeaseEngine is an Engine that grants dentry leases: the server hands
// it the clients' lease acks and releases.
type LeaseEngine interface {
	HandleLease(ctx context.Context, client ClientID, m wire.ClientLease)
}

// OpenConfig is what the server hands the engine when it takes a rank
// (the contract's mdcache.Config, less the tuning the daemon fills).
type OpenConfig struct {
	Meta        *rados.IOContext // the file system's metadata pool
	Conn        *rados.Conn      // for data pools
	DataPool    int64            // the file system's default data pool
	Rank        int
	Incarnation uint64 // the MDS map epoch at which this daemon took the rank
	Clock       clock.Clock
	Logger      *slog.Logger
	Outbox      Outbox
	// CacheInodes bounds the inodes the engine caches (mds_cache_size;
	// 0: the engine's default).
	CacheInodes int
}

// Opener opens the engine for a rank: it replays the rank's journal and
// returns when the rank can serve (the contract's mdcache.Open). The
// daemon passes the real engine's.
type Opener func(ctx context.Context, cfg OpenConfig) (Engine, error)

// EngineStats are the engine's counters the daemon exports as metrics.
type EngineStats struct {
	Inodes, Dentries, DirtyFrags int
	JournalBytes                 uint64 // the journal past its expire position
	Caps, Strays                 int
	// Damaged counts the damaged metadata objects the rank found
	// (requests touching them get EIO): health's "metadata damage
	// detected".
	Damaged int
}

// StatsEngine is an Engine that reports its counters (the real one does).
type StatsEngine interface {
	Engine
	Stats() EngineStats
}

// EngineHealth is the engine's part of the rank's health report
// (wire.MDSHealth): the clients slow to give back caps.
type EngineHealth struct {
	// LateReleases are the clients whose oldest unacknowledged cap
	// revocation is older than half the revoke timeout, oldest first
	// (locker.LateReleases).
	LateReleases []LateRelease
	// Damaged counts the damaged metadata objects the engine has found.
	Damaged int
}

// LateRelease is one client slow to give back a capability: its oldest
// unacknowledged revocation, on Ino, was sent at Since.
type LateRelease struct {
	Client ClientID
	Ino    uint64
	Since  time.Time
}

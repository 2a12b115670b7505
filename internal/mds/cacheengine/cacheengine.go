// Package cacheengine is the seam between the MDS daemon's server
// (internal/mds/server) and the real engine (internal/mds/mdcache): Open
// opens a rank's *mdcache.Cache as a server.Engine, and the server's
// Outbox is handed to the engine as its own, with the client ids
// converted (docs/MDS.md). It holds no state and no logic.
//
// It is a package of its own, imported by the CLI's `mds run`, so that
// internal/daemon (which the simulator imports, and the engine's tests
// import the simulator) does not import the engine.
package cacheengine

import (
	"context"
	"errors"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/journal"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdcache"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/mds/server"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Opener opens the real MDS engine for the server.
func Opener() server.Opener {
	return func(ctx context.Context, oc server.OpenConfig) (server.Engine, error) {
		c, err := mdcache.Open(ctx, mdcache.Config{Meta: oc.Meta, Conn: oc.Conn, DataPool: oc.DataPool, Rank: oc.Rank,
			Incarnation: oc.Incarnation, Clock: oc.Clock, Logger: oc.Logger, Outbox: outbox{oc.Outbox},
			CacheInodes: oc.CacheInodes})
		if err != nil {
			return nil, err
		}
		return cacheEngine{c}, nil
	}
}

// outbox is the server's Outbox as the engine's.
type outbox struct{ o server.Outbox }

func (o outbox) SendCaps(c mdcache.ClientID, m *wire.ClientCaps) { o.o.SendCaps(server.ClientID(c), m) }
func (o outbox) SendLease(c mdcache.ClientID, m wire.ClientLease) {
	o.o.SendLease(server.ClientID(c), m)
}
func (o outbox) Fence(c mdcache.ClientID, reason string) { o.o.Fence(server.ClientID(c), reason) }

// cacheEngine is the engine as the server's Engine.
type cacheEngine struct{ c *mdcache.Cache }

func (e cacheEngine) Reconnect(c server.ClientID, m *wire.ClientReconnect) error {
	return e.c.Reconnect(mdcache.ClientID(c), m)
}
func (e cacheEngine) Resume() { e.c.Resume() }
func (e cacheEngine) Handle(ctx context.Context, c server.ClientID, req *wire.ClientRequest, reply func(*wire.ClientReply)) {
	e.c.Handle(ctx, mdcache.ClientID(c), req, reply)
}
func (e cacheEngine) HandleCaps(ctx context.Context, c server.ClientID, m *wire.ClientCaps) {
	e.c.HandleCaps(ctx, mdcache.ClientID(c), m)
}
func (e cacheEngine) HandleLease(ctx context.Context, c server.ClientID, m wire.ClientLease) {
	e.c.HandleLease(ctx, mdcache.ClientID(c), m)
}
func (e cacheEngine) SessionOpened(c server.ClientID) { e.c.SessionOpened(mdcache.ClientID(c)) }
func (e cacheEngine) SessionEnded(c server.ClientID, r locker.EndReason) {
	e.c.SessionEnded(mdcache.ClientID(c), r)
}
func (e cacheEngine) Fenced(c server.ClientID)        { e.c.Fenced(mdcache.ClientID(c)) }
func (e cacheEngine) Tick(now time.Time)              { e.c.Tick(now) }
func (e cacheEngine) Close(ctx context.Context) error { return e.c.Close(ctx) }

func (e cacheEngine) Health(now time.Time) server.EngineHealth {
	var h server.EngineHealth
	for _, l := range e.c.LateReleases(now) {
		h.LateReleases = append(h.LateReleases, server.LateRelease{Client: server.ClientID(l.Client), Ino: uint64(l.Ino), Since: l.Since})
	}
	_, h.Damaged = e.c.Damage()
	return h
}

// Stats implements server.StatsEngine.
func (e cacheEngine) Stats() server.EngineStats {
	st := e.c.Stats()
	return server.EngineStats{Inodes: st.Inodes, Dentries: st.Dentries, DirtyFrags: st.DirtyFrags, JournalBytes: st.JournalBytes,
		Caps: st.Caps, Strays: st.Strays, Damaged: st.Damaged}
}

// Follower follows a rank's journal for a standby-replay daemon
// (journal.Follower, polled every interval) until ctx ends. It waits
// while the journal is not written yet, and starts again from the new
// expire position when the active rank trimmed past the follower (the
// entries it missed are written back to the directory objects, which a
// takeover reads anyway).
func Follower() server.Follower {
	return func(ctx context.Context, cfg server.FollowConfig) {
		log := cfg.Logger
		var entries, restarts int
		for ctx.Err() == nil {
			f, err := journal.NewFollower(ctx, cfg.Meta, uint64(mdtypes.JournalIno(cfg.Rank)))
			if err == nil {
				if restarts == 0 {
					log.Info("standby-replay: following the rank's journal", "from", f.Pos())
				}
				err = f.Follow(ctx, cfg.Clock, cfg.Interval, func(journal.Entry) error { entries++; return nil })
				switch {
				case ctx.Err() != nil:
					log.Info("standby-replay: stopped following", "entries", entries, "restarts", restarts, "pos", f.Pos())
					return
				case errors.Is(err, journal.ErrTrimmedPast):
					restarts++
					log.Debug("standby-replay: the journal was trimmed past the follower; following from its expire position", "err", err)
					continue
				}
				log.Warn("standby-replay: following failed; trying again", "entries", entries, "err", err)
			} else {
				// The rank's journal may not be written yet (a new rank).
				log.Debug("standby-replay: cannot follow the journal yet", "err", err)
			}
			t := cfg.Clock.NewTimer(cfg.Interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		}
	}
}

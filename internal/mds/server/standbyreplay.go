package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
	"github.com/cuttlestore/cuttle/rados"
)

// FollowConfig is what a standby-replay daemon follows: rank's journal
// in the metadata pool Meta, polled every Interval.
type FollowConfig struct {
	Meta     *rados.IOContext
	Rank     int
	Interval time.Duration
	Clock    clock.Clock
	Logger   *slog.Logger
}

// Follower follows a rank's journal until ctx ends (the daemon is given
// the rank, or sent back to standby). The daemon passes the real one
// (cacheengine.Follower: the journal's Follower); without one, a
// standby-replay daemon waits as a standby does.
type Follower func(ctx context.Context, cfg FollowConfig)

// followJournal is a standby-replay daemon's work: it follows the
// journal of the rank it stands behind until ctx ends. The engine's API
// opens a rank by replaying its journal from the expire position
// (mdcache.Open) and takes no entries from outside, so what following
// buys today is that the metadata pool's connections and the journal's
// objects are warm in the OSDs when the takeover replays them, and that
// a journal the follower cannot read is noticed (logged) before a
// failover depends on it. When the engine grows a method to apply
// followed entries, Open will start from the follower's position
// instead.
func (s *Server) followJournal(ctx context.Context, m *mdsmap.Map, rep wire.MDSBeaconReply) {
	if s.cfg.Follow == nil || m == nil || m.FS[rep.FS] == nil {
		return
	}
	log := s.log.With("follows", rep.Rank)
	meta, err := s.cfg.cluster.Meta(m.FS[rep.FS].MetadataPool)
	if err != nil {
		log.Warn("standby-replay: no metadata pool", "err", err)
		return
	}
	s.cfg.Follow(ctx, FollowConfig{Meta: meta, Rank: int(rep.Rank), Interval: s.cfg.FollowInterval, Clock: s.cfg.Clock, Logger: log})
}

package server

import (
	"context"
	"errors"

	"github.com/cuttlestore/cuttle/internal/mds/journal"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// followJournal is a standby-replay daemon's work: it follows the
// journal of the rank it stands behind (journal.Follower), polling every
// FollowInterval, until ctx ends (it is given the rank, or sent back to
// standby). The engine's API opens a rank by replaying its journal from
// the expire position (mdcache.Open) and takes no entries from outside,
// so what following buys today is that the metadata pool's connections
// and the journal's objects are warm in the OSDs when the takeover
// replays them, and that a journal the follower cannot read is noticed
// (logged) before a failover depends on it. When the engine grows a
// method to apply followed entries, Open will start from the follower's
// position instead.
func (s *Server) followJournal(ctx context.Context, m *mdsmap.Map, rep wire.MDSBeaconReply) {
	if m == nil || m.FS[rep.FS] == nil {
		return
	}
	log := s.log.With("follows", rep.Rank)
	meta, err := s.cfg.cluster.Meta(m.FS[rep.FS].MetadataPool)
	if err != nil {
		log.Warn("standby-replay: no metadata pool", "err", err)
		return
	}
	f, err := journal.NewFollower(ctx, meta, uint64(mdtypes.JournalIno(int(rep.Rank))))
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("standby-replay: cannot follow the journal yet", "err", err)
		}
		return
	}
	log.Info("standby-replay: following the rank's journal", "from", f.Pos())
	var entries int
	err = f.Follow(ctx, s.cfg.Clock, s.cfg.FollowInterval, func(journal.Entry) error { entries++; return nil })
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		log.Info("standby-replay: stopped following", "entries", entries, "pos", f.Pos())
		return
	}
	log.Warn("standby-replay: following stopped", "entries", entries, "err", err)
}

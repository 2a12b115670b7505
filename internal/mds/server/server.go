package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
	"github.com/cuttlestore/cuttle/rados"
)

// MapSource is the daemon's view of the MDS map through its beacons:
// *beacon.Sender implements it.
type MapSource interface {
	// Next waits for a beacon reply numbered above seq.
	Next(ctx context.Context, seq uint64) (wire.MDSBeaconReply, error)
	// Map is the newest MDS map a reply carried.
	Map() *mdsmap.Map
	// SetState records the state the daemon reached; the next beacon,
	// sent at once, reports it.
	SetState(st mdsmap.State)
}

// Defaults of Config.
const (
	DefaultReconnectTimeout = 15 * time.Second
	DefaultTickInterval     = time.Second
	DefaultFollowInterval   = time.Second
	// ClientFenceExpire is how long an evicted client stays
	// blocklisted (Ceph's mds_session_blocklist_on_evict lasts an hour).
	ClientFenceExpire = time.Hour
	// RankFenceExpire is how long a replaced rank holder stays
	// blocklisted: a day, as the monitors fence it.
	RankFenceExpire = 24 * time.Hour
	// maxPending bounds the requests and session opens held while the
	// rank is not active yet.
	maxPending = 4096
)

// Config configures a Server.
type Config struct {
	// Name is the daemon's name ("a"). Required.
	Name string
	// Conn is the daemon's cluster connection (its monitor session,
	// the OSD map, the pools). Required unless the test hooks are set.
	Conn *rados.Conn
	// Map follows the daemon's state in the MDS map. Required.
	Map MapSource
	// Open opens the engine for a rank. Required.
	Open Opener
	// Follow follows a rank's journal while the daemon is its
	// standby-replay follower (optional).
	Follow Follower
	// ReconnectTimeout bounds the reconnect phase (mds_reconnect_timeout).
	ReconnectTimeout time.Duration
	// OpComplaintTime is the age past which a request in flight is slow
	// (mds_op_complaint_time, default 30 s).
	OpComplaintTime time.Duration
	// TickInterval is how often sessions are checked and the engine
	// ticked; FollowInterval how often a standby-replay daemon polls the
	// journal it follows.
	TickInterval, FollowInterval time.Duration
	// Clock defaults to the real clock; Logger discards by default.
	Clock  clock.Clock
	Logger *slog.Logger

	// cluster and sessions replace the rados-backed ones (tests);
	// changed, if set, is called after every change of phase (tests
	// wait on it).
	cluster  cluster
	sessions func(meta *rados.IOContext) sessionStore
	changed  func()
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Name == "" || cfg.Map == nil || cfg.Open == nil || (cfg.Conn == nil && cfg.cluster == nil) {
		return cfg, errors.New("mds: server: Name, Conn, Map and Open are required")
	}
	if cfg.ReconnectTimeout <= 0 {
		cfg.ReconnectTimeout = DefaultReconnectTimeout
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = DefaultTickInterval
	}
	if cfg.OpComplaintTime <= 0 {
		cfg.OpComplaintTime = DefaultOpComplaintTime
	}
	if cfg.FollowInterval <= 0 {
		cfg.FollowInterval = DefaultFollowInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.cluster == nil {
		cfg.cluster = radosCluster{cfg.Conn}
	}
	if cfg.sessions == nil {
		cfg.sessions = func(meta *rados.IOContext) sessionStore { return radosSessions{meta} }
	}
	return cfg, nil
}

// phase is where the server is in serving its rank.
type phase uint8

const (
	phaseStandby   phase = iota // no rank (standby or standby-replay)
	phaseReplay                 // fencing the previous holder, replaying
	phaseReconnect              // collecting the clients' reports
	phaseActive                 // serving
	phaseStopping               // shutting down: nothing more is served
)

// Server is an MDS daemon's server: it follows the daemon's state in the
// MDS map, takes a rank when given one (fence, replay, reconnect,
// active), keeps the clients' sessions and routes their messages to the
// engine. It is the msgr.Dispatcher of the daemon's messenger. Create it
// with New, run it with Run.
type Server struct {
	cfg     Config
	log     *slog.Logger
	holders *holders
	metrics counters

	// runCtx is Run's context: requests handed to the engine run under
	// it.
	runCtx context.Context

	mu       sync.Mutex
	phase    phase
	fs       mdsmap.FSID
	rank     mdsmap.Rank
	engine   Engine
	store    sessionStore
	sessions *Sessions
	conns    map[ClientID]*msgr.Session
	byConn   map[*msgr.Session]ClientID
	fenced   map[ClientID]bool
	// instances: each client's RADOS instance (what fences it), from
	// its session open or the session map.
	instances map[ClientID]string
	pools     []int64 // the file system's metadata and data pools
	recon     *reconnectWait
	reconCh   chan struct{} // signalled when a client completes its report
	pending   []func()      // held until active
	inflight  sync.WaitGroup
	// ops are the requests handed to the engine and not answered safe
	// (Health).
	ops *opTracker
}

// New returns a Server; nothing runs until Run.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, log: cfg.Logger.With("mds", cfg.Name), holders: newHolders(), rank: mdsmap.NoRank,
		sessions: NewSessions(mdsmap.DefaultSessionTimeout, mdsmap.DefaultSessionAutoclose),
		conns:    map[ClientID]*msgr.Session{}, byConn: map[*msgr.Session]ClientID{}, fenced: map[ClientID]bool{},
		instances: map[ClientID]string{}, reconCh: make(chan struct{}, 1), runCtx: context.Background(), ops: newOpTracker()}, nil
}

// Status is what the server reports of itself (metrics, admin queries,
// tests).
type Status struct {
	Phase    string
	FS       mdsmap.FSID
	Rank     mdsmap.Rank
	Sessions []Session
	Pending  int
	Counters Counters
}

// Engine returns the engine of the rank the server holds (nil while it
// holds none), for the daemon's metrics.
func (s *Server) Engine() Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.engine
}

// Status returns the server's state.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{Phase: s.phase.String(), FS: s.fs, Rank: s.rank, Sessions: s.sessions.List(), Pending: len(s.pending),
		Counters: s.metrics.snapshot()}
}

func (p phase) String() string {
	return [...]string{"standby", "replay", "reconnect", "active", "stopping"}[p]
}

// Run follows the daemon's state until ctx ends, then stops: it serves
// nothing more and closes the engine (which flushes the journal and
// writes back what is dirty). It returns ctx's end as nil, or the error
// that made the rank unusable (the engine failed to open).
func (s *Server) Run(ctx context.Context) error {
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	tctx, stopTicks := context.WithCancel(ctx)
	defer stopTicks()
	go s.tickLoop(tctx)
	err := s.follow(ctx)
	s.shutdown()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// follow acts on every beacon reply: a standby waits, a standby-replay
// daemon follows its rank's journal, a daemon given a rank takes it
// over; a rank holder keeps serving.
func (s *Server) follow(ctx context.Context) error {
	var seq uint64
	var stopFollow context.CancelFunc
	defer func() {
		if stopFollow != nil {
			stopFollow()
		}
	}()
	for {
		rep, err := s.cfg.Map.Next(ctx, seq)
		if err != nil {
			return err
		}
		seq = rep.Seq
		m := s.cfg.Map.Map()
		s.holders.Observe(m, rep.GID)
		if m != nil && rep.State.HoldsRank() {
			if f := m.FS[rep.FS]; f != nil {
				s.mu.Lock()
				s.sessions.SetTimeouts(f.SessionTimeout, f.SessionAutoclose)
				s.mu.Unlock()
			}
		}
		switch {
		case rep.State == mdsmap.StateStandbyReplay:
			if stopFollow == nil {
				fctx, cancel := context.WithCancel(ctx)
				stopFollow = cancel
				go s.followJournal(fctx, m, rep)
			}
		case rep.State == mdsmap.StateReplay || rep.State == mdsmap.StateCreating:
			if stopFollow != nil {
				stopFollow()
				stopFollow = nil
			}
			if s.currentPhase() != phaseStandby {
				continue // already taking it over
			}
			if err := s.takeover(ctx, rep, m); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			seq = 0 // the takeover consumed replies; look at the newest
		case rep.State == mdsmap.StateStandby:
			if stopFollow != nil {
				stopFollow()
				stopFollow = nil
			}
		}
	}
}

// setPhase moves the server to p.
func (s *Server) setPhase(p phase) {
	s.mu.Lock()
	s.phase = p
	s.mu.Unlock()
	s.notify()
}

// notify tells a test that something changed.
func (s *Server) notify() {
	if s.cfg.changed != nil {
		s.cfg.changed()
	}
}

func (s *Server) currentPhase() phase {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase
}

// takeover takes the rank rep gives: fence the previous holder (wait for
// the OSD map that blocklists it), open the engine (replay), collect the
// clients' reconnects, resume, become active.
func (s *Server) takeover(ctx context.Context, rep wire.MDSBeaconReply, m *mdsmap.Map) error {
	if m == nil || m.FS[rep.FS] == nil {
		return fmt.Errorf("mds.%s: given rank %d:%d without a map that has its file system", s.cfg.Name, rep.FS, rep.Rank)
	}
	f := m.FS[rep.FS]
	log := s.log.With("fs", f.Name, "rank", rep.Rank)
	start := s.cfg.Clock.Now()
	s.mu.Lock()
	s.fs, s.rank = rep.FS, rep.Rank
	s.mu.Unlock()
	s.setPhase(phaseReplay)
	log.Info("taking the rank", "state", rep.State, "epoch", rep.Epoch)

	if prev, ok := s.holders.Previous(rep.FS, rep.Rank); ok {
		addr := FenceAddr(prev)
		log.Info("fencing the rank's previous holder before replay", "holder", "mds."+prev.Name, "gid", prev.GID, "addr", addr)
		if err := s.cfg.cluster.Fence(ctx, addr, RankFenceExpire); err != nil {
			return fmt.Errorf("mds.%s: %w", s.cfg.Name, err)
		}
		log.Info("previous holder fenced", "took", s.cfg.Clock.Since(start))
	}
	meta, err := s.cfg.cluster.Meta(f.MetadataPool)
	if err != nil {
		return err
	}
	store := s.cfg.sessions(meta)
	var records []sessionRecord
	if rep.State == mdsmap.StateReplay {
		// A new rank (creating) had no clients.
		if records, err = store.Load(ctx, int(rep.Rank)); err != nil {
			return err
		}
	}
	var dataPool int64 = -1
	if len(f.DataPools) > 0 {
		dataPool = f.DataPools[0]
	}
	s.mu.Lock()
	s.pools = append([]int64{f.MetadataPool}, f.DataPools...)
	s.mu.Unlock()
	eng, err := s.cfg.Open(ctx, OpenConfig{Meta: meta, Conn: s.cfg.Conn, DataPool: dataPool, Rank: int(rep.Rank),
		Incarnation: uint64(rep.Epoch), Clock: s.cfg.Clock, Logger: s.cfg.Logger.With("rank", rep.Rank), Outbox: s})
	if err != nil {
		return fmt.Errorf("mds.%s: open rank %d: %w", s.cfg.Name, rep.Rank, err)
	}
	log.Info("replay done", "took", s.cfg.Clock.Since(start), "clients", len(records))
	s.mu.Lock()
	s.engine, s.store = eng, store
	s.mu.Unlock()

	if rep.State == mdsmap.StateReplay {
		clients := make([]ClientID, len(records))
		s.mu.Lock()
		for i, r := range records {
			clients[i] = r.Client
			if r.Instance != "" {
				s.instances[r.Client] = r.Instance
			}
		}
		s.mu.Unlock()
		// Reports are taken from here on; the timeout runs from when the
		// map tells the clients.
		s.mu.Lock()
		s.recon = newReconnectWait(clients, s.cfg.Clock.Now(), s.cfg.ReconnectTimeout)
		s.mu.Unlock()
		s.setPhase(phaseReconnect)
		if err := s.reach(ctx, mdsmap.StateReconnect); err != nil {
			return err
		}
		s.reconnect(ctx, log, len(clients))
		eng.Resume()
		if err := s.reach(ctx, mdsmap.StateRejoin); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.phase = phaseActive
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	s.notify()
	for _, p := range pending {
		p()
	}
	if err := s.reach(ctx, mdsmap.StateActive); err != nil {
		return err
	}
	log.Info("active", "took", s.cfg.Clock.Since(start), "held", len(pending))
	return nil
}

// reach reports st and waits until the map has taken it (the monitors
// take a rank's states only in order, one beacon each).
func (s *Server) reach(ctx context.Context, st mdsmap.State) error {
	s.cfg.Map.SetState(st)
	var seq uint64
	for {
		rep, err := s.cfg.Map.Next(ctx, seq)
		if err != nil {
			return err
		}
		seq = rep.Seq
		if rep.State == st {
			return nil
		}
		if !rep.State.HoldsRank() {
			return fmt.Errorf("mds.%s: lost the rank while reaching %s (the map says %s)", s.cfg.Name, st, rep.State)
		}
	}
}

// reconnect is the reconnect phase: the clients of the session map had
// sessions with the rank; wait until each has reported its caps or the
// timeout passed. Those not heard from are left to the engine's Resume
// (it fences them) and forgotten.
func (s *Server) reconnect(ctx context.Context, log *slog.Logger, expected int) {
	s.mu.Lock()
	s.recon.deadline = s.cfg.Clock.Now().Add(s.cfg.ReconnectTimeout)
	s.mu.Unlock()
	t := s.cfg.Clock.NewTimer(s.cfg.ReconnectTimeout)
	defer t.Stop()
	for {
		s.mu.Lock()
		done, missing := s.recon.Done(s.cfg.Clock.Now())
		s.mu.Unlock()
		if done {
			if len(missing) > 0 {
				log.Warn("reconnect phase over without some clients; fencing them", "missing", missing)
				for _, c := range missing {
					// It may still hold write caps the previous holder
					// granted: blocklisted, it cannot write behind the
					// new holder's back (Ceph's blocklist on eviction).
					s.mu.Lock()
					inst := s.instances[c]
					s.mu.Unlock()
					if inst != "" {
						if err := s.cfg.cluster.Fence(ctx, ClientFenceAddr(c, inst), ClientFenceExpire); err != nil {
							log.Warn("cannot blocklist a client that did not reconnect", "client", c, "err", err)
						}
					}
					if err := s.store.Remove(ctx, int(s.rank), c); err != nil {
						log.Warn("cannot forget a session", "client", c, "err", err)
					}
				}
			}
			s.mu.Lock()
			s.recon = nil
			s.mu.Unlock()
			log.Info("reconnect phase over", "clients", expected-len(missing), "missing", len(missing))
			return
		}
		select {
		case <-s.reconCh:
		case <-t.C():
		case <-ctx.Done():
			return
		}
	}
}

// tickLoop renews nothing itself: it marks silent sessions stale, closes
// those silent too long, and ticks the engine, every TickInterval.
func (s *Server) tickLoop(ctx context.Context) {
	t := s.cfg.Clock.NewTimer(s.cfg.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		s.tick(ctx, s.cfg.Clock.Now())
		t.Reset(s.cfg.TickInterval)
	}
}

// tick is one round of tickLoop.
func (s *Server) tick(ctx context.Context, now time.Time) {
	s.mu.Lock()
	if s.phase != phaseActive {
		s.mu.Unlock()
		return
	}
	changes := s.sessions.Tick(now)
	eng := s.engine
	type closed struct {
		c    ClientID
		conn *msgr.Session
	}
	var stale []*msgr.Session
	var gone []closed
	for _, ch := range changes {
		conn := s.conns[ch.Client]
		switch ch.Kind {
		case ChangeStale:
			s.metrics.stale++
			if conn != nil {
				stale = append(stale, conn)
			}
		case ChangeAutoclose:
			s.metrics.autoclosed++
			s.unbindLocked(ch.Client)
			gone = append(gone, closed{ch.Client, conn})
		}
	}
	s.mu.Unlock()
	for _, conn := range stale {
		sendSession(conn, wire.ClientSession{Op: wire.SessionStale})
	}
	for _, g := range gone {
		s.log.Warn("evicting a client silent past the autoclose time", "client", g.c)
		eng.SessionEnded(g.c, endTimeout)
		if g.conn != nil {
			sendSession(g.conn, wire.ClientSession{Op: wire.SessionClose, Reason: "session timed out"})
		}
		s.forget(ctx, g.c)
	}
	if eng != nil {
		eng.Tick(now)
	}
}

// forget removes c's session record, in the background.
func (s *Server) forget(ctx context.Context, c ClientID) {
	s.mu.Lock()
	store, rank := s.store, s.rank
	s.mu.Unlock()
	if store == nil {
		return
	}
	if err := store.Remove(ctx, int(rank), c); err != nil && ctx.Err() == nil {
		s.log.Warn("cannot forget a session", "client", c, "err", err)
	}
}

// shutdown stops serving: requests in the engine finish, the engine
// closes (flushing the journal, writing back what is dirty), and the
// clients' messenger sessions are left to fail over to the next holder.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.phase = phaseStopping
	eng := s.engine
	defer s.notify()
	pending := len(s.pending)
	s.pending = nil
	s.ops.reset()
	s.mu.Unlock()
	if pending > 0 {
		s.log.Info("stopping with requests held for activation; clients resend them to the next holder", "held", pending)
	}
	s.inflight.Wait()
	if eng == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	start := s.cfg.Clock.Now()
	if err := eng.Close(ctx); err != nil {
		s.log.Error("engine close", "err", err)
		return
	}
	s.log.Info("engine closed: journal flushed", "took", s.cfg.Clock.Since(start))
}

// closeTimeout bounds the engine's Close at shutdown.
const closeTimeout = 30 * time.Second

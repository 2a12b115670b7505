// Package beacon is an MDS daemon's side of the beacons (wire's
// mdsmsg.go): a Sender tells the monitors every interval who the daemon
// is, where it serves and the state it has reached, and keeps the
// monitors' answers — the gid, the state and rank the MDS map gives the
// daemon, and the map itself when it changed — for the daemon to act
// on. The MDS (internal/mds) runs one; tests run it with a real monitor
// client to drive the monitors' MDS-map service.
//
// It owns no decision: the monitors assign ranks (internal/mon/mdsmon).
// It adopts the state the map gives the daemon unless the daemon
// reported a later one the map has not taken yet, and stops (Run returns
// ErrRemoved) when the map drops the daemon, which must then restart as
// a new incarnation (a new nonce).
//
// The monitor client it sends through should give up on a monitor after
// about one interval (monc.Config.Attempt), so that a dead monitor does
// not cost a daemon its grace.
//
// Concurrency: Run sends from its own goroutine; every other method is
// safe to call concurrently with it.
package beacon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// Runner sends a monitor command: *monc.Client implements it.
type Runner interface {
	Run(ctx context.Context, cmd wire.Command) (wire.Reply, error)
}

// DefaultInterval is mds_beacon_interval's default.
const DefaultInterval = time.Second

// ErrRemoved is Run's error when the MDS map no longer holds the daemon
// (it was failed, or replaced): it must restart with a new nonce.
var ErrRemoved = errors.New("beacon: the MDS map dropped this daemon; restart it")

// Config configures a Sender.
type Config struct {
	// Mon sends the beacons. Required.
	Mon Runner
	// Name is the daemon's name ("a" for mds.a); Addr where it serves.
	// Required.
	Name, Addr string
	// Nonce identifies this incarnation; draw a random one at each
	// start. Required (non-zero).
	Nonce uint64
	// WantFS is the file system the daemon prefers (mds_join_fs).
	WantFS string
	// Interval is the time between beacons (mds_beacon_interval,
	// default 1 s); Timeout bounds one beacon's round trip (default
	// four intervals).
	Interval, Timeout time.Duration
	// Health, if set, is called before every beacon for the rank's
	// health report (server.Server.Health), which the beacon carries.
	Health func() wire.MDSHealth
	// Clock defaults to the real clock; Logger discards by default.
	Clock  clock.Clock
	Logger *slog.Logger
}

// Sender sends one daemon's beacons. Create it with New.
type Sender struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	state   mdsmap.State
	seq     uint64
	last    wire.MDSBeaconReply
	heard   bool
	m       *mdsmap.Map
	changed chan struct{} // closed and replaced at every reply
	kick    chan struct{} // a state change to report at once
}

// New returns a Sender in state boot.
func New(cfg Config) (*Sender, error) {
	if cfg.Mon == nil || cfg.Name == "" || cfg.Nonce == 0 {
		return nil, fmt.Errorf("beacon: Mon, Name and Nonce are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 4 * cfg.Interval
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Sender{cfg: cfg, log: cfg.Logger.With("mds", cfg.Name), state: mdsmap.StateBoot, changed: make(chan struct{}),
		kick: make(chan struct{}, 1)}, nil
}

// SetState records the state the daemon has reached; a change is
// reported by a beacon sent at once, as Ceph's MDS does, so a recovering
// rank does not wait an interval per phase.
func (s *Sender) SetState(st mdsmap.State) {
	s.mu.Lock()
	changed := s.state != st
	s.state = st
	s.mu.Unlock()
	if changed {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// State is the state the next beacon reports.
func (s *Sender) State() mdsmap.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Map returns the newest MDS map a reply carried (nil before one).
func (s *Sender) Map() *mdsmap.Map {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m
}

// Next waits for a reply to a beacon numbered above seq (0: any) and
// returns it.
func (s *Sender) Next(ctx context.Context, seq uint64) (wire.MDSBeaconReply, error) {
	for {
		s.mu.Lock()
		last, heard, ch := s.last, s.heard, s.changed
		s.mu.Unlock()
		if heard && last.Seq > seq {
			return last, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return wire.MDSBeaconReply{}, ctx.Err()
		}
	}
}

// Run sends a beacon at once, then every interval and at every change of
// state (SetState), until ctx ends (nil) or the map drops the daemon
// (ErrRemoved). A beacon that fails is logged; the next one is sent on
// time.
func (s *Sender) Run(ctx context.Context) error {
	t := s.cfg.Clock.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		case <-s.kick:
		}
		start := s.cfg.Clock.Now()
		removed, err := s.send(ctx)
		if removed {
			return ErrRemoved
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("beacon not answered", "err", err)
		}
		t.Reset(max(s.cfg.Interval-s.cfg.Clock.Since(start), 0))
	}
}

// send sends one beacon and takes its reply.
func (s *Sender) send(ctx context.Context) (removed bool, err error) {
	var health wire.MDSHealth
	if s.cfg.Health != nil {
		health = s.cfg.Health()
	}
	s.mu.Lock()
	s.seq++
	b := wire.MDSBeacon{Name: s.cfg.Name, Addr: s.cfg.Addr, Nonce: s.cfg.Nonce, GID: s.last.GID, Seq: s.seq, State: s.state,
		WantFS: s.cfg.WantFS, WantRank: mdsmap.NoRank, Health: health}
	if s.m != nil {
		b.Epoch = s.m.Epoch
	}
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	rep, err := s.cfg.Mon.Run(cctx, wire.BeaconCommand(b))
	if err != nil {
		return false, err
	}
	if err := rep.Err(); err != nil {
		return false, err
	}
	r, err := wire.DecodeMDSBeaconReply(rep.Data)
	if err != nil {
		return false, err
	}
	var m *mdsmap.Map
	if r.Map != nil {
		if m, err = mdsmap.Unmarshal(r.Map); err != nil {
			return false, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Seq < s.last.Seq {
		return false, nil // an older beacon's late reply
	}
	if m != nil && (s.m == nil || m.Epoch > s.m.Epoch) {
		s.m = m
	}
	if r.State == mdsmap.StateNone && b.State != mdsmap.StateBoot {
		s.last, s.heard = r, true
		close(s.changed)
		s.changed = make(chan struct{})
		return true, nil
	}
	// Adopt the map's state unless this daemon is ahead of it.
	if r.State != mdsmap.StateNone && r.State != s.state && !mdsmap.CanAdvance(r.State, s.state) {
		if s.state != mdsmap.StateBoot {
			s.log.Info("mds map gives a new state", "from", s.state, "to", r.State, "rank", r.Rank, "epoch", r.Epoch)
		}
		s.state = r.State
	}
	s.last, s.heard = r, true
	close(s.changed)
	s.changed = make(chan struct{})
	return false, nil
}

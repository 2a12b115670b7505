package mon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Config configures a Monitor.
type Config struct {
	// Name is this monitor's name in MonMap ("a" for mon.a).
	Name string
	// MonMap lists every monitor. Required.
	MonMap MonMap
	// Store is the monitor's opened store. Required; the Monitor does
	// not close it.
	Store *monstore.Store
	// Services are the replicated services, in the order commands are
	// offered to them.
	Services []moncmd.Service
	// Network carries messages: msgr.TCP in daemons, memnet in tests.
	Network msgr.Network
	// ClientAuth and ServerAuth run the messenger's handshakes (default:
	// the none mode).
	ClientAuth func(peer auth.EntityName) auth.ClientHandshake
	ServerAuth func() auth.ServerHandshake
	// Authorize decides whether a peer with caps may run a command
	// (write: it changes state). Default: everything is allowed.
	Authorize func(peer auth.EntityName, caps auth.Caps, cmd moncmd.Command, write bool) error
	// Logger, Clock: defaults discard and the real clock.
	Logger *slog.Logger
	Clock  clock.Clock
	// TickInterval is the Raft tick (default 100 ms); elections time out
	// after ElectionTicks ticks (default 10), leaders heartbeat every
	// tick.
	TickInterval  time.Duration
	ElectionTicks int
	// CompactEvery: once this many entries are applied beyond the
	// log's first index, the log is compacted behind the applied index
	// (default 1000; the store builds snapshots for followers behind).
	CompactEvery uint64
	// PingInterval is how often monitors ping each other (default 2 s);
	// a monitor not heard from for MonDownAfter (default 10 s) is down,
	// and one whose clock is more than MaxClockSkew (default 50 ms) away
	// is skewed.
	PingInterval, MonDownAfter, MaxClockSkew time.Duration
	// Seed seeds the messenger's backoff jitter.
	Seed uint64
	// Metrics receives the monitor's Prometheus series (optional).
	Metrics prometheus.Registerer
	// Bootstrap are commands the leader runs until each has succeeded
	// once (or found its change already made: EEXIST): creating the
	// first OSD map of a new cluster, seeding the auth database. They
	// must be idempotent; every monitor may run them after an election.
	Bootstrap []moncmd.Command
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.TickInterval == 0 {
		c.TickInterval = 100 * time.Millisecond
	}
	if c.ElectionTicks == 0 {
		c.ElectionTicks = 10
	}
	if c.CompactEvery == 0 {
		c.CompactEvery = 1000
	}
	if c.PingInterval == 0 {
		c.PingInterval = 2 * time.Second
	}
	if c.MonDownAfter == 0 {
		c.MonDownAfter = 10 * time.Second
	}
	if c.MaxClockSkew == 0 {
		c.MaxClockSkew = 50 * time.Millisecond
	}
	if c.ClientAuth == nil {
		self := auth.EntityName{Type: "mon", ID: c.Name}
		c.ClientAuth = func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: self} }
	}
	if c.ServerAuth == nil {
		c.ServerAuth = func() auth.ServerHandshake { return &auth.NoneServer{} }
	}
	return c
}

// ErrNotReady is returned to requests that cannot be served yet (no
// leader, or this monitor is behind); clients retry, possibly elsewhere.
var ErrNotReady = errors.New("mon: not ready (no quorum yet)")

// Monitor is one running monitor.
type Monitor struct {
	cfg     Config
	log     *slog.Logger
	metrics *monMetrics
	id      uint64
	self    auth.EntityName
	st      *monstore.Store
	msgr    *msgr.Messenger

	// Loop inputs.
	raftIn    chan raftMsg
	proposeIn chan proposal
	readIn    chan *readWait

	// svcMu serializes service calls (the loop's Apply, requests'
	// Query and Prepare) and guards the command log.
	svcMu sync.Mutex
	cmds  commandLog

	// mu guards the request bookkeeping and the state requests read.
	mu        sync.Mutex
	nextReq   uint64
	waiting   map[uint64]chan moncmd.Reply // request -> its Apply reply
	applied   uint64                       // applied index
	appliedCh chan struct{}                // closed and replaced when applied moves
	leader    uint64
	term      uint64
	subs      map[*msgr.Session]*subscription
	peers     map[string]*peerState // by monitor name

	// Raft sends, one queue per peer monitor, and their outcomes for
	// the loop to report to Raft.
	sendq       map[uint64]chan *pb.Message
	sendResults chan sendResult

	stop chan struct{}
	wg   sync.WaitGroup

	// bootstrapped marks Config.Bootstrap commands done (by index);
	// bootstrapping is set while a leader runs them.
	bootstrapped  []atomic.Bool
	bootstrapping atomic.Bool
}

// New creates a monitor; Run starts it.
func New(cfg Config) (*Monitor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.MonMap.Validate(); err != nil {
		return nil, err
	}
	id := cfg.MonMap.ID(cfg.Name)
	if id == 0 {
		return nil, fmt.Errorf("mon: %q is not in the monitor map %s", cfg.Name, cfg.MonMap)
	}
	if cfg.Store == nil || cfg.Network == nil {
		return nil, fmt.Errorf("mon: Store and Network are required")
	}
	m := &Monitor{
		cfg:         cfg,
		metrics:     newMonMetrics(cfg.Metrics),
		log:         cfg.Logger.With("mon", cfg.Name),
		id:          id,
		self:        auth.EntityName{Type: "mon", ID: cfg.Name},
		st:          cfg.Store,
		raftIn:      make(chan raftMsg, 1024),
		proposeIn:   make(chan proposal, 256),
		readIn:      make(chan *readWait, 256),
		waiting:     make(map[uint64]chan moncmd.Reply),
		appliedCh:   make(chan struct{}),
		subs:        make(map[*msgr.Session]*subscription),
		peers:       make(map[string]*peerState),
		sendq:       make(map[uint64]chan *pb.Message),
		sendResults: make(chan sendResult, 256),
		stop:        make(chan struct{}),
	}
	m.bootstrapped = make([]atomic.Bool, len(cfg.Bootstrap))
	for _, mi := range cfg.MonMap.Mons {
		if mi.Name != cfg.Name {
			m.peers[mi.Name] = &peerState{}
		}
	}
	ms, err := msgr.New(msgr.Config{
		Name:       m.self,
		Network:    cfg.Network,
		Dispatcher: dispatcher{m},
		ClientAuth: cfg.ClientAuth,
		ServerAuth: cfg.ServerAuth,
		Logger:     cfg.Logger,
		Clock:      cfg.Clock,
		Seed:       cfg.Seed,
		// Lossy everywhere: Raft retransmits what a broken connection
		// loses, and clients resend their requests to another monitor.
		Policy: func(auth.EntityName) msgr.Policy { return msgr.Lossy },
	})
	if err != nil {
		return nil, err
	}
	m.msgr = ms
	return m, nil
}

// Run listens on the monitor's address and runs until ctx ends or Close.
// It loads the services, then drives Raft.
func (m *Monitor) Run(ctx context.Context) error {
	if err := m.loadServices(); err != nil {
		return err
	}
	rn, err := m.newRawNode()
	if err != nil {
		return err
	}
	mi, _ := m.cfg.MonMap.ByID(m.id)
	if _, err := m.msgr.Listen(ctx, mi.Addr); err != nil {
		return fmt.Errorf("mon.%s: listen on %s: %w", m.cfg.Name, mi.Addr, err)
	}
	m.startSenders(ctx)
	m.wg.Add(1)
	go m.pinger(ctx)
	m.log.Info("monitor started", "addr", mi.Addr, "raft_id", m.id, "monitors", len(m.cfg.MonMap.Mons))
	err = m.loop(ctx, rn)
	m.shutdown()
	return err
}

// Close stops a running monitor (Run returns).
func (m *Monitor) Close() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
}

func (m *Monitor) shutdown() {
	m.Close()
	_ = m.msgr.Close()
	m.wg.Wait()
	m.mu.Lock()
	for r, ch := range m.waiting {
		close(ch)
		delete(m.waiting, r)
	}
	m.mu.Unlock()
}

func (m *Monitor) loadServices() error {
	m.svcMu.Lock()
	defer m.svcMu.Unlock()
	for _, s := range m.cfg.Services {
		if err := s.Load(m.st); err != nil {
			return fmt.Errorf("mon.%s: load %s: %w", m.cfg.Name, s.Name(), err)
		}
	}
	if err := m.cmds.load(m.st); err != nil {
		return fmt.Errorf("mon.%s: load the command log: %w", m.cfg.Name, err)
	}
	applied, err := m.st.AppliedIndex()
	if err != nil {
		return err
	}
	m.applied = applied
	return nil
}

// newRawNode starts Raft on the store; a store without any Raft state
// is bootstrapped with every monitor of the map as a voter.
func (m *Monitor) newRawNode() (*raft.RawNode, error) {
	rn, err := raft.NewRawNode(&raft.Config{
		ID:              m.id,
		ElectionTick:    m.cfg.ElectionTicks,
		HeartbeatTick:   1,
		Storage:         m.st,
		Applied:         m.applied,
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		CheckQuorum:     true,
		PreVote:         true,
		Logger:          raftLogger{m.log.WithGroup("raft")},
	})
	if err != nil {
		return nil, fmt.Errorf("mon.%s: raft: %w", m.cfg.Name, err)
	}
	last, err := m.st.LastIndex()
	if err != nil {
		return nil, err
	}
	_, cs, err := m.st.InitialState()
	if err != nil {
		return nil, err
	}
	if last == 0 && len(cs.GetVoters()) == 0 {
		peers := make([]raft.Peer, len(m.cfg.MonMap.Mons))
		for i := range peers {
			peers[i] = raft.Peer{ID: uint64(i + 1)}
		}
		if err := rn.Bootstrap(peers); err != nil {
			return nil, fmt.Errorf("mon.%s: bootstrap raft: %w", m.cfg.Name, err)
		}
	}
	// A lone voter has no one to wait for: it campaigns at once instead
	// of after an election timeout, which cost a single-monitor cluster
	// 1-2 s at every start. (Raft ignores the campaign at the very first
	// start, until the bootstrap configuration is applied.)
	if voters := rn.Status().Config.Voters.IDs(); len(voters) == 1 {
		if _, self := voters[m.id]; self {
			if err := rn.Campaign(); err != nil {
				return nil, fmt.Errorf("mon.%s: campaign: %w", m.cfg.Name, err)
			}
		}
	}
	return rn, nil
}

package osd

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/slots"
	"github.com/cuttlestore/cuttle/internal/osd/superblock"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures an OSD. ID, Store, Network, Listen, Host and Mons are
// required. The fields that are options of the schema (Options:
// HeartbeatInterval, RecoveryMaxPGs, ...) give their values at Start;
// SetConfig changes them later (options.go).
type Config struct {
	ID    int32
	Store objectstore.Store
	// Network carries every connection: msgr.TCP in the daemon, memnet
	// in tests. Listen is the address to listen on; Addr the one the OSD
	// advertises in the map (default: what the listener reports).
	Network msgr.Network
	Listen  string
	Addr    string
	// Host and Weight place the OSD in the CRUSH tree when it first
	// boots (weight as the CLI takes it, e.g. "1.0"; default "1").
	Host   string
	Weight string
	// Mons are the monitors; MonAuth the handshake for them (default:
	// auth none).
	Mons    []monc.Addr
	MonAuth func(peer auth.EntityName) auth.ClientHandshake
	// ServerAuth authenticates clients and peer OSDs; ClientAuth is the
	// handshake with peer OSDs (defaults: auth none).
	ServerAuth func() auth.ServerHandshake
	ClientAuth func(peer auth.EntityName) auth.ClientHandshake
	// AuthEvents receives refusals of client ops by caps (counted and
	// logged by the daemon's wiring).
	AuthEvents auth.Events
	// Metrics receives the OSD's Prometheus series (optional).
	Metrics prometheus.Registerer
	// Classes are the object classes OpCall may run; the OSD knows none
	// of its own (daemons pass cls.Standard()). Nil: none, every call
	// fails with ENOTSUP.
	Classes *objclass.Registry
	// LogEntriesPerOSD is how many PG log entries the OSD keeps across
	// all its PGs (default 100,000; Ceph's
	// osd_target_pg_log_entries_per_osd): each PG's log keeps this
	// share of it, between 250 entries and LogEntries (default 3000).
	// The logs are held in memory, about 200 bytes an entry, so the
	// share bounds what they cost however many PGs the OSD holds.
	LogEntriesPerOSD int
	LogEntries       int
	// RecoveryMaxPGs is how many of the PGs this OSD is primary of
	// recover or backfill at once (default 1; Ceph's osd_max_backfills);
	// RecoveryMaxPushes how many objects each pushes at once (default
	// 4); RecoverySleep how long each push slot rests after a push
	// (default 0; Ceph's osd_recovery_sleep), to leave more of the
	// disks to clients. missing.go.
	RecoveryMaxPGs    int
	RecoveryMaxPushes int
	RecoverySleep     time.Duration
	// MaxScrubs is how many scrubs the OSD runs at once (default 1;
	// Ceph's osd_max_scrubs). scrubsched.go.
	MaxScrubs int
	// SnapTrimSleep is how long each trim slot rests after trimming an
	// object (default 0; Ceph's osd_snap_trim_sleep), and SnapTrimsPerPG
	// how many objects a PG trims at once (default 2; Ceph's
	// osd_pg_max_concurrent_snap_trims). Both are Options.
	SnapTrimSleep  time.Duration
	SnapTrimsPerPG int
	// AckPrimaryMaxLag is how many writes a PG of a pool in ack primary
	// mode answers ahead of its replicas' commits (default 64;
	// acklag.go). An Option.
	AckPrimaryMaxLag int
	// WatchTimeout is the timeout of a watch whose client asks for none
	// (default 30 s; Ceph's osd_client_watch_timeout). watches.go.
	WatchTimeout time.Duration
	// EmulateDevice names the device timing the daemon gave Store
	// (osd_emulate_device: none, hdd or ssd; internal/objectstore/devemu):
	// the OSD only shows it (config show).
	EmulateDevice string
	// CacheSize is the data cache the daemon opened Store with
	// (osd_cache_size; blockstore.Options.DataCacheBytes): the OSD only
	// shows it. 0 takes the schema's default, DefaultCacheSize; a
	// negative value means none.
	CacheSize int64
	// MapRenew is how often the OSD renews its map subscription when
	// no map arrives (default 5 s).
	MapRenew time.Duration
	// HeartbeatInterval is how long a peer may be quiet before it is
	// pinged (default 6 s); HeartbeatGrace how long before it is reported
	// failed to the monitors (default 20 s). heartbeat.go.
	HeartbeatInterval time.Duration
	HeartbeatGrace    time.Duration
	// ReportInterval is how often the OSD reports its PGs' states and
	// usage to the monitors when nothing changes (default 5 s); a state
	// change is reported at once. pgstats.go.
	ReportInterval time.Duration
	// ScrubInterval and DeepScrubInterval are how often each PG is
	// scrubbed lightly (default a day) and deeply (default a week), each
	// stretched by up to half per PG; ScrubCheck is how often the OSD
	// looks for a scrub that is due (default a minute). scrubsched.go.
	ScrubInterval     time.Duration
	DeepScrubInterval time.Duration
	ScrubCheck        time.Duration
	Clock             clock.Clock
	Logger            *slog.Logger
	Seed              uint64
	// Load, if set, measures how busy the OSD is, for its PG stats report
	// (internal/loadstat; read_policy score). Nil: it reports idle.
	Load func() osdmap.Load
}

func (cfg Config) withDefaults() (Config, error) {
	switch {
	case cfg.ID < 0:
		return cfg, fmt.Errorf("osd: bad id %d", cfg.ID)
	case cfg.Store == nil || cfg.Network == nil:
		return cfg, errors.New("osd: Config.Store and Config.Network are required")
	case cfg.Listen == "" || cfg.Host == "":
		return cfg, errors.New("osd: Config.Listen and Config.Host are required")
	case len(cfg.Mons) == 0:
		return cfg, errors.New("osd: Config.Mons is required")
	}
	self := auth.EntityName{Type: "osd", ID: fmt.Sprint(cfg.ID)}
	if cfg.Weight == "" {
		cfg.Weight = "1"
	}
	none := func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: self} }
	if cfg.MonAuth == nil {
		cfg.MonAuth = none
	}
	if cfg.ClientAuth == nil {
		cfg.ClientAuth = none
	}
	if cfg.ServerAuth == nil {
		cfg.ServerAuth = func() auth.ServerHandshake { return &auth.NoneServer{} }
	}
	if cfg.LogEntries <= 0 {
		cfg.LogEntries = 3000
	}
	if cfg.LogEntriesPerOSD <= 0 {
		cfg.LogEntriesPerOSD = 100_000
	}
	if cfg.RecoveryMaxPGs <= 0 {
		cfg.RecoveryMaxPGs = 1
	}
	if cfg.RecoveryMaxPushes <= 0 {
		cfg.RecoveryMaxPushes = 4
	}
	if cfg.MaxScrubs <= 0 {
		cfg.MaxScrubs = 1
	}
	if cfg.AckPrimaryMaxLag <= 0 {
		cfg.AckPrimaryMaxLag = 64
	}
	if cfg.SnapTrimsPerPG <= 0 {
		cfg.SnapTrimsPerPG = 2
	}
	if cfg.WatchTimeout <= 0 {
		cfg.WatchTimeout = defaultWatchTimeout
	}
	if cfg.EmulateDevice == "" {
		cfg.EmulateDevice = "none"
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.ReportInterval <= 0 {
		cfg.ReportInterval = 5 * time.Second
	}
	if cfg.ScrubInterval <= 0 {
		cfg.ScrubInterval = 24 * time.Hour
	}
	if cfg.DeepScrubInterval <= 0 {
		cfg.DeepScrubInterval = 7 * 24 * time.Hour
	}
	if cfg.ScrubCheck <= 0 {
		cfg.ScrubCheck = time.Minute
	}
	if cfg.MapRenew <= 0 {
		cfg.MapRenew = 5 * time.Second
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 6 * time.Second
	}
	if cfg.HeartbeatGrace <= 0 {
		cfg.HeartbeatGrace = 20 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// OSD is one running OSD daemon.
type OSD struct {
	cfg  Config
	self auth.EntityName
	log  *slog.Logger
	ms   *msgr.Messenger
	mon  *monc.Client
	addr string

	space spaceGuard // the store's usage and fullness, for refusing writes (full.go)

	nonce   uint64                 // this process's boot nonce
	updates chan wire.OSDMapUpdate // from the monitor client to mapLoop
	ctx     context.Context        // cancelled by Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu         sync.Mutex
	osdmap     *osdmap.Map
	pgs        map[osdmap.PG]*pg
	backlog    map[*msgr.Session][]func() bool // messages waiting for a newer map, by session, in arrival order
	mapSeen    chan struct{}                   // closed and replaced when a map is activated
	history    *mapHistory                     // maps of past epochs, for past intervals
	statsDirty chan struct{}                   // signalled when a PG's state changes (pgstats.go)
	res        *reservations                   // recovery's slots, here and on the members (reservations.go)
	scrubSlots *slots.Slots                    // one per scrub running: osd_max_scrubs (scrubsched.go)
	scrubJobs  chan scrubJob                   // operators' scrub requests (scrubsched.go)
	// policy decides when the PGs' op queues start their items
	// (opqueue.go): opq.Today, until a QoS policy replaces it.
	policy    opq.Policy
	deleting  map[osdmap.PG]chan struct{} // stray copies being deleted, closed when done (removal.go)
	upThru    *upThru                     // PGs' requests for this OSD's up_thru (upthru.go)
	closeOnce sync.Once
	closeErr  error
	stopping  atomic.Bool   // the store failed: never boot again (storeFailed)
	leaving   atomic.Bool   // asked to be marked down (MarkMeDown): never boot again
	failed    chan struct{} // closed when the store failed and the OSD stopped (Failed)
	failErr   error
	booted    bool
	logLimit  atomic.Int64 // entries each PG log keeps (setLogLimitLocked)
	// checkers authorize each session's ops by its caps.
	checkers map[*msgr.Session]*auth.CapChecker

	hb heartbeats

	// opts are the options in effect, conf the same with their sources
	// (options.go); setMu serializes SetConfig.
	setMu sync.Mutex
	opts  atomic.Pointer[Options]
	conf  atomic.Pointer[config.Values]

	metrics    *osdMetrics
	msgsIn     atomic.Uint64 // messages received
	trafficLen atomic.Uint64 // their bytes, plus the data replies returned
	inflightMu sync.Mutex
	inflight   map[*request]struct{}

	// watchConns names client sessions for the PGs' watch states,
	// notifySeq numbers notifies, watchTid the OSD's own writes that
	// remove expired watches (watches.go).
	watchConns watchConns
	notifySeq  atomic.Uint64
	watchTid   atomic.Uint64
}

// Start opens the OSD: it loads the PGs in its store, listens, connects to
// the monitors, subscribes to the OSD map and boots (asks the monitors to
// mark it up at its address). It returns once the boot request is sent;
// WaitUp waits until the map shows the OSD up.
func Start(ctx context.Context, cfg Config) (*OSD, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	octx, cancel := context.WithCancel(context.Background())
	o := &OSD{cfg: cfg, self: auth.EntityName{Type: "osd", ID: fmt.Sprint(cfg.ID)},
		log: cfg.Logger.With("osd", cfg.ID), updates: make(chan wire.OSDMapUpdate, 64),
		ctx: octx, cancel: cancel, pgs: map[osdmap.PG]*pg{}, mapSeen: make(chan struct{}),
		backlog: map[*msgr.Session][]func() bool{}, checkers: map[*msgr.Session]*auth.CapChecker{},
		inflight: map[*request]struct{}{}, res: newReservations(cfg.RecoveryMaxPGs), scrubSlots: slots.New(cfg.MaxScrubs),
		policy: opq.Today{}}
	o.initOptions()
	o.metrics = newOSDMetrics(cfg.Metrics, o)
	o.history = newMapHistory(o.fetchMap)
	o.statsDirty = make(chan struct{}, 1)
	o.scrubJobs = make(chan scrubJob, scrubQueue)
	o.deleting = map[osdmap.PG]chan struct{}{}
	o.upThru = newUpThru()
	o.failed = make(chan struct{})
	o.nonce = randomNonce()
	if err := o.start(ctx); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

func (o *OSD) start(ctx context.Context) error {
	if err := superblock.Check(ctx, o.cfg.Store, o.cfg.ID); err != nil {
		return err
	}
	if err := o.loadPGs(ctx); err != nil {
		return err
	}
	ms, err := msgr.New(msgr.Config{Name: o.self, Network: o.cfg.Network, Dispatcher: dispatcher{o},
		ClientAuth: o.cfg.ClientAuth, ServerAuth: o.cfg.ServerAuth, Logger: o.log, Clock: o.cfg.Clock,
		Seed: o.cfg.Seed, HugePayloads: true})
	if err != nil {
		return fmt.Errorf("osd.%d: %w", o.cfg.ID, err)
	}
	o.ms = ms
	la, err := ms.Listen(o.ctx, o.cfg.Listen)
	if err != nil {
		return fmt.Errorf("osd.%d: listen: %w", o.cfg.ID, err)
	}
	o.addr = o.cfg.Addr
	if o.addr == "" {
		o.addr = la.String()
	}
	mon, err := monc.New(monc.Config{Name: o.self, Mons: o.cfg.Mons, Network: o.cfg.Network,
		ClientAuth: o.cfg.MonAuth, OnOSDMap: o.onMapUpdate, Logger: o.log, Clock: o.cfg.Clock, Seed: o.cfg.Seed + 1})
	if err != nil {
		return fmt.Errorf("osd.%d: %w", o.cfg.ID, err)
	}
	o.mon = mon
	o.wg.Add(2)
	go o.mapLoop()
	go o.heartbeatLoop()
	o.wg.Go(o.reportLoop)
	o.wg.Go(o.scrubLoop)
	o.wg.Go(o.snapTrimLoop)
	o.wg.Go(o.upThruLoop)
	if err := o.mon.Subscribe(ctx, 0); err != nil {
		return fmt.Errorf("osd.%d: %w", o.cfg.ID, err)
	}
	return o.boot(ctx)
}

// boot asks the monitors to mark the OSD up at its address (and, the
// first time, to place it under its host).
func (o *OSD) boot(ctx context.Context) error {
	r, err := o.mon.Run(ctx, wire.NewCommand("osd boot", "id", fmt.Sprint(o.cfg.ID), "addr", o.addr,
		"host", o.cfg.Host, "weight", o.cfg.Weight, "nonce", fmt.Sprint(o.nonce)))
	if err != nil {
		return fmt.Errorf("osd.%d: boot: %w", o.cfg.ID, err)
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("osd.%d: boot: %w", o.cfg.ID, err)
	}
	o.log.Info("boot requested", "addr", o.addr, "status", r.Status)
	return nil
}

// Addr is the address the OSD listens on and advertises.
func (o *OSD) Addr() string { return o.addr }

// Epoch is the epoch of the newest map the OSD has activated (0: none).
func (o *OSD) Epoch() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.epochLocked()
}

func (o *OSD) epochLocked() uint64 {
	if o.osdmap == nil {
		return 0
	}
	return uint64(o.osdmap.Epoch())
}

// WaitForEpoch waits until the OSD has activated epoch.
func (o *OSD) WaitForEpoch(ctx context.Context, epoch uint64) error {
	for {
		o.mu.Lock()
		have, seen := o.epochLocked(), o.mapSeen
		o.mu.Unlock()
		if have >= epoch {
			return nil
		}
		select {
		case <-seen:
		case <-ctx.Done():
			return fmt.Errorf("osd.%d: waiting for epoch %d (have %d): %w", o.cfg.ID, epoch, have, ctx.Err())
		}
	}
}

// WaitUp waits until the OSD's own map shows it up at its address.
func (o *OSD) WaitUp(ctx context.Context) error {
	for {
		o.mu.Lock()
		m, seen := o.osdmap, o.mapSeen
		o.mu.Unlock()
		if m != nil && m.IsUp(o.cfg.ID) && m.OSD(o.cfg.ID).Addr == o.addr {
			return nil
		}
		select {
		case <-seen:
		case <-ctx.Done():
			return fmt.Errorf("osd.%d: waiting to be marked up: %w", o.cfg.ID, ctx.Err())
		}
	}
}

// Close stops serving and closes the connections. The store stays open:
// its owner closes it.
func (o *OSD) Close() error {
	o.closeOnce.Do(func() {
		o.cancel()
		if o.mon != nil {
			o.closeErr = errors.Join(o.closeErr, o.mon.Close())
		}
		if o.ms != nil {
			o.closeErr = errors.Join(o.closeErr, o.ms.Close())
		}
		o.wg.Wait()
	})
	return o.closeErr
}

// Failed is closed when the OSD has stopped by itself because its store
// failed; FailedErr then says why. The daemon exits.
func (o *OSD) Failed() <-chan struct{} { return o.failed }

// FailedErr is the store failure that stopped the OSD (nil before).
func (o *OSD) FailedErr() error {
	select {
	case <-o.failed:
		return o.failErr
	default:
		return nil
	}
}

// storeFailed stops the OSD because its store failed a write (a disk
// returning I/O errors): whatever it acknowledged is on its peers, and
// serving on would hang or fail clients. It first asks the monitors to
// mark it down, so that its PGs move on at once; clients resend what it
// had not answered to the new primaries.
func (o *OSD) storeFailed(cause error) {
	if !o.stopping.CompareAndSwap(false, true) {
		return // the first caller stops the OSD; the others need not wait
	}
	o.failErr = cause
	o.log.Error("the store failed; asking to be marked down and stopping", "err", cause)
	// Bounded, and given up when the OSD is closed meanwhile: this
	// goroutine is not one Close waits for.
	ctx, cancel := context.WithTimeout(o.ctx, 10*time.Second)
	defer cancel()
	if err := o.MarkMeDown(ctx); err != nil {
		o.log.Error("the monitors did not mark this OSD down; its peers will report it", "err", err)
	}
	close(o.failed)
	go o.Close()
}

// MarkMeDown asks the monitors to mark this OSD down now, as an OSD that
// stops does before it closes (Ceph's osd_mon_shutdown_timeout): its PGs
// move to their other OSDs at once instead of after its peers' heartbeat
// grace, clients resend to the new primaries, and a cluster started
// again waits for this OSD to boot rather than take the map's word that
// it is up. It asks nothing while the OSD is not up in its map. The
// request names this incarnation's address, so a late one never marks a
// successor down. The OSD is stopping from then on: marked down, it does
// not boot again.
func (o *OSD) MarkMeDown(ctx context.Context) error {
	o.leaving.Store(true)
	m := o.currentMap()
	if o.mon == nil || m == nil || !m.IsUp(o.cfg.ID) || m.OSD(o.cfg.ID).Addr != o.addr {
		return nil
	}
	r, err := o.mon.Run(ctx, wire.NewCommand("osd markmedown", "id", fmt.Sprint(o.cfg.ID), "addr", o.addr))
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return fmt.Errorf("osd.%d: mark down: %w", o.cfg.ID, err)
	}
	return nil
}

// apply applies t and waits until it is committed; a store that fails it
// stops the OSD (storeFailed).
func (o *OSD) apply(t *objectstore.Transaction) error {
	err := objectstore.Apply(o.ctx, o.cfg.Store, t)
	if isStoreFailure(err) {
		o.storeFailed(err)
	}
	return err
}

// isStoreFailure reports whether err from a store write means the store
// can no longer be trusted (as opposed to a refused request).
func isStoreFailure(err error) bool {
	return err != nil && !errors.Is(err, objectstore.ErrNoSpace) && !errors.Is(err, objectstore.ErrInvalid) &&
		!errors.Is(err, objectstore.ErrNotFound) && !errors.Is(err, objectstore.ErrCorrupt) && !stopping(err)
}

// stopping reports whether err says only that the OSD or its store is
// closing: neither a failure of the disk nor a refusal of the write.
func stopping(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, objectstore.ErrClosed)
}

// loadPGs instantiates the PGs found in the store.
func (o *OSD) loadPGs(ctx context.Context) error {
	colls, err := o.cfg.Store.ListCollections(ctx)
	if err != nil {
		return fmt.Errorf("osd.%d: %w", o.cfg.ID, err)
	}
	for _, c := range colls {
		if c.Kind != objectstore.KindPG {
			continue
		}
		id := osdmap.PG{Pool: c.Pool, Seed: c.Seed}
		if half, err := o.halfDeleted(id); err != nil {
			return fmt.Errorf("osd.%d: %w", o.cfg.ID, err)
		} else if half {
			o.log.Info("finishing the deletion of a stray PG", "pg", id.String())
			if err := o.deletePG(id); err != nil {
				return fmt.Errorf("osd.%d: finish deleting pg %v: %w", o.cfg.ID, id, err)
			}
			continue
		}
		p, err := o.loadPG(ctx, id)
		if err != nil {
			return fmt.Errorf("osd.%d: %w", o.cfg.ID, err)
		}
		o.pgs[id] = p
	}
	if len(o.pgs) > 0 {
		o.log.Info("loaded placement groups", "count", len(o.pgs))
	}
	o.setLogLimitLocked()
	return nil
}

// minLogEntries is the fewest entries a PG log keeps however many PGs
// share the OSD's budget (Ceph's osd_min_pg_log_entries), unless
// Config.LogEntries is lower still.
const minLogEntries = 250

// setLogLimitLocked shares Options.LogEntriesPerOSD among the OSD's PGs;
// call it whenever o.pgs changes. A log over its new share shrinks at
// its PG's next write.
func (o *OSD) setLogLimitLocked() {
	share := o.options().LogEntriesPerOSD / max(1, len(o.pgs))
	o.logLimit.Store(int64(min(o.cfg.LogEntries, max(share, minLogEntries))))
}

// randomNonce returns a boot nonce: a restarted OSD boots with a new one.
func randomNonce() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) | 1
}

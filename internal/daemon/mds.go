package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/mds/beacon"
	"github.com/cuttlestore/cuttle/internal/mds/server"
	"github.com/cuttlestore/cuttle/internal/metrics"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/prometheus/client_golang/prometheus"
)

// MDS caps: what an MDS may do at the monitors (beacons, blocklisting
// the rank holder it replaces and the clients it evicts, fetching its
// rotating keys), on the OSDs (its journal and directories, and the
// data pools' objects it purges) and with other MDSs. Its key is made
// with these (cuttle mds mkfs).
const (
	MDSMonCaps = "profile mds"
	MDSOSDCaps = "allow rwx"
	MDSMDSCaps = "allow *"
)

// MDSConfig is what an MDS daemon is assembled from.
type MDSConfig struct {
	// Name is the daemon's name: "a" runs mds.a. Required.
	Name string
	// Data is the daemon's data directory (cuttle mds mkfs): its
	// keyring. Optional with auth none or with Key or KeyringPath.
	Data string
	// Listen is the address to listen on for clients; Addr the one
	// advertised in the MDS map (default: the one listened on).
	Listen, Addr string
	// Mons are the monitors. Required.
	Mons []monc.Addr
	// Auth is "none" (the default) or "cephx": the daemon logs in as
	// mds.NAME with the keyring at KeyringPath, else Data's, and
	// verifies its clients' mds tickets with the mds service's rotating
	// keys.
	Auth        string
	KeyringPath string
	// JoinFS is the file system the daemon prefers (mds_join_fs).
	JoinFS string
	// Nonce identifies this incarnation in the MDS map and its fence
	// ("ADDR/NONCE"); 0 draws a random one, as every start must (the
	// simulator passes its own, to be reproducible).
	Nonce uint64
	// Open opens the engine for a rank: cacheengine.Opener(), the real
	// engine (the CLI passes it; this package does not import the engine,
	// as the simulator, which the engine's tests use, imports this one).
	// Required.
	Open server.Opener
	// Follow follows a rank's journal in standby-replay:
	// cacheengine.Follower() (optional; without it a standby-replay
	// daemon waits as a standby).
	Follow server.Follower
	// The MDS's options (mds_beacon_interval, mds_reconnect_timeout,
	// mds_cache_size) are resolved from the schema's defaults, File's
	// sections ([mds.NAME], [mds], [global]; nil for none), Flags and
	// Overrides, each taking an option from the highest that sets it.
	File      *config.File
	Flags     map[string]string
	Overrides map[string]string
	// Network carries every connection (default TCP); Clock drives
	// timers; Logger (default: discarded); Metrics (default: a new
	// registry) served at MetricsAddr if set.
	Network     msgr.Network
	Clock       clock.Clock
	Logger      *slog.Logger
	Metrics     *prometheus.Registry
	MetricsAddr string
}

func (cfg MDSConfig) validate() (MDSConfig, error) {
	switch {
	case cfg.Name == "":
		return cfg, errors.New("mds: MDSConfig.Name is required")
	case len(cfg.Mons) == 0:
		return cfg, errors.New("mds: MDSConfig.Mons is required")
	case cfg.Open == nil:
		return cfg, errors.New("mds: MDSConfig.Open (the engine) is required")
	}
	if _, err := auth.ParseEntityName("mds." + cfg.Name); err != nil {
		return cfg, fmt.Errorf("mds: name %q: %w", cfg.Name, err)
	}
	switch cfg.Auth {
	case "":
		cfg.Auth = "none"
	case "none", "cephx":
	default:
		return cfg, fmt.Errorf("mds: auth %q (want cephx or none)", cfg.Auth)
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Network == nil {
		cfg.Network = &msgr.TCP{}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.NewRegistry()
	}
	return cfg, nil
}

// mdsOptionNames are the options MDS daemons read.
func mdsOptionNames() []string {
	var names []string
	for _, o := range config.ForDaemon("mds") {
		names = append(names, o.Name)
	}
	return names
}

// MkfsMDS makes an MDS's data directory: dir (missing or empty) with the
// daemon's keyring when it has a key (auth cephx), mode 0600.
func MkfsMDS(dir string, name auth.EntityName, key *auth.Secret, caps auth.Caps) error {
	if err := CheckOSDDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if key == nil {
		return nil
	}
	return auth.SaveKeyring(filepath.Join(dir, KeyringFile), auth.Keyring{name: {Key: *key, Caps: caps}})
}

// RunMDS runs the MDS of cfg until ctx ends: it connects to the cluster
// as mds.NAME, listens for clients, beacons, and serves what the MDS map
// gives it (internal/mds/server). When ctx ends it stops serving and
// closes the engine, which flushes its journal, and returns nil. If the
// monitors drop the daemon from the map (they failed it: another took
// its rank), it stops the same way and returns an error saying it must
// restart.
func RunMDS(ctx context.Context, cfg MDSConfig) error {
	cfg, err := cfg.validate()
	if err != nil {
		return err
	}
	self := auth.EntityName{Type: "mds", ID: cfg.Name}
	log := cfg.Logger.With("daemon", self.String())
	local := mdsLocalLayers(cfg, self.String())
	opts, err := mdsOptions(local, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", self, err)
	}
	// The local beacon interval bounds the rados client's wait for each
	// monitor; the central config may change it for the beacons.
	interval := opts.Duration("mds_beacon_interval")

	keyring := cfg.KeyringPath
	if cfg.Auth == "cephx" && keyring == "" {
		if cfg.Data == "" {
			return fmt.Errorf("%s: auth cephx needs a keyring or a data directory (make one with cuttle mds mkfs)", self)
		}
		keyring = filepath.Join(cfg.Data, KeyringFile)
	}
	var mons []string
	for _, m := range cfg.Mons {
		mons = append(mons, m.Name+"="+m.Addr)
	}

	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	clientAuth := func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: self} }
	serverAuth := func() auth.ServerHandshake { return &auth.NoneServer{} }
	if cfg.Auth == "cephx" {
		kr, err := auth.LoadKeyring(keyring)
		if err != nil {
			return fmt.Errorf("%s: %w", self, err)
		}
		e, ok := kr[self]
		if !ok {
			return fmt.Errorf("%s: keyring %s has no key for it", self, keyring)
		}
		a, err := newDaemonAuth(self, e.Key, cfg.Mons, cfg.Network, cfg.Clock, cfg.Metrics, log.WithGroup("auth"))
		if err != nil {
			return err
		}
		actx, cancel := context.WithCancel(context.Background())
		closers = append(closers, cancel)
		if err := a.start(ctx, actx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		serverAuth = a.serverHandshake
		clientAuth = func(peer auth.EntityName) auth.ClientHandshake {
			return failedHandshake{fmt.Errorf("%s: an MDS dials no one (asked for %s)", self, peer)}
		}
	}

	nonce := cfg.Nonce
	if nonce == 0 {
		nonce = rand.Uint64() | 1
	}
	// The messenger listens before the rados client exists, so that the
	// client can show the OSDs the instance address the MDS map will
	// show (this port and nonce): the blocklist entry that fences this
	// incarnation when it loses its rank names that address, and only a
	// match keeps a deposed MDS from writing its journal.
	held := newHeldDispatcher()
	defer held.release(nil)
	ms, err := msgr.New(msgr.Config{Name: self, Network: cfg.Network, Dispatcher: held, ClientAuth: clientAuth, ServerAuth: serverAuth,
		Logger: cfg.Logger.WithGroup("msgr"), Clock: cfg.Clock, Nonce: nonce})
	if err != nil {
		return fmt.Errorf("%s: %w", self, err)
	}
	closers = append(closers, func() { ms.Close() })
	la, err := ms.Listen(ctx, cfg.Listen)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", self, cfg.Listen, err)
	}
	addr := cfg.Addr
	if addr == "" {
		addr = la.String()
	}
	// One monitor session for the rados client, the beacons and the
	// fences (the monitors keep one session per entity name). A monitor
	// that does not answer within a beacon interval is skipped, so that
	// a dead monitor does not cost the daemon its grace.
	conn, err := rados.Connect(ctx, rados.Config{Mons: mons, Name: self.String(), Auth: cfg.Auth, Keyring: keyring,
		MonTimeout: max(interval, time.Second), Nonce: nonce, Port: portOf(addr), Logger: cfg.Logger.WithGroup("rados"), Network: cfg.Network, Clock: cfg.Clock})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%s: %w", self, err)
	}
	// Closed last, after the messenger and the metrics server.
	closers = append([]func(){func() { conn.Close() }}, closers...)
	// The options may be set in the central config too (`cuttle config
	// set mds.a mds_cache_size ...`): ask the monitors once, below the
	// file, the flags and the overrides. Every MDS option is read only
	// here, so a change takes effect when the daemon restarts.
	opts = mdsCentralOptions(ctx, monRunner{conn}.Run, self.String(), local, opts, log)
	interval = opts.Duration("mds_beacon_interval")
	for _, v := range opts.All() {
		if v.Source != config.SourceDefault {
			log.Info("option", "name", v.Name, "value", v.Value, "source", v.Source.String())
		}
	}

	sender := &lateSender{}
	open, cacheInodes := cfg.Open, int(opts.Int("mds_cache_size"))
	if open != nil {
		open = func(ctx context.Context, oc server.OpenConfig) (server.Engine, error) {
			oc.CacheInodes = cacheInodes
			return cfg.Open(ctx, oc)
		}
	}
	srvCfg := server.Config{Name: cfg.Name, Conn: conn, Map: sender, Open: open, Follow: cfg.Follow,
		ReconnectTimeout: opts.Duration("mds_reconnect_timeout"), OpComplaintTime: opts.Duration("mds_op_complaint_time"),
		Clock: cfg.Clock, Logger: log}
	srv, err := server.New(srvCfg)
	if err != nil {
		return err
	}
	held.release(srv)
	b, err := beacon.New(beacon.Config{Mon: monRunner{conn}, Name: cfg.Name, Addr: addr, Nonce: nonce, WantFS: cfg.JoinFS,
		Interval: interval, Clock: cfg.Clock, Logger: log.WithGroup("beacon"),
		Health: func() wire.MDSHealth { return srv.Health(cfg.Clock.Now()) }})
	if err != nil {
		return err
	}
	sender.Sender = b
	registerMDSMetrics(cfg.Metrics, srv)
	if cfg.MetricsAddr != "" {
		mctx, cancel := context.WithCancel(context.Background())
		closers = append(closers, cancel)
		maddr, err := metrics.Serve(mctx, cfg.MetricsAddr, cfg.Metrics, log)
		if err != nil {
			return fmt.Errorf("%s: %w", self, err)
		}
		log.Info("serving metrics", "url", "http://"+maddr.String()+"/metrics")
	}
	log.Info("started", "addr", addr, "nonce", nonce, "auth", cfg.Auth, "join_fs", cfg.JoinFS)

	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	beaconDone := make(chan error, 1)
	go func() {
		err := b.Run(rctx)
		if errors.Is(err, beacon.ErrRemoved) {
			cancel(err)
		}
		beaconDone <- err
	}()
	err = srv.Run(rctx)
	// The server has closed the engine; stop the beacons last, so that
	// the monitors hear of the daemon until its journal is flushed.
	cancel(nil)
	berr := <-beaconDone
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", self, err)
	case errors.Is(berr, beacon.ErrRemoved):
		return fmt.Errorf("%s: %w", self, berr)
	}
	log.Info("stopped", "cause", context.Cause(ctx))
	return nil
}

// heldDispatcher holds the messenger's deliveries until the server that
// handles them exists (the messenger listens first: RunMDS).
type heldDispatcher struct {
	once  sync.Once
	ready chan struct{}
	to    msgr.Dispatcher // set before ready is closed; nil: drop
}

func newHeldDispatcher() *heldDispatcher { return &heldDispatcher{ready: make(chan struct{})} }

// release lets deliveries through to d (nil drops them); only the first
// call counts.
func (h *heldDispatcher) release(d msgr.Dispatcher) {
	h.once.Do(func() {
		h.to = d
		close(h.ready)
	})
}

func (h *heldDispatcher) Dispatch(from msgr.Peer, msg msgr.Message) {
	<-h.ready
	if h.to != nil {
		h.to.Dispatch(from, msg)
	}
}

func (h *heldDispatcher) HandleEvent(ev msgr.Event) {
	<-h.ready
	if h.to != nil {
		h.to.HandleEvent(ev)
	}
}

// portOf is the port of "host:port", 0 if it has none.
func portOf(addr string) uint16 {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}

// lateSender is the server's view of the beacon sender, which is made
// after the server (it needs the address the messenger listens on,
// which needs the server as its dispatcher). Set before Run.
type lateSender struct{ *beacon.Sender }

// monRunner sends the beacons through the rados connection's monitor
// session: a refusal is a failed wire.Reply, as beacon expects.
type monRunner struct{ c *rados.Conn }

func (r monRunner) Run(ctx context.Context, cmd wire.Command) (wire.Reply, error) {
	rep, err := r.c.MonCommand(ctx, cmd.Prefix, cmd.Args)
	var oe *rados.OpError
	if errors.As(err, &oe) {
		return wire.Reply{Code: int32(oe.Errno), Status: oe.Status}, nil
	}
	if err != nil {
		return wire.Reply{}, err
	}
	return wire.Reply{Status: rep.Status, Data: rep.Data, Text: rep.Text}, nil
}

// registerMDSMetrics exports the server's counters.
func registerMDSMetrics(reg prometheus.Registerer, srv *server.Server) {
	series := []struct {
		name, help string
		counter    bool
		value      func(server.Status) float64
	}{
		{"sessions", "Client sessions open with this daemon's rank.", false,
			func(s server.Status) float64 { return float64(len(s.Sessions)) }},
		{"requests_total", "Metadata requests handed to the engine.", true,
			func(s server.Status) float64 { return float64(s.Counters.Requests) }},
		{"sessions_opened_total", "Client sessions opened.", true,
			func(s server.Status) float64 { return float64(s.Counters.SessionsOpened) }},
		{"sessions_stale_total", "Client sessions marked stale (no renewal within the session timeout).", true,
			func(s server.Status) float64 { return float64(s.Counters.SessionsStale) }},
		{"sessions_autoclosed_total", "Client sessions closed by the MDS after the autoclose time.", true,
			func(s server.Status) float64 { return float64(s.Counters.SessionsAutoclosed) }},
		{"clients_fenced_total", "Clients blocklisted by this daemon.", true,
			func(s server.Status) float64 { return float64(s.Counters.ClientsFenced) }},
		{"clients_reconnected_total", "Clients that reported their caps after a takeover.", true,
			func(s server.Status) float64 { return float64(s.Counters.ClientsReconnected) }},
	}
	engine := []struct {
		name, help string
		value      func(server.EngineStats) float64
	}{
		{"inodes", "Inodes in the rank's cache.", func(s server.EngineStats) float64 { return float64(s.Inodes) }},
		{"dentries", "Dentries in the rank's cache.", func(s server.EngineStats) float64 { return float64(s.Dentries) }},
		{"dirty_frags", "Directory fragments changed in the journal and not yet written back.", func(s server.EngineStats) float64 { return float64(s.DirtyFrags) }},
		{"journal_bytes", "The rank's journal past its expire position.", func(s server.EngineStats) float64 { return float64(s.JournalBytes) }},
		{"caps", "Capabilities clients hold on the rank's inodes.", func(s server.EngineStats) float64 { return float64(s.Caps) }},
		{"strays", "Unlinked inodes waiting to be purged.", func(s server.EngineStats) float64 { return float64(s.Strays) }},
		{"damaged_objects", "Damaged metadata objects found (requests in them get EIO; cuttle fs scrub lists them).", func(s server.EngineStats) float64 { return float64(s.Damaged) }},
	}
	for _, x := range engine {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuttle_mds_" + x.name, Help: x.help + " 0 without a rank."},
			func() float64 {
				if e, ok := srv.Engine().(server.StatsEngine); ok {
					return x.value(e.Stats())
				}
				return 0
			}))
	}
	for _, x := range series {
		name, value := "cuttle_mds_"+x.name, func() float64 { return x.value(srv.Status()) }
		if x.counter {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: x.help}, value))
		} else {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: x.help}, value))
		}
	}
}

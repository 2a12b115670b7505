package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/cls"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/metrics"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/internal/procs"
	"github.com/prometheus/client_golang/prometheus"
)

// OSDConfig is what an OSD daemon is assembled from. The zero value of
// every optional field is the default `cuttle osd run` documents, or the
// OSD's own where the field is passed on to it.
type OSDConfig struct {
	// ID is the OSD's id. With Data, a negative ID takes the data
	// directory's, and any other must match it.
	ID int32
	// Data is the OSD's data directory (MkfsOSD's): its store is opened
	// and closed by the daemon, and its keyring holds the OSD's key.
	// Without Data, Store is required.
	Data string
	// Store, without Data, is an opened store the daemon runs the OSD
	// on and does not close: the simulator's, which outlives restarts.
	Store objectstore.Store

	// Listen is the address to listen on for clients and peer OSDs;
	// Addr the one advertised in the OSD map (default: the one listened
	// on). Host and Weight place the OSD in the CRUSH hierarchy on its
	// first boot (defaults: this machine's short host name, and "1").
	Listen, Addr string
	Host         string
	Weight       string
	// Mons are the monitors. Required.
	Mons []monc.Addr

	// Auth is "none" (the default) or "cephx". With cephx the OSD logs
	// in as osd.ID with Key, else with the key of the keyring at
	// KeyringPath, else of Data's keyring, and fetches and refreshes
	// the osd service's rotating keys before it starts.
	Auth        string
	Key         *auth.Secret
	KeyringPath string

	// Network carries every connection (default msgr.TCP; the
	// simulator passes its in-memory network). Clock drives the OSD's
	// and the rotating keys' timers (default the real clock).
	Network msgr.Network
	Clock   clock.Clock
	// Logger is the daemon's log (default: discarded); Metrics its
	// Prometheus registry (default: a new one, with the Go runtime's
	// and the process's series), served at MetricsAddr if set.
	Logger      *slog.Logger
	Metrics     *prometheus.Registry
	MetricsAddr string

	// MemoryTarget is the memory the process aims to stay within (Go's
	// soft memory limit; 0 for none). CacheBytes is the memory the
	// store caches in (default a quarter of MemoryTarget, at least 32
	// MiB; 256 MiB without a target). DirectReads reads small blocks
	// with O_DIRECT as well. The cache and direct reads apply to a
	// store opened from Data; the memory target is process-wide (the
	// simulator sets none).
	MemoryTarget uint64
	CacheBytes   uint64
	DirectReads  bool
	// AdaptiveProcs runs the daemon on one scheduler thread while its
	// work is small messages and little CPU (procs.Governor), where the
	// operator has not set GOMAXPROCS. It changes process-wide state:
	// for daemons that own their process only.
	AdaptiveProcs bool

	// Classes are the object classes the OSD runs (default
	// cls.Standard(), the classes Cuttle ships).
	Classes *objclass.Registry

	// The OSD's options, those internal/config's schema says OSDs read
	// (osd_max_backfills, osd_heartbeat_interval, ...), are resolved from
	// their sources, each taking the option from the highest that sets
	// it: the schema's default, the central config the monitors keep
	// (followed while the OSD runs: osdoptions.go), File's sections for
	// the OSD ([osd.N], [osd], [global]; nil for none), Flags, and
	// Overrides. Flags and Overrides map option names to values as the
	// schema parses them; Overrides are what a program embedding the
	// daemon fixes for it (the simulator's and tests' short intervals).
	// A value an option refuses fails StartOSD, as does a name that is
	// not an OSD option.
	File      *config.File
	Flags     map[string]string
	Overrides map[string]string

	// LogEntries bounds each PG's log (default: the OSD's); Seed seeds
	// the OSD's randomness. Passed on to osd.Config unchanged: tests and
	// the simulator set them, they are not options.
	LogEntries int
	Seed       uint64
}

// maxSize bounds the memory sizes OSDConfig takes: 1 PiB.
const maxSize = 1 << 50

// validate checks what needs no I/O and fills in the defaults that do
// not depend on the data directory.
func (cfg OSDConfig) validate() (OSDConfig, error) {
	switch {
	case cfg.Data == "" && cfg.Store == nil:
		return cfg, errors.New("osd: OSDConfig.Data or OSDConfig.Store is required")
	case cfg.Data != "" && cfg.Store != nil:
		return cfg, errors.New("osd: OSDConfig.Data and OSDConfig.Store exclude each other")
	case cfg.Data == "" && cfg.ID < 0:
		return cfg, fmt.Errorf("osd: bad id %d", cfg.ID)
	case len(cfg.Mons) == 0:
		return cfg, errors.New("osd: OSDConfig.Mons is required")
	case cfg.MemoryTarget > maxSize:
		return cfg, fmt.Errorf("osd: memory target %d: more than 1 PiB", cfg.MemoryTarget)
	case cfg.CacheBytes > maxSize:
		return cfg, fmt.Errorf("osd: cache size %d: more than 1 PiB", cfg.CacheBytes)
	case cfg.LogEntries < 0:
		return cfg, fmt.Errorf("osd: negative PG log entries (%d per PG)", cfg.LogEntries)
	}
	if err := checkOptionNames(cfg); err != nil {
		return cfg, err
	}
	switch cfg.Auth {
	case "":
		cfg.Auth = "none"
	case "none", "cephx":
	default:
		return cfg, fmt.Errorf("osd: auth %q (want cephx or none)", cfg.Auth)
	}
	if cfg.Host == "" {
		cfg.Host = shortHostname()
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
	if cfg.Classes == nil {
		cfg.Classes = cls.Standard()
	}
	return cfg, nil
}

// storeCache is the store's cache for a memory target: a quarter of
// it, at least 32 MiB, 256 MiB without a target; or what was asked.
func storeCache(target, asked uint64) uint64 {
	if asked != 0 {
		return asked
	}
	if target == 0 {
		return 256 << 20
	}
	return max(target/4, 32<<20)
}

// tuneGC sets the process's soft memory limit for target, of which the
// store's cache takes cache, and lets the heap grow threefold between
// collections unless the operator set GOGC.
func tuneGC(target, cache uint64) {
	if target == 0 {
		return
	}
	// A soft limit: the garbage collector works harder as the heap
	// nears it. Below it, collections may wait until the heap has
	// grown threefold: an OSD allocates a buffer per large read, and
	// collecting at every doubling cost 15-20% of 4 MiB read
	// throughput (605-623 against 665-765 MB/s here).
	// Pebble's block cache and memtables (half the store's cache)
	// and the staging buffers of large reads live outside the Go
	// heap: the heap gets what is left, so that the process as a
	// whole stays near the target.
	heap := int64(target) - int64(cache/2) - blockstore.StagingBytes
	debug.SetMemoryLimit(max(heap, int64(target/2)))
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(300)
	}
}

// shortHostname is the machine's host name without its domain.
func shortHostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	h, _, _ = strings.Cut(h, ".")
	return h
}

// OSD is a running OSD daemon: the OSD, the store it opened, its cephx,
// its metrics server and the watch of the central config. Close stops
// them in order.
type OSD struct {
	o    *osd.OSD
	name auth.EntityName
	log  *slog.Logger
	// stopWatch stops following the central config; it runs before the
	// OSD is closed.
	stopWatch func()
	// closers run in order after the OSD is closed: the governor, the
	// metrics server, the store, the rotating keys' refresh.
	closers []func() error
}

// StartOSD assembles the OSD of cfg and starts it: it resolves the OSD's
// options from the sources it holds, with cephx gets the osd service's
// rotating keys (trying again until ctx ends: the monitors may not run
// yet), then opens the store, serves the metrics, starts the OSD and
// follows the central config (osdoptions.go). ctx bounds only the start;
// the daemon runs until Close.
// If ctx ends before the OSD has started, the error wraps ctx's.
func StartOSD(ctx context.Context, cfg OSDConfig) (_ *OSD, err error) {
	cfg, err = cfg.validate()
	if err != nil {
		return nil, err
	}
	if cfg.Data != "" {
		id, err := ReadOSDDir(cfg.Data)
		if err != nil {
			return nil, fmt.Errorf("osd: %w", err)
		}
		if cfg.ID >= 0 && cfg.ID != id {
			return nil, fmt.Errorf("osd: %s holds osd.%d, not osd.%d", cfg.Data, id, cfg.ID)
		}
		cfg.ID = id
	}
	d := &OSD{name: auth.EntityName{Type: "osd", ID: fmt.Sprint(cfg.ID)}}
	d.log = cfg.Logger.With("daemon", d.name.String())
	log := d.log
	options, layers, err := osdOptions(cfg, d.name.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	defer func() {
		if err != nil {
			d.closeRest()
		}
	}()
	cache := storeCache(cfg.MemoryTarget, cfg.CacheBytes)
	tuneGC(cfg.MemoryTarget, cache)

	reg := cfg.Metrics
	ocfg := osd.Config{ID: cfg.ID, Network: cfg.Network, Listen: cfg.Listen, Addr: cfg.Addr, Host: cfg.Host, Weight: cfg.Weight,
		Mons: cfg.Mons, Classes: cfg.Classes, Logger: log, Metrics: reg, Clock: cfg.Clock, Seed: cfg.Seed,
		LogEntries: cfg.LogEntries}
	setOSDOptions(&ocfg, options)
	if cfg.Auth == "cephx" {
		secret, err := osdKey(cfg)
		if err != nil {
			return nil, err
		}
		a, err := newOSDAuth(cfg.ID, secret, cfg.Mons, cfg.Network, cfg.Clock, reg, log.WithGroup("auth"))
		if err != nil {
			return nil, err
		}
		// The rotating keys come first: without them no client or peer
		// could be verified. They are refreshed until the daemon closes.
		actx, cancel := context.WithCancel(context.Background())
		d.closers = append(d.closers, func() error { cancel(); return nil })
		if err := a.start(ctx, actx); err != nil {
			return nil, err
		}
		ocfg.MonAuth, ocfg.ServerAuth, ocfg.ClientAuth, ocfg.AuthEvents = a.monHandshake, a.serverHandshake, a.peerHandshake, a.events
	}

	// The governor (run once the OSD has started) also hears of the
	// store's flushes and compactions, and gives them a P of their own.
	var gov *procs.Governor
	if cfg.AdaptiveProcs && procs.Enabled() {
		gov = procs.New(procs.DefaultPolicy())
	}
	// Options read only at start (osd_emulate_device) may be set in the
	// central config too: ask the monitors once, briefly, as the watcher
	// will for the runtime ones; without an answer the local values stand.
	if v, ok := startCentral(ctx, cfg, d.name, ocfg.MonAuth, layers, log); ok {
		options = v
		setOSDOptions(&ocfg, options)
	}
	ocfg.Store = cfg.Store
	if cfg.Data != "" {
		sopts := blockstore.Options{Path: cfg.Data, CacheBytes: int64(cache), DataCacheBytes: options.Size("osd_cache_size"),
			DirectReads: cfg.DirectReads, Logger: log.WithGroup("store")}
		if gov != nil {
			sopts.Background = gov
		}
		st, err := blockstore.Open(sopts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		d.closers = append(d.closers, func() error {
			if err := st.Close(); err != nil {
				return fmt.Errorf("%s: close the store: %w", d.name, err)
			}
			log.Info("store closed")
			return nil
		})
		ocfg.Store = st
		reg.MustRegister(storeMetrics(st)...)
	}
	emulateDevice(&ocfg, options, log)
	if cfg.Data != "" {
		measureLoad(&ocfg) // a real process: its host's /proc (the simulator's OSDs report idle)
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuttle_osd_gomaxprocs",
		Help: "Threads the OSD runs Go code on at once (GOMAXPROCS), as --adaptive-procs sets it."},
		func() float64 { return float64(runtime.GOMAXPROCS(0)) }))

	if cfg.MetricsAddr != "" {
		mctx, cancel := context.WithCancel(context.Background())
		d.closers = append(d.closers, func() error { cancel(); return nil })
		addr, err := metrics.Serve(mctx, cfg.MetricsAddr, reg, log)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		log.Info("serving metrics", "url", "http://"+addr.String()+"/metrics")
	}

	o, err := osd.Start(ctx, ocfg)
	if err != nil {
		return nil, err
	}
	d.o = o
	log.Info("started", "addr", o.Addr(), "host", cfg.Host, "mons", len(cfg.Mons), "auth", cfg.Auth)
	d.stopWatch = watchOSDConfig(o, options, layers, cfg.Clock, log)
	rctx, stop := context.WithCancel(context.Background())
	d.closers = append(d.closers, func() error { stop(); return nil })
	go func() {
		if err := o.WaitUp(rctx); err == nil {
			log.Info("up in the OSD map", "epoch", o.Epoch(), "addr", o.Addr())
		}
	}()
	if gov != nil {
		go gov.Run(rctx, procsInterval, o.Traffic, log)
	}
	return d, nil
}

// osdKey is the OSD's cephx secret: cfg.Key, else osd.ID's in the
// keyring at cfg.KeyringPath, else in Data's keyring.
func osdKey(cfg OSDConfig) (auth.Secret, error) {
	name := auth.EntityName{Type: "osd", ID: fmt.Sprint(cfg.ID)}
	if cfg.Key != nil {
		return *cfg.Key, nil
	}
	path := cfg.KeyringPath
	if path == "" {
		if cfg.Data == "" {
			return auth.Secret{}, fmt.Errorf("%s: auth cephx needs a key, a keyring or a data directory", name)
		}
		path = filepath.Join(cfg.Data, KeyringFile)
	}
	kr, err := auth.LoadKeyring(path)
	if err != nil {
		return auth.Secret{}, fmt.Errorf("%s: %w", name, err)
	}
	e, ok := kr[name]
	if !ok {
		return auth.Secret{}, fmt.Errorf("%s: keyring %s has no key for it", name, path)
	}
	return e.Key, nil
}

// OSD returns the running OSD.
func (d *OSD) OSD() *osd.OSD { return d.o }

// Close stops following the central config, stops the OSD and then, in
// order, its governor, its metrics server, the store the daemon opened
// and the rotating keys' refresh. It does not ask the monitors to mark
// the OSD down (MarkDown does): to its peers it looks like a crash.
func (d *OSD) Close() error {
	d.stopWatch()
	start := time.Now()
	if err := d.o.Close(); err != nil {
		d.log.Warn("close", "err", err)
	}
	d.log.Info("OSD closed", "took", time.Since(start))
	return d.closeRest()
}

// closeRest runs the closers, newest first, after the OSD or a failed
// start.
func (d *OSD) closeRest() error {
	var err error
	for i := len(d.closers) - 1; i >= 0; i-- {
		err = errors.Join(err, d.closers[i]())
	}
	d.closers = nil
	return err
}

// markDownWait bounds how long a stopping OSD waits for the monitors to
// mark it down (Ceph's osd_mon_shutdown_timeout is also 5 s): with no
// quorum it stops anyway, and its peers report it.
const markDownWait = 5 * time.Second

// MarkDown asks the monitors to mark the OSD down before it closes, so
// that its PGs move on at once; it gives up after markDownWait.
func (d *OSD) MarkDown() {
	ctx, cancel := context.WithTimeout(context.Background(), markDownWait)
	defer cancel()
	if err := d.o.MarkMeDown(ctx); err != nil {
		d.log.Warn("stopping without being marked down; its peers will report it", "err", err)
		return
	}
	d.log.Info("marked down in the OSD map")
}

// RunOSD runs the OSD of cfg until ctx ends or its store fails. When ctx
// ends it asks the monitors to mark it down and closes everything in
// order; if ctx ends before the OSD has started, it returns nil. A store
// failure is returned once the OSD has stopped.
func RunOSD(ctx context.Context, cfg OSDConfig) (err error) {
	d, err := StartOSD(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			log := cfg.Logger
			if log == nil {
				log = slog.New(slog.DiscardHandler)
			}
			log.Info("stopped before starting", "cause", context.Cause(ctx), "err", err)
			return nil
		}
		return err
	}
	o := d.OSD()
	select {
	case <-ctx.Done():
		d.log.Info("stopping", "cause", context.Cause(ctx))
		d.MarkDown()
	case <-o.Failed():
		d.log.Error("stopping: the store failed", "err", o.FailedErr())
	}
	err = d.Close()
	if ferr := o.FailedErr(); ferr != nil {
		err = errors.Join(fmt.Errorf("%s: the store failed; the OSD stopped after asking to be marked down: %w", d.name, ferr), err)
	}
	return err
}

// procsInterval is the window over which the OSD's procs.Governor judges
// its work (procs.DefaultPolicy counts in these).
const procsInterval = 250 * time.Millisecond

// storeMetrics are the store's record cache series (its hit rate says
// whether the cache size covers the objects in use) and its counters.
func storeMetrics(st *blockstore.Store) []prometheus.Collector {
	series := []struct {
		name, help string
		counter    bool
		value      func(blockstore.CacheStats) float64
	}{
		{"hits_total", "Object record lookups the store's record cache answered.", true,
			func(c blockstore.CacheStats) float64 { return float64(c.Hits) }},
		{"misses_total", "Object record lookups that went to the store's metadata database.", true,
			func(c blockstore.CacheStats) float64 { return float64(c.Misses) }},
		{"records", "Object records (and known absences) in the store's record cache.", false,
			func(c blockstore.CacheStats) float64 { return float64(c.Records) }},
		{"bytes", "Memory the store's record cache holds, as counted against its budget (half of --cache-size).", false,
			func(c blockstore.CacheStats) float64 { return float64(c.Bytes) }},
	}
	var cs []prometheus.Collector
	for _, x := range series {
		name, value := "cuttle_osd_store_record_cache_"+x.name, func() float64 { return x.value(st.CacheStats()) }
		if x.counter {
			cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: x.help}, value))
		} else {
			cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: x.help}, value))
		}
	}
	for i, c := range st.Counters() {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cuttle_osd_store_" + c.Name + "_total", Help: c.Help},
			func() float64 { return float64(st.Counters()[i].Value) }))
	}
	return cs
}

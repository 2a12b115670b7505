package cli

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
	"github.com/cuttlestore/cuttle/internal/cls"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/metrics"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/internal/procs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
)

// osdRunFlags are the options of osd run.
type osdRunFlags struct {
	options       map[string]string // options of the schema given as flags (osdoptions.go)
	id            int               // -1: the data directory's
	data          string
	listen        string
	addr          string
	host          string
	weight        string
	cache         string
	memTarget     string
	directReads   bool
	adaptiveProcs bool
	metricsAddr   string
	logLevel      string
}

func osdRunCommand(cf *clusterFlags) *cobra.Command {
	f := osdRunFlags{id: -1, options: map[string]string{}}
	c := &cobra.Command{
		Use:   "run --data DIR [--listen 127.0.0.1:0] [--host H] [--metrics-addr ADDR]",
		Short: "Run an OSD daemon in the foreground",
		Long: `Run the OSD whose data directory (made by cuttle osd mkfs) is DIR: open its
store, log in to the monitors as osd.N (mon_host and auth from --conf; the key
from DIR/keyring unless --keyring names another), listen for clients and peer
OSDs, and boot: the monitors mark it up at its address, under host H in the
CRUSH hierarchy the first time. SIGTERM or SIGINT stops it cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
				return fmt.Errorf("osd run: --log-level: %w", err)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			return runOSDDaemon(cmd.Context(), cf, f, log)
		},
	}
	fl := c.Flags()
	fl.IntVar(&f.id, "id", -1, "the OSD's id; checked against the data directory's (default: the directory's)")
	fl.StringVar(&f.data, "data", "", "the OSD's data directory (required)")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:0", "address to listen on for clients and peer OSDs")
	fl.StringVar(&f.addr, "public-addr", "", "address to advertise in the OSD map (default: the one listened on)")
	fl.StringVar(&f.host, "host", "", "the CRUSH host bucket to place the OSD under on its first boot (default: this machine's short host name)")
	fl.StringVar(&f.weight, "weight", "1", "the OSD's CRUSH weight on its first boot")
	fl.StringVar(&f.cache, "cache-size", "", "memory the object store caches in (default: a quarter of --memory-target)")
	fl.StringVar(&f.memTarget, "memory-target", "256M", "memory the OSD process aims to stay within (Go's soft memory limit; 0 for none)")
	fl.BoolVar(&f.directReads, "direct-reads", false, "read small blocks from the device with O_DIRECT too, never through the kernel's page cache")
	fl.BoolVar(&f.adaptiveProcs, "adaptive-procs", true, "run on one scheduler thread (GOMAXPROCS 1) while the OSD serves small ops with little CPU, on all of them otherwise; off when GOMAXPROCS is set")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (default: off)")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	addOptionFlags(fl, "osd", f.options)
	return c
}

// osdDaemonConf is what an OSD reads from the configuration file.
type osdDaemonConf struct {
	mons []monc.Addr
	auth string
	file *config.File // nil without one
}

// loadOSDConf reads the monitors and the auth mode for entity from the
// configuration file (the --mon-host flag wins).
func loadOSDConf(cf *clusterFlags, entity string) (osdDaemonConf, error) {
	hosts, mode := cf.monHost, "none"
	conf, err := cf.loadConf()
	if err != nil {
		return osdDaemonConf{}, err
	}
	if conf != nil {
		if hosts == "" {
			hosts, _ = conf.Get(entity, "mon_host")
		}
		if v, ok := conf.Get(entity, "auth"); ok {
			mode = v
		}
	}
	mons, err := monc.ParseHosts(hosts)
	if err != nil {
		return osdDaemonConf{}, err
	}
	switch mode {
	case "none", "cephx":
	default:
		return osdDaemonConf{}, fmt.Errorf("auth %q in %s (want cephx or none)", mode, cf.conf)
	}
	return osdDaemonConf{mons: mons, auth: mode, file: conf}, nil
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

// runOSDDaemon runs the OSD in f.data until ctx ends, then closes the
// OSD and its store.
func runOSDDaemon(ctx context.Context, cf *clusterFlags, f osdRunFlags, log *slog.Logger) (err error) {
	if f.data == "" {
		return errors.New("osd run: --data is required")
	}
	id, err := readOSDDir(f.data)
	if err != nil {
		return fmt.Errorf("osd run: %w", err)
	}
	if f.id >= 0 && int32(f.id) != id {
		return fmt.Errorf("osd run: %s holds osd.%d, not osd.%d", f.data, id, f.id)
	}
	name := auth.EntityName{Type: "osd", ID: fmt.Sprint(id)}
	log = log.With("daemon", name.String())
	conf, err := loadOSDConf(cf, name.String())
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	options, layers, err := osdLocalOptions(conf.file, name.String(), f.options)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	target, err := parseSize(f.memTarget)
	if err != nil || target > 1<<50 {
		return fmt.Errorf("%s: --memory-target %q: want a size such as 1G, or 0", name, f.memTarget)
	}
	cache := max(target/4, 32<<20)
	if target == 0 {
		cache = 256 << 20
	}
	if f.cache != "" {
		cache, err = parseSize(f.cache)
		if err != nil || cache == 0 || cache > 1<<50 {
			return fmt.Errorf("%s: --cache-size %q: want a size such as 256M", name, f.cache)
		}
	}
	if target > 0 {
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
	if f.host == "" {
		f.host = shortHostname()
	}

	reg := metrics.NewRegistry()
	cfg := osd.Config{ID: id, Network: &msgr.TCP{}, Listen: f.listen, Addr: f.addr, Host: f.host, Weight: f.weight,
		Mons: conf.mons, Classes: cls.Standard(), Logger: log, Metrics: reg}
	setOSDOptions(&cfg, options)
	if conf.auth == "cephx" {
		a, err := osdCephx(cf, f.data, id, conf.mons, reg, log)
		if err != nil {
			return err
		}
		// The rotating keys come first: without them no client or peer
		// could be verified.
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		if err := a.start(actx); err != nil {
			if ctx.Err() != nil {
				log.Info("stopped before starting", "cause", context.Cause(ctx))
				return nil
			}
			return err
		}
		cfg.MonAuth, cfg.ServerAuth, cfg.ClientAuth, cfg.AuthEvents = a.monHandshake, a.serverHandshake, a.peerHandshake, a.events
	}

	sopts := blockstore.Options{Path: f.data, CacheBytes: int64(cache), DirectReads: f.directReads, Logger: log.WithGroup("store")}
	// The governor (run once the OSD has started) also hears of the
	// store's flushes and compactions, and gives them a P of their own.
	var gov *procs.Governor
	if f.adaptiveProcs && procs.Enabled() {
		gov = procs.New(procs.DefaultPolicy())
		sopts.Background = gov
	}
	st, err := blockstore.Open(sopts)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer func() {
		if cerr := st.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("%s: close the store: %w", name, cerr))
		} else {
			log.Info("store closed")
		}
	}()
	cfg.Store = st
	reg.MustRegister(storeMetrics(st)...)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuttle_osd_gomaxprocs",
		Help: "Threads the OSD runs Go code on at once (GOMAXPROCS), as --adaptive-procs sets it."},
		func() float64 { return float64(runtime.GOMAXPROCS(0)) }))

	if f.metricsAddr != "" {
		mctx, cancel := context.WithCancel(context.Background())
		defer cancel() // after the OSD and its store are closed
		addr, err := metrics.Serve(mctx, f.metricsAddr, reg, log)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		log.Info("serving metrics", "url", "http://"+addr.String()+"/metrics")
	}

	o, err := osd.Start(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			log.Info("stopped before starting", "cause", context.Cause(ctx))
			return nil
		}
		return err
	}
	log.Info("started", "addr", o.Addr(), "host", f.host, "mons", len(conf.mons), "auth", conf.auth)
	stopWatch := watchOSDConfig(ctx, o, options, layers, log)
	go func() {
		if err := o.WaitUp(ctx); err == nil {
			log.Info("up in the OSD map", "epoch", o.Epoch(), "addr", o.Addr())
		}
	}()
	if gov != nil {
		gctx, stop := context.WithCancel(ctx)
		defer stop()
		go gov.Run(gctx, procsInterval, o.Traffic, log)
	}

	select {
	case <-ctx.Done():
		log.Info("stopping", "cause", context.Cause(ctx))
		markDownBeforeStop(o, log)
	case <-o.Failed():
		log.Error("stopping: the store failed", "err", o.FailedErr())
	}
	stopWatch()
	start := time.Now()
	if err := o.Close(); err != nil {
		log.Warn("close", "err", err)
	}
	log.Info("OSD closed", "took", time.Since(start))
	if err := o.FailedErr(); err != nil {
		return fmt.Errorf("%s: the store failed; the OSD stopped after asking to be marked down: %w", name, err)
	}
	return nil
}

// osdCephx loads osd name's key (from --keyring, else DIR/keyring) and
// wires its cephx.
func osdCephx(cf *clusterFlags, data string, id int32, mons []monc.Addr, reg prometheus.Registerer, log *slog.Logger) (*osdAuth, error) {
	name := auth.EntityName{Type: "osd", ID: fmt.Sprint(id)}
	path := cf.keyring
	if path == "" {
		path = filepath.Join(data, keyringFile)
	}
	kr, err := auth.LoadKeyring(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e, ok := kr[name]
	if !ok {
		return nil, fmt.Errorf("%s: keyring %s has no key for it", name, path)
	}
	return newOSDAuth(id, e.Key, mons, reg, log.WithGroup("auth"))
}

// markDownWait bounds how long a stopping OSD waits for the monitors to
// mark it down (Ceph's osd_mon_shutdown_timeout is also 5 s): with no
// quorum it stops anyway, and its peers report it.
const markDownWait = 5 * time.Second

// markDownBeforeStop asks the monitors to mark o down before it closes,
// so that its PGs move on at once.
func markDownBeforeStop(o *osd.OSD, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), markDownWait)
	defer cancel()
	if err := o.MarkMeDown(ctx); err != nil {
		log.Warn("stopping without being marked down; its peers will report it", "err", err)
		return
	}
	log.Info("marked down in the OSD map")
}

// procsInterval is the window over which the OSD's procs.Governor judges
// its work (procs.DefaultPolicy counts in these).
const procsInterval = 250 * time.Millisecond

// storeMetrics are the store's record cache series (its hit rate says
// whether --cache-size covers the objects in use) and its counters.
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

package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/autoscale"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/metrics"
	"github.com/cuttlestore/cuttle/internal/mon"
	"github.com/cuttlestore/cuttle/internal/mon/authmon"
	"github.com/cuttlestore/cuttle/internal/mon/autoscalemon"
	"github.com/cuttlestore/cuttle/internal/mon/balancermon"
	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/mdsmon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/internal/mon/pgmon"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/prometheus/client_golang/prometheus"
)

// MonConfig is what a monitor daemon is assembled from.
type MonConfig struct {
	// Name is the monitor's name in the monitor map ("a" for mon.a).
	// Required.
	Name string
	// Data is the monitor's data directory (MkfsMon's): the monitor map
	// and the auth mode are read from it, the keyring too with cephx,
	// and its store is opened and closed by the daemon.
	Data string
	// Without Data: the monitor map, the auth mode ("none", the
	// default, or "cephx"), with cephx the keys that seed the auth
	// database (they must hold MonKeyName's), and an opened store the
	// daemon does not close: the simulator's.
	MonMap  mon.MonMap
	Auth    string
	Keyring auth.Keyring
	Store   *monstore.Store

	// Network carries every connection (default msgr.TCP; the
	// simulator passes its in-memory network). Clock is the monitor's
	// and its key server's (default the real clock).
	Network msgr.Network
	Clock   clock.Clock
	// Logger is the daemon's log (default: discarded); Metrics its
	// Prometheus registry (default: a new one, with the Go runtime's
	// and the process's series), served at MetricsAddr if set.
	Logger      *slog.Logger
	Metrics     *prometheus.Registry
	MetricsAddr string
	// Seed seeds the messenger's backoff jitter.
	Seed uint64
}

// Mon is a monitor assembled from a MonConfig, ready to run.
type Mon struct {
	m          *mon.Monitor
	cfg        MonConfig
	closeStore func() error // nil for a store the caller owns
}

// NewMon assembles the monitor of cfg: it reads the data directory and
// opens the store if cfg.Data is set, and builds the services
// (monServices, then the auth database) and, with cephx, authentication.
func NewMon(cfg MonConfig) (_ *Mon, err error) {
	if cfg.Name == "" {
		return nil, errors.New("mon: MonConfig.Name is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Network == nil {
		cfg.Network = &msgr.TCP{}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.NewRegistry()
	}
	d := &Mon{cfg: cfg}
	log := cfg.Logger
	if cfg.Data != "" {
		if cfg.Store != nil {
			return nil, errors.New("mon: MonConfig.Data and MonConfig.Store exclude each other")
		}
		if cfg.MonMap, cfg.Auth, err = ReadMonDir(cfg.Data); err != nil {
			return nil, err
		}
		if cfg.Auth == "cephx" {
			if cfg.Keyring, err = auth.LoadKeyring(filepath.Join(cfg.Data, KeyringFile)); err != nil {
				return nil, fmt.Errorf("mon.%s: %w", cfg.Name, err)
			}
		}
		st, err := monstore.Open(monstore.Options{FS: vfs.Default, Dir: filepath.Join(cfg.Data, monStoreDir), Logger: log.WithGroup("store")})
		if err != nil {
			return nil, fmt.Errorf("mon.%s: %w", cfg.Name, err)
		}
		cfg.Store, d.closeStore = st, st.Close
		defer func() {
			if err != nil {
				st.Close()
			}
		}()
	}
	if cfg.Store == nil {
		return nil, errors.New("mon: MonConfig.Data or MonConfig.Store is required")
	}
	services, bootstrap, err := monServices(cfg.MonMap.FSID, log)
	if err != nil {
		return nil, err
	}
	mcfg := mon.Config{Name: cfg.Name, MonMap: cfg.MonMap, Store: cfg.Store, Services: services, Bootstrap: bootstrap,
		Network: cfg.Network, Clock: cfg.Clock, Logger: log, Metrics: cfg.Metrics, Seed: cfg.Seed}
	switch cfg.Auth {
	case "", "none":
		svc, err := authmon.New(authmon.Config{Logger: log})
		if err != nil {
			return nil, err
		}
		mcfg.Services = append(mcfg.Services, svc)
	case "cephx":
		if err := monAuth(&mcfg, cfg.Keyring, cfg.Clock, cfg.Metrics, log); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("mon.%s: auth %q (want cephx or none)", cfg.Name, cfg.Auth)
	}
	d.m, err = mon.New(mcfg)
	if err != nil {
		return nil, err
	}
	d.cfg = cfg
	return d, nil
}

// Monitor returns the assembled monitor.
func (d *Mon) Monitor() *mon.Monitor { return d.m }

// Run serves the metrics if MetricsAddr is set and runs the monitor until
// ctx ends; then it closes the store it opened.
func (d *Mon) Run(ctx context.Context) (err error) {
	if d.closeStore != nil {
		defer func() { err = errors.Join(err, d.closeStore()) }()
	}
	if d.cfg.MetricsAddr != "" {
		addr, err := metrics.Serve(ctx, d.cfg.MetricsAddr, d.cfg.Metrics, d.cfg.Logger)
		if err != nil {
			return err
		}
		d.cfg.Logger.Info("serving metrics", "url", "http://"+addr.String()+"/metrics")
	}
	return d.m.Run(ctx)
}

// RunMon assembles the monitor of cfg and runs it until ctx ends.
func RunMon(ctx context.Context, cfg MonConfig) error {
	d, err := NewMon(cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}

// monServices are the replicated services every monitor runs, in the
// order commands are offered to them (the auth database comes last, added
// by NewMon for the auth mode), and the commands that create a new
// cluster's state: the first OSD map, with an empty hierarchy under root
// "default" and the rule replicated_rule. The PG statistics, the
// balancer, the autoscaler and the MDS map read the OSD map as applied;
// the autoscaler reads the PG statistics' usage too, the MDS map their
// object counts. This is the one list: `cuttle mon run` and the
// simulator both assemble monitors through NewMon.
func monServices(fsid string, log *slog.Logger) ([]moncmd.Service, []moncmd.Command, error) {
	conf := configmon.New(log.WithGroup("config"))
	osd, err := osdmon.New(osdmon.Config{Options: conf.View("mon"), Logger: log.WithGroup("osdmap")})
	if err != nil {
		return nil, nil, err
	}
	pgs := pgmon.New(pgmon.Config{Map: osd.Map, Logger: log.WithGroup("pgmap")})
	osd.SetPGStats(pgs) // the pgp_num steps wait on the PG statistics
	bal := balancermon.New(balancermon.Config{Map: osd.Map, Options: conf.View("mon"), Unclean: pgs.UncleanRatio,
		Logger: log.WithGroup("balancer")})
	// The OSDs merge PGs (osdmon's pgmerge.go), so the autoscaler may
	// shrink a pool in mode on.
	scaler := autoscalemon.New(autoscalemon.Config{Map: osd.Map, Options: conf.View("mon"), CanShrink: true,
		Usage: func() autoscale.Usage {
			return autoscale.Usage{Stored: pgs.PoolStored(), Capacity: pgs.OSDCapacity()}
		}, Logger: log.WithGroup("autoscale")})
	mds := mdsmon.New(mdsmon.Config{OSDMap: osd.Map, PoolObjects: pgs.PoolObjects, Options: conf.View("mon"),
		Logger: log.WithGroup("mdsmap")})
	return []moncmd.Service{osd, pgs, bal, scaler, mds, conf}, []moncmd.Command{moncmd.New("osdmap create", "fsid", fsid)}, nil
}

// monKeys is the monitor's key server: the auth database's, where every
// monitor (mon.a, mon.b, ...) authenticates with the shared monitor key.
type monKeys struct{ ks auth.KeyServer }

func (k monKeys) Secret(name auth.EntityName) (auth.Secret, auth.Caps, error) {
	if name.Type == "mon" {
		name = MonKeyName
	}
	return k.ks.Secret(name)
}

// monRotationPeriod is how long each rotating service key seals tickets;
// the Authority and the auth database agree on it.
const monRotationPeriod = time.Hour

// monAuth adds the auth database to a monitor's services and turns on
// authentication: peers authenticate with the keys of the auth database,
// monitors with the shared monitor key, and commands are checked against
// the caller's mon caps. The keyring kr (the data directory's) seeds the
// database at the cluster's first start (the first leader imports it) and
// answers only until then, so the monitors can authenticate to each other
// and elect that leader.
func monAuth(cfg *mon.Config, kr auth.Keyring, clk clock.Clock, reg prometheus.Registerer, log *slog.Logger) error {
	monKey, ok := kr[MonKeyName]
	if !ok {
		return fmt.Errorf("mon.%s: keyring has no %s key", cfg.Name, MonKeyName)
	}
	events := authEvents(reg, log)
	keys := authmon.NewKeyServer(kr)
	authority, err := auth.NewAuthority(auth.AuthorityConfig{Keys: monKeys{keys}, Now: clk.Now, Events: events,
		RotationPeriod: monRotationPeriod})
	if err != nil {
		return err
	}
	svc, err := authmon.New(authmon.Config{Logger: log, Keys: keys, Authority: authority, Seed: kr,
		RotationPeriod: monRotationPeriod})
	if err != nil {
		return fmt.Errorf("mon.%s: %w", cfg.Name, err)
	}
	cfg.Services = append(cfg.Services, svc)
	self := auth.EntityName{Type: "mon", ID: cfg.Name}
	cfg.ServerAuth = authority.NewHandshake
	cfg.ClientAuth = func(auth.EntityName) auth.ClientHandshake {
		return auth.NewMonClient(auth.MonClientConfig{Name: self, Secret: monKey.Key})
	}
	cfg.Authorize = func(peer auth.EntityName, caps auth.Caps, cmd moncmd.Command, write bool) error {
		cc, err := auth.NewCapChecker(peer, caps, events)
		if err != nil {
			return err
		}
		access := auth.AccessRead
		if write {
			access = auth.AccessWrite
		}
		if strings.HasPrefix(cmd.Prefix, "auth ") && cmd.Prefix != "auth get-rotating" {
			// (get-rotating hands a daemon only its own service's
			// keys, sealed with its own secret: reading is enough.)
			// The auth commands read and write secrets: they need x
			// as well, as in Ceph (rx to read, rwx to change).
			access |= auth.AccessRead | auth.AccessExec
		}
		return cc.Check(auth.Request{Service: "mon", Access: access, Command: cmd.Prefix})
	}
	return nil
}

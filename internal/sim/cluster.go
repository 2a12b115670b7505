package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/mon"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/prometheus/client_golang/prometheus"
)

// Options shape a Cluster.
type Options struct {
	Mons int // default 1
	Net  memnet.Config
	// TCP runs the daemons over loopback TCP instead of memnet (for
	// benchmarks, outside synctest), and StoreDir, if set, gives each OSD
	// a blockstore of StoreSize bytes (default 4 GiB, sparse) there
	// instead of a memstore. Without StoreDir, StoreSize is each
	// memstore's capacity (default memstore.DefaultTotal, 1 GiB).
	TCP       bool
	StoreDir  string
	StoreSize uint64
	// LogEntries is each PG log's length (default: the OSD's), short to
	// make returning OSDs need a backfill.
	LogEntries int
	// The fields below set OSD options of the schema over every other
	// source, the central config included (daemon.OSDConfig.Overrides);
	// one left at zero takes the central config's value, else the
	// schema's default.
	//
	// LogEntriesPerOSD is the OSDs' budget of log entries across their
	// PGs (osd_target_pg_log_entries_per_osd).
	LogEntriesPerOSD int
	// ScrubInterval and DeepScrubInterval schedule the OSDs' scrubs
	// (osd_scrub_interval, osd_deep_scrub_interval: a day and a week).
	ScrubInterval, DeepScrubInterval time.Duration
	// RecoveryMaxPGs, RecoveryMaxPushes and RecoverySleep throttle the
	// OSDs' recovery (osd_max_backfills, osd_recovery_max_active,
	// osd_recovery_sleep).
	RecoveryMaxPGs    int
	RecoveryMaxPushes int
	RecoverySleep     time.Duration
	// SnapTrimSleep and SnapTrimsPerPG throttle snap trimming
	// (osd_snap_trim_sleep, osd_pg_max_concurrent_snap_trims).
	SnapTrimSleep  time.Duration
	SnapTrimsPerPG int
	// Cephx runs the cluster with authentication: the monitors serve a
	// keyring with client.admin's and the monitors' keys, each OSD gets
	// its key from the monitors (auth get-or-create, as osd mkfs does)
	// and fetches the rotating keys, and clients log in.
	Cephx bool
}

// Cluster is the daemons of one simulated cluster. Its methods must be
// called from the test's synctest bubble.
type Cluster struct {
	t      testing.TB
	opts   Options
	Net    *memnet.Network
	monmap mon.MonMap
	mons   map[string]*runningMon
	OSDs   map[int32]*OSD
	Mon    *monc.Client // an admin client of the monitors
	// keyring holds client.admin's and the monitors' keys (Cephx only).
	keyring auth.Keyring
}

// adminName is the entity of the cluster's admin client.
var adminName = auth.EntityName{Type: "client", ID: "admin"}

type runningMon struct {
	d      *daemon.Mon
	st     *monstore.Store
	cancel context.CancelFunc
	done   chan error
}

// OSD is one simulated OSD: its store outlives restarts.
type OSD struct {
	ID    int32
	Store objectstore.Store
	Gate  *GatedStore // Store, whose commits a test may hold back
	Host  string
	Addr  string
	D     *osd.OSD // nil while stopped
	// Key is the OSD's cephx key (Cephx only).
	Key auth.Secret
	// Metrics is the running daemon's registry (new at each start).
	Metrics *prometheus.Registry
	// daemon is the running daemon whose OSD D is.
	daemon *daemon.OSD
}

// Logger returns a logger for a daemon: silent unless CUTTLE_TEST_LOG is
// set.
func Logger(name string) *slog.Logger {
	if os.Getenv("CUTTLE_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("daemon", name)
}

// New starts the monitors of a cluster and waits for their quorum.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Mons == 0 {
		opts.Mons = 1
	}
	c := &Cluster{t: t, opts: opts, Net: memnet.New(opts.Net), mons: map[string]*runningMon{}, OSDs: map[int32]*OSD{}}
	c.monmap.FSID = "00000000-0000-4000-8000-00000000c0de"
	if opts.Cephx {
		c.keyring = auth.Keyring{
			adminName:         {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *", "osd": "allow *"}},
			daemon.MonKeyName: {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *"}},
		}
	}
	var addrs []monc.Addr
	for i := range opts.Mons {
		name := string(rune('a' + i))
		addr := name + ":6789"
		if opts.TCP {
			addr = freeAddr(t)
		}
		c.monmap.Mons = append(c.monmap.Mons, mon.MonInfo{Name: name, Addr: addr})
		addrs = append(addrs, monc.Addr{Name: name, Addr: addr})
	}
	for _, mi := range c.monmap.Mons {
		c.startMon(mi.Name)
	}
	mcfg := monc.Config{Mons: addrs, Network: c.network("admin"), Logger: Logger("client.admin")}
	if opts.Cephx {
		mcfg.Name = adminName
		mcfg.ClientAuth = func(auth.EntityName) auth.ClientHandshake {
			return auth.NewMonClient(auth.MonClientConfig{Name: adminName, Secret: c.keyring[adminName].Key})
		}
	}
	client, err := monc.New(mcfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Mon = client
	t.Cleanup(c.Close)
	c.Run("osd stat") // waits for a leader and the first map
	return c
}

func (c *Cluster) startMon(name string) {
	c.t.Helper()
	st, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "/mon"})
	if err != nil {
		c.t.Fatal(err)
	}
	d, err := daemon.NewMon(daemon.MonConfig{Name: name, MonMap: c.monmap, Auth: c.authMode(), Keyring: c.keyring, Store: st,
		Network: c.network(c.monAddr(name)), Logger: Logger("mon." + name)})
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rm := &runningMon{d: d, st: st, cancel: cancel, done: make(chan error, 1)}
	go func() { rm.done <- d.Run(ctx) }()
	c.mons[name] = rm
}

// Run sends a monitor command and fails the test unless it succeeds.
func (c *Cluster) Run(prefix string, kv ...string) wire.Reply {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := c.Mon.Run(ctx, wire.NewCommand(prefix, kv...))
	if err != nil {
		c.t.Fatalf("%s: %v", prefix, err)
	}
	if err := r.Err(); err != nil {
		c.t.Fatalf("%s: %v", prefix, err)
	}
	return r
}

// AddOSD creates OSD id in the map (osd create), makes its store and
// starts it on host.
func (c *Cluster) AddOSD(host string) *OSD {
	c.t.Helper()
	r := c.Run("osd create")
	var id int32
	if _, err := fmt.Sscan(string(r.Text), &id); err != nil {
		c.t.Fatalf("osd create answered %q: %v", r.Text, err)
	}
	s := &GatedStore{Store: c.newStore(id)}
	if err := osd.Mkfs(context.Background(), s, id); err != nil {
		c.t.Fatal(err)
	}
	o := &OSD{ID: id, Store: s, Gate: s, Host: host, Addr: fmt.Sprintf("%s:%d", host, 6800+id)}
	if c.opts.Cephx {
		o.Key = c.newKey(fmt.Sprintf("osd.%d", id), "profile osd", daemon.OSDOSDCaps)
	}
	if c.opts.TCP {
		o.Addr = freeAddr(c.t)
	}
	c.OSDs[id] = o
	c.StartOSD(id)
	return o
}

// StartOSD starts a stopped OSD and waits until the map shows it up.
func (c *Cluster) StartOSD(id int32) {
	c.t.Helper()
	o := c.OSDs[id]
	var mons []monc.Addr
	for _, mi := range c.monmap.Mons {
		mons = append(mons, monc.Addr{Name: mi.Name, Addr: mi.Addr})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := daemon.OSDConfig{ID: id, Store: o.Store, Network: c.network(o.Addr), Listen: o.Addr,
		Host: o.Host, Mons: mons, Logger: Logger(fmt.Sprintf("osd.%d", id)), Seed: uint64(id), LogEntries: c.opts.LogEntries,
		Overrides: c.opts.osdOverrides(), Metrics: prometheus.NewRegistry()}
	o.Metrics = cfg.Metrics
	if c.opts.Cephx {
		cfg.Auth, cfg.Key = "cephx", &o.Key
	}
	d, err := daemon.StartOSD(ctx, cfg)
	if err != nil {
		c.t.Fatalf("osd.%d: %v", id, err)
	}
	o.daemon, o.D = d, d.OSD()
	if err := o.D.WaitUp(ctx); err != nil {
		c.t.Fatal(err)
	}
}

// osdOverrides are the OSD options opts sets, by name: they override
// every other source (config.SourceOverride), the central config
// included; the options it leaves at zero follow the central config.
func (opts Options) osdOverrides() map[string]string {
	set := map[string]string{}
	for _, o := range []struct {
		name  string
		given bool
		value string
	}{
		{"osd_target_pg_log_entries_per_osd", opts.LogEntriesPerOSD != 0, strconv.Itoa(opts.LogEntriesPerOSD)},
		{"osd_scrub_interval", opts.ScrubInterval != 0, opts.ScrubInterval.String()},
		{"osd_deep_scrub_interval", opts.DeepScrubInterval != 0, opts.DeepScrubInterval.String()},
		{"osd_max_backfills", opts.RecoveryMaxPGs != 0, strconv.Itoa(opts.RecoveryMaxPGs)},
		{"osd_recovery_max_active", opts.RecoveryMaxPushes != 0, strconv.Itoa(opts.RecoveryMaxPushes)},
		{"osd_recovery_sleep", opts.RecoverySleep != 0, opts.RecoverySleep.String()},
		{"osd_snap_trim_sleep", opts.SnapTrimSleep != 0, opts.SnapTrimSleep.String()},
		{"osd_pg_max_concurrent_snap_trims", opts.SnapTrimsPerPG != 0, strconv.Itoa(opts.SnapTrimsPerPG)},
	} {
		if o.given {
			set[o.name] = o.value
		}
	}
	return set
}

// StopOSD stops an OSD as a crash would, keeping its store, and marks it
// down in the map so that its PGs move on at once.
func (c *Cluster) StopOSD(id int32) {
	c.t.Helper()
	c.OSDs[id].stop()
	c.Run("osd down", "ids", fmt.Sprint(id))
}

// WaitForEpoch waits until every running OSD has activated epoch.
func (c *Cluster) WaitForEpoch(epoch uint64) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, o := range c.OSDs {
		if o.D == nil {
			continue
		}
		if err := o.D.WaitForEpoch(ctx, epoch); err != nil {
			c.t.Fatal(err)
		}
	}
}

// Close stops every daemon.
func (c *Cluster) Close() {
	for _, o := range c.OSDs {
		o.stop()
		o.Store.Close()
	}
	if c.Mon != nil {
		c.Mon.Close()
	}
	for name, rm := range c.mons {
		rm.cancel()
		<-rm.done
		rm.st.Close()
		delete(c.mons, name)
	}
	c.Net.Close()
}

// network returns the network a daemon at addr uses.
func (c *Cluster) network(addr string) msgr.Network {
	if c.opts.TCP {
		return &msgr.TCP{}
	}
	return c.Net.Host(addr)
}

func (c *Cluster) monAddr(name string) string {
	for _, mi := range c.monmap.Mons {
		if mi.Name == name {
			return mi.Addr
		}
	}
	return ""
}

// newStore makes OSD id's store: a blockstore under StoreDir, else a
// memstore.
func (c *Cluster) newStore(id int32) objectstore.Store {
	if c.opts.StoreDir == "" {
		return memstore.New(memstore.Options{Total: c.opts.StoreSize})
	}
	size := c.opts.StoreSize
	if size == 0 {
		size = 4 << 30
	}
	opts := blockstore.Options{Path: filepath.Join(c.opts.StoreDir, fmt.Sprintf("osd.%d", id)), Size: size, AllocUnit: 4 << 10}
	if err := blockstore.Mkfs(opts); err != nil {
		c.t.Fatal(err)
	}
	s, err := blockstore.Open(opts)
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Map returns the monitors' newest OSD map.
func (c *Cluster) Map() *osdmap.Map {
	c.t.Helper()
	r := c.Run("osd getmap")
	m, err := osdmap.UnmarshalMap(r.Data)
	if err != nil {
		c.t.Fatalf("osd getmap: %v", err)
	}
	return m
}

// Counter returns the value of the counter name in the running OSD id's
// metrics (0 if it has none).
func (c *Cluster) Counter(id int32, name string) float64 {
	c.t.Helper()
	mfs, err := c.OSDs[id].Metrics.Gather()
	if err != nil {
		c.t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// Gauge returns the sum of the series of gauge name in the running OSD
// id's metrics (0 if it has none).
func (c *Cluster) Gauge(id int32, name string) float64 {
	c.t.Helper()
	mfs, err := c.OSDs[id].Metrics.Gather()
	if err != nil {
		c.t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}

// Epoch returns the monitors' newest OSD map epoch.
func (c *Cluster) Epoch() uint64 { return uint64(c.Map().Epoch()) }

// KillOSD stops an OSD as a crash would, without telling the monitors:
// the map still shows it up until it boots again (with a new nonce).
func (c *Cluster) KillOSD(id int32) {
	c.t.Helper()
	c.OSDs[id].stop()
}

// stop closes a running OSD's daemon, as a crash would (without asking
// to be marked down), and keeps its store.
func (o *OSD) stop() {
	if o.daemon != nil {
		o.daemon.Close()
		o.daemon, o.D = nil, nil
	}
}

// authMode is the daemons' auth option.
func (c *Cluster) authMode() string {
	if c.opts.Cephx {
		return "cephx"
	}
	return "none"
}

// newKey makes entity's key at the monitors with mon and osd caps (auth
// get-or-create, as osd mkfs does) and returns it.
func (c *Cluster) newKey(entity, monCaps, osdCaps string) auth.Secret {
	c.t.Helper()
	r := c.Run("auth get-or-create", "entity", entity, "caps.mon", monCaps, "caps.osd", osdCaps)
	var v []struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(r.Data, &v); err != nil || len(v) != 1 {
		c.t.Fatalf("auth get-or-create %s: unexpected reply %q", entity, r.Data)
	}
	key, err := auth.ParseSecret(v[0].Key)
	if err != nil {
		c.t.Fatalf("auth get-or-create %s: %v", entity, err)
	}
	return key
}

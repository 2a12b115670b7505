package daemoncmd

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/monc"
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

// OSDRunCommand is `osd run`: it runs an OSD in the foreground until its
// context ends, with the monitors and auth mode of the configuration
// file cf names.
func OSDRunCommand(cf *clusterconn.Flags) *cobra.Command {
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
			cfg, err := osdConfig(cf, f)
			if err != nil {
				return err
			}
			cfg.Logger = log
			return daemon.RunOSD(cmd.Context(), cfg)
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
func loadOSDConf(cf *clusterconn.Flags, entity string) (osdDaemonConf, error) {
	hosts, mode := cf.MonHost, "none"
	conf, err := cf.LoadConf()
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
		return osdDaemonConf{}, fmt.Errorf("auth %q in %s (want cephx or none)", mode, cf.Conf)
	}
	return osdDaemonConf{mons: mons, auth: mode, file: conf}, nil
}

// osdConfig turns osd run's flags and the configuration file into the
// daemon's config. The data directory is read here too: the OSD's id
// names the entity whose monitors and auth mode the configuration file
// gives. The options of the schema go as they were given, the file's and
// the flags': the daemon resolves them, and resolves them again over the
// central config while the OSD runs.
func osdConfig(cf *clusterconn.Flags, f osdRunFlags) (daemon.OSDConfig, error) {
	if f.data == "" {
		return daemon.OSDConfig{}, errors.New("osd run: --data is required")
	}
	id, err := daemon.ReadOSDDir(f.data)
	if err != nil {
		return daemon.OSDConfig{}, fmt.Errorf("osd run: %w", err)
	}
	if f.id >= 0 && int32(f.id) != id {
		return daemon.OSDConfig{}, fmt.Errorf("osd run: %s holds osd.%d, not osd.%d", f.data, id, f.id)
	}
	name := fmt.Sprintf("osd.%d", id)
	conf, err := loadOSDConf(cf, name)
	if err != nil {
		return daemon.OSDConfig{}, fmt.Errorf("%s: %w", name, err)
	}
	target, err := cmdutil.ParseSize(f.memTarget)
	if err != nil || target > 1<<50 {
		return daemon.OSDConfig{}, fmt.Errorf("%s: --memory-target %q: want a size such as 1G, or 0", name, f.memTarget)
	}
	var cache uint64
	if f.cache != "" {
		cache, err = cmdutil.ParseSize(f.cache)
		if err != nil || cache == 0 || cache > 1<<50 {
			return daemon.OSDConfig{}, fmt.Errorf("%s: --cache-size %q: want a size such as 256M", name, f.cache)
		}
	}
	return daemon.OSDConfig{ID: id, Data: f.data, Listen: f.listen, Addr: f.addr, Host: f.host, Weight: f.weight,
		Mons: conf.mons, Auth: conf.auth, KeyringPath: cf.Keyring, MetricsAddr: f.metricsAddr,
		MemoryTarget: target, CacheBytes: cache, DirectReads: f.directReads, AdaptiveProcs: f.adaptiveProcs,
		File: conf.file, Flags: f.options}, nil
}

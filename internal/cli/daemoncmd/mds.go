package daemoncmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/mds/cacheengine"
	"github.com/cuttlestore/cuttle/internal/mds/server"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// MDSCommands are the MDS daemon's commands in the mds group: mkfs, and
// run with the real engine (cacheengine).
func MDSCommands(cf *clusterconn.Flags, out *cmdutil.Output) []*cobra.Command {
	return []*cobra.Command{MDSMkfsCommand(cf, out), MDSRunCommand(cf, cacheengine.Opener(), cacheengine.Follower())}
}

// mdsMkfsResult is what mds mkfs prints.
type mdsMkfsResult struct {
	Name string `json:"name"`
	Data string `json:"data"`
	Auth string `json:"auth"`
}

// MDSMkfsCommand is `mds mkfs`: it makes an MDS's data directory and,
// with cephx, its key at the monitors.
func MDSMkfsCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var id, data string
	c := &cobra.Command{
		Use:   "mkfs --id NAME --data DIR",
		Short: "Create an MDS daemon's data directory and key",
		Long: `Create the data directory DIR (missing or empty) of the MDS daemon mds.NAME
and, with auth cephx, its key at the monitors (caps mon 'profile mds', osd
'allow rwx', mds 'allow *'), written to DIR/keyring (mode 0600). Then run
the daemon with cuttle mds run --id NAME --data DIR.

It reaches the monitors as the --name entity (default client.admin), which
needs the caps to create keys.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.Timeout)
			defer cancel()
			res, err := mdsMkfs(ctx, cf, id, data)
			if err != nil {
				return err
			}
			return out.Print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "created mds.%s in %s, auth %s\n", res.Name, res.Data, res.Auth)
				return err
			})
		},
	}
	c.Flags().StringVar(&id, "id", "", "the daemon's name: a for mds.a (required)")
	c.Flags().StringVar(&data, "data", "", "the daemon's data directory (required; missing or empty)")
	return c
}

func mdsMkfs(ctx context.Context, cf *clusterconn.Flags, id, data string) (mdsMkfsResult, error) {
	res := mdsMkfsResult{Name: id, Data: data}
	if id == "" || data == "" {
		return res, errors.New("mds mkfs: --id and --data are required (EINVAL)")
	}
	name, err := auth.ParseEntityName("mds." + id)
	if err != nil {
		return res, fmt.Errorf("mds mkfs: --id %q: %w", id, err)
	}
	if err := daemon.CheckOSDDir(data); err != nil {
		return res, fmt.Errorf("mds mkfs: %w", err)
	}
	res.Auth = confAuthMode(cf.Conf, name.String())
	if res.Auth != "cephx" {
		return res, daemon.MkfsMDS(data, name, nil, nil)
	}
	mc, err := cf.MonClient()
	if err != nil {
		return res, fmt.Errorf("mds mkfs: %w", err)
	}
	defer mc.Close()
	r, err := monRun(ctx, mc, wire.NewCommand("auth get-or-create", "entity", name.String(),
		"caps.mon", daemon.MDSMonCaps, "caps.osd", daemon.MDSOSDCaps, "caps.mds", daemon.MDSMDSCaps))
	if err != nil {
		return res, fmt.Errorf("mds mkfs: %w", err)
	}
	var v []struct {
		Entity string            `json:"entity"`
		Key    string            `json:"key"`
		Caps   map[string]string `json:"caps"`
	}
	if err := json.Unmarshal(r.Data, &v); err != nil || len(v) != 1 || v[0].Entity != name.String() {
		return res, fmt.Errorf("mds mkfs: auth get-or-create %s: unexpected reply %q", name, r.Data)
	}
	key, err := auth.ParseSecret(v[0].Key)
	if err != nil {
		return res, fmt.Errorf("mds mkfs: auth get-or-create %s: %w", name, err)
	}
	return res, daemon.MkfsMDS(data, name, &key, auth.Caps(v[0].Caps))
}

// mdsRunFlags are the options of mds run.
type mdsRunFlags struct {
	options     map[string]string
	id, data    string
	listen      string
	addr        string
	joinFS      string
	metricsAddr string
	logLevel    string
}

// MDSRunCommand is `mds run`: it runs an MDS daemon in the foreground,
// serving ranks with the engine open opens, following a rank's journal
// in standby-replay with follow.
func MDSRunCommand(cf *clusterconn.Flags, open server.Opener, follow server.Follower) *cobra.Command {
	f := mdsRunFlags{options: map[string]string{}}
	c := &cobra.Command{
		Use:   "run --id NAME [--data DIR] [--listen 127.0.0.1:0] [--join-fs FS]",
		Short: "Run an MDS daemon in the foreground",
		Long: `Run the MDS daemon mds.NAME: log in to the monitors (mon_host and auth from
--conf or --mon-host; with cephx the key from DIR/keyring, made by cuttle mds
mkfs, unless --keyring names another), listen for file-system clients, and
send beacons. The monitors make it a standby, or give it a rank: it then
fences the rank's previous holder, replays the rank's journal, waits for
the clients to reconnect and serves. SIGTERM or SIGINT stops it cleanly: it
flushes its journal and exits 0; a standby takes the rank over.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
				return fmt.Errorf("mds run: --log-level: %w", err)
			}
			cfg, err := mdsConfig(cf, f)
			if err != nil {
				return err
			}
			cfg.Open, cfg.Follow = open, follow
			cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			return daemon.RunMDS(cmd.Context(), cfg)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.id, "id", "", "the daemon's name: a for mds.a (required)")
	fl.StringVar(&f.data, "data", "", "the daemon's data directory, made by cuttle mds mkfs (its keyring)")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:0", "address to listen on for clients")
	fl.StringVar(&f.addr, "public-addr", "", "address to advertise in the MDS map (default: the one listened on)")
	fl.StringVar(&f.joinFS, "join-fs", "", "the file system this daemon prefers to serve (mds_join_fs)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (default: off)")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	addOptionFlags(fl, "mds", f.options)
	return c
}

// mdsConfig turns mds run's flags and the configuration file into the
// daemon's config.
func mdsConfig(cf *clusterconn.Flags, f mdsRunFlags) (daemon.MDSConfig, error) {
	if f.id == "" {
		return daemon.MDSConfig{}, errors.New("mds run: --id is required (EINVAL)")
	}
	name := "mds." + f.id
	conf, err := loadOSDConf(cf, name)
	if err != nil {
		return daemon.MDSConfig{}, fmt.Errorf("%s: %w", name, err)
	}
	keyring := cf.Keyring
	if keyring == "" && f.data != "" && conf.auth == "cephx" {
		keyring = filepath.Join(f.data, daemon.KeyringFile)
	}
	return daemon.MDSConfig{Name: f.id, Data: f.data, Listen: f.listen, Addr: f.addr, Mons: conf.mons, Auth: conf.auth,
		KeyringPath: keyring, JoinFS: f.joinFS, File: conf.file, Flags: f.options, MetricsAddr: f.metricsAddr}, nil
}

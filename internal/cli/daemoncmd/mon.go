package daemoncmd

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/spf13/cobra"
)

type monMkfsFlags struct {
	id, data, monHost, fsid, authMode, adminKeyring, confOut string
}

// MonMkfsCommand is `mon mkfs`: it creates a monitor's data directory
// for a new cluster and prints through out.
func MonMkfsCommand(out *cmdutil.Output) *cobra.Command {
	var f monMkfsFlags
	c := &cobra.Command{
		Use:   "mkfs",
		Short: "Create a monitor's data directory for a new cluster",
		Long: `Create a monitor's data directory: the monitor map (every monitor of the
cluster, given with --mon-host, the same on each), an empty store, and with
--auth cephx the cluster's keys. Run it once per monitor with its --id; give
every monitor the same --fsid and --admin-keyring (the first mkfs creates the
keyring file if it does not exist, mode 0600).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return monMkfs(f, out) },
	}
	fl := c.Flags()
	fl.StringVar(&f.id, "id", "", "this monitor's name in --mon-host (required)")
	fl.StringVar(&f.data, "data", "", "the monitor's data directory (required; must not hold a store)")
	fl.StringVar(&f.monHost, "mon-host", "", "every monitor as NAME=HOST:PORT,... (required)")
	fl.StringVar(&f.fsid, "fsid", "", "the cluster's id (default: a new random UUID)")
	fl.StringVar(&f.authMode, "auth", "cephx", "authentication: cephx or none")
	fl.StringVar(&f.adminKeyring, "admin-keyring", "", "keyring with client.admin's and the monitors' keys; created if missing (required with --auth cephx)")
	fl.StringVar(&f.confOut, "conf-out", "", "also write a cluster configuration file here")
	return c
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func monMkfs(f monMkfsFlags, out *cmdutil.Output) error {
	if f.id == "" || f.data == "" || f.monHost == "" {
		return errors.New("mon mkfs: --id, --data and --mon-host are required")
	}
	if f.fsid == "" {
		f.fsid = newUUID()
	}
	if f.authMode == "cephx" && f.adminKeyring == "" {
		return errors.New("mon mkfs: --auth cephx needs --admin-keyring")
	}
	mm, err := daemon.MkfsMon(daemon.MonMkfsConfig{ID: f.id, Data: f.data, MonHost: f.monHost, FSID: f.fsid,
		Auth: f.authMode, AdminKeyring: f.adminKeyring})
	if err != nil {
		return err
	}
	if f.confOut != "" {
		conf := config.New()
		conf.Set("global", "fsid", mm.FSID)
		conf.Set("global", "mon_host", mm.String())
		conf.Set("global", "auth", f.authMode)
		if f.adminKeyring != "" {
			abs, _ := filepath.Abs(f.adminKeyring)
			conf.Set("global", "keyring", abs)
		}
		if err := os.WriteFile(f.confOut, conf.Marshal(), 0o644); err != nil {
			return fmt.Errorf("mon mkfs: %w", err)
		}
	}
	res := struct {
		FSID string `json:"fsid"`
		Mon  string `json:"mon"`
		Data string `json:"data"`
	}{mm.FSID, f.id, f.data}
	return out.Print(res, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "created mon.%s of cluster %s in %s\n", f.id, mm.FSID, f.data)
		return err
	})
}

// MonRunCommand is `mon run`: it runs a monitor in the foreground until
// its context ends. It takes no cluster flags: a monitor finds its peers
// and keys in its own data directory.
func MonRunCommand() *cobra.Command {
	var id, data, logLevel, metricsAddr string
	c := &cobra.Command{
		Use:   "run",
		Short: "Run a monitor daemon in the foreground",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id == "" || data == "" {
				return errors.New("mon run: --id and --data are required")
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("mon run: --log-level: %w", err)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			return daemon.RunMon(cmd.Context(), daemon.MonConfig{Name: id, Data: data, Logger: log, MetricsAddr: metricsAddr})
		},
	}
	c.Flags().StringVar(&id, "id", "", "this monitor's name (required)")
	c.Flags().StringVar(&data, "data", "", "the monitor's data directory (required)")
	c.Flags().StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	c.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (default: off)")
	return c
}

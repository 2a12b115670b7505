package cli

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/metrics"
	"github.com/cuttlestore/cuttle/internal/mon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/spf13/cobra"
)

// A monitor's data directory holds:
//
//	monmap    the monitor map: fsid on the first line, NAME=ADDR,... on the second
//	keyring   the cluster's keys the monitor serves (0600; auth cephx only)
//	store/    the monitor store (Raft log, cluster maps)
const (
	monmapFile  = "monmap"
	keyringFile = "keyring"
	storeDir    = "store"
)

func addMonCommands(root *cobra.Command, out *Output, cf *clusterFlags) {
	monCmd := &cobra.Command{Use: "mon", Short: "Create and run monitors; show the monitor map"}
	monCmd.AddCommand(monMkfsCommand(out), monRunCommand(cf),
		monCommand(cf, out, "stat", "Show the monitors, the leader and the quorum", "mon stat", nil),
		monCommand(cf, out, "dump", "Show the monitor map", "mon dump", nil))
	root.AddCommand(monCmd,
		monCommand(cf, out, "status", "Show the cluster's state: health, monitors, OSDs, data and PGs, recovery", "status", nil),
		&cobra.Command{
			Use:   "health [detail]",
			Short: "Show the cluster's health (HEALTH_OK, HEALTH_WARN, HEALTH_ERR) and its checks",
			Args:  cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c := moncmd.New("health")
				if len(args) == 1 {
					if args[0] != "detail" {
						return fmt.Errorf("health: unknown argument %q (want detail)", args[0])
					}
					c.Args["detail"] = "1"
				}
				return runMon(cmd.Context(), cf, out, c)
			},
		})
}

type monMkfsFlags struct {
	id, data, monHost, fsid, authMode, adminKeyring, confOut string
}

func monMkfsCommand(out *Output) *cobra.Command {
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

func monMkfs(f monMkfsFlags, out *Output) error {
	if f.id == "" || f.data == "" || f.monHost == "" {
		return errors.New("mon mkfs: --id, --data and --mon-host are required")
	}
	if f.fsid == "" {
		f.fsid = newUUID()
	}
	mm, err := mon.ParseMonMap(f.fsid, f.monHost)
	if err != nil {
		return err
	}
	if mm.ID(f.id) == 0 {
		return fmt.Errorf("mon mkfs: --id %q is not in --mon-host %s", f.id, mm)
	}
	if _, err := os.Stat(filepath.Join(f.data, monmapFile)); err == nil {
		return fmt.Errorf("mon mkfs: %s already holds a monitor", f.data)
	}
	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return fmt.Errorf("mon mkfs: %w", err)
	}
	switch f.authMode {
	case "none":
	case "cephx":
		if err := mkfsKeys(f); err != nil {
			return err
		}
	default:
		return fmt.Errorf("mon mkfs: --auth %q (want cephx or none)", f.authMode)
	}
	st, err := monstore.Open(monstore.Options{FS: vfs.Default, Dir: filepath.Join(f.data, storeDir)})
	if err != nil {
		return fmt.Errorf("mon mkfs: %w", err)
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("mon mkfs: %w", err)
	}
	text := fmt.Sprintf("%s\n%s\nauth=%s\n", mm.FSID, mm, f.authMode)
	if err := os.WriteFile(filepath.Join(f.data, monmapFile), []byte(text), 0o600); err != nil {
		return fmt.Errorf("mon mkfs: %w", err)
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

// monKeyName is the entity whose key every monitor shares and uses to
// authenticate to the others.
var monKeyName = auth.EntityName{Type: "mon", ID: "*"}

// mkfsKeys creates the admin keyring if missing (client.admin with every
// cap, and the monitors' shared key) and copies it into the monitor's
// data directory as the keys it serves.
func mkfsKeys(f monMkfsFlags) error {
	if f.adminKeyring == "" {
		return errors.New("mon mkfs: --auth cephx needs --admin-keyring")
	}
	kr, err := auth.LoadKeyring(f.adminKeyring)
	if errors.Is(err, os.ErrNotExist) {
		kr = auth.Keyring{
			{Type: "client", ID: "admin"}: {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *", "osd": "allow *", "mds": "allow *", "mgr": "allow *"}},
			monKeyName:                    {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow *"}},
		}
		err = auth.SaveKeyring(f.adminKeyring, kr)
	}
	if err != nil {
		return fmt.Errorf("mon mkfs: admin keyring: %w", err)
	}
	if _, ok := kr[monKeyName]; !ok {
		return fmt.Errorf("mon mkfs: %s has no %s key", f.adminKeyring, monKeyName)
	}
	return auth.SaveKeyring(filepath.Join(f.data, keyringFile), kr)
}

// readMonDir reads a data directory's monitor map and auth mode.
func readMonDir(data string) (mon.MonMap, string, error) {
	b, err := os.ReadFile(filepath.Join(data, monmapFile))
	if err != nil {
		return mon.MonMap{}, "", fmt.Errorf("%s is not a monitor's data directory (run cuttle mon mkfs): %w", data, err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 {
		return mon.MonMap{}, "", fmt.Errorf("%s: malformed", filepath.Join(data, monmapFile))
	}
	mm, err := mon.ParseMonMap(strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1]))
	if err != nil {
		return mon.MonMap{}, "", err
	}
	mode := "none"
	if len(lines) > 2 {
		mode = strings.TrimPrefix(strings.TrimSpace(lines[2]), "auth=")
	}
	return mm, mode, nil
}

func monRunCommand(cf *clusterFlags) *cobra.Command {
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
			return runMonDaemon(cmd, id, data, metricsAddr, log)
		},
	}
	c.Flags().StringVar(&id, "id", "", "this monitor's name (required)")
	c.Flags().StringVar(&data, "data", "", "the monitor's data directory (required)")
	c.Flags().StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	c.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (default: off)")
	return c
}

func runMonDaemon(cmd *cobra.Command, id, data, metricsAddr string, log *slog.Logger) error {
	mm, mode, err := readMonDir(data)
	if err != nil {
		return err
	}
	st, err := monstore.Open(monstore.Options{FS: vfs.Default, Dir: filepath.Join(data, storeDir), Logger: log.WithGroup("store")})
	if err != nil {
		return fmt.Errorf("mon.%s: %w", id, err)
	}
	defer st.Close()
	reg := metrics.NewRegistry()
	services, bootstrap, err := monServices(mm.FSID, log)
	if err != nil {
		return err
	}
	cfg := mon.Config{Name: id, MonMap: mm, Store: st, Services: services, Bootstrap: bootstrap, Network: &msgr.TCP{}, Logger: log, Metrics: reg}
	if err := addAuthService(&cfg, mode, id, data, reg, log); err != nil {
		return err
	}
	if metricsAddr != "" {
		addr, err := metrics.Serve(cmd.Context(), metricsAddr, reg, log)
		if err != nil {
			return err
		}
		log.Info("serving metrics", "url", "http://"+addr.String()+"/metrics")
	}
	m, err := mon.New(cfg)
	if err != nil {
		return err
	}
	return m.Run(cmd.Context())
}

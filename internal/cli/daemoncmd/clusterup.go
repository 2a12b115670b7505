package daemoncmd

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// clusterLauncherFlags are the flags of `cuttle cluster`.
type clusterLauncherFlags struct {
	dir         string
	mons        int
	osds        int
	osdSize     string
	auth        string
	basePort    int
	stopTimeout time.Duration
	// fs makes a new cluster's file system and its MDS daemons.
	fs bool
	// s3 gives a new cluster an S3 gateway and a user.
	s3 bool
	// nbd gives a new cluster an image exported over NBD.
	nbd bool
}

// AddClusterCommands adds `cluster up`, `cluster down` and `cluster
// status` under root: a local cluster of cuttle processes, run through
// internal/launcher, whose results print through out. cf gives up its
// --timeout.
func AddClusterCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags) {
	var f clusterLauncherFlags
	c := &cobra.Command{
		Use:   "cluster",
		Short: "Start, stop and list a local cluster: every daemon a process on this machine",
		Long: `Run a whole cluster on this machine for development and trying Cuttle out.
Each daemon is a cuttle process of its own with its data directory, log file
and metrics port, all under one directory (--dir, default ./.cuttle), which
also holds the cluster configuration file (cuttle.conf) and client.admin's
keyring. A cluster is its monitors and its OSDs (file-backed stores), with
a pool ready for data.`,
	}
	c.PersistentFlags().StringVar(&f.dir, "dir", clusterconn.DefaultClusterDir, "the directory that holds the cluster")
	up := &cobra.Command{
		Use:   "up",
		Short: "Create the cluster if --dir holds none, start what is not running, wait until it is up",
		Long: `Create a cluster in --dir if it holds none: 1, 3 or 5 monitors with cephx
authentication and --osds OSDs (default 3), each with a store of --osd-size
bytes in a sparse file (it takes disk space only as data is written). As all
OSDs run on this machine, the new cluster gets the CRUSH rule replicated_osd
(one copy per OSD rather than per host) and a pool rbd of min(3, OSDs) copies
that uses it.

Then start every daemon that is not running and wait (at most --timeout)
until every monitor answers in a quorum, none is reported down, the first
OSD map exists, every OSD is up in it and every PG is active; print the
cluster's health and how to use it. Daemons keep running after this command
exits; stop them with cuttle cluster down. Running up again restarts only
what has stopped.

With OSDs, a new cluster also gets (unless turned off) a file system (--fs:
mds.a active, mds.b standing by), an S3 gateway (--s3: s3.a, pool
.cuttle.s3, a user admin) and an NBD export (--nbd: nbd.a serving a sparse
10 GiB image rbd/disk0 as disk0). The gateway and the NBD server start once
the rest is up; up prints the gateway's endpoint and the user's keys (the
same keys on every run) and the export's nbd:// address.

Monitors, then OSDs, MDS daemons, the gateway and the NBD server listen on the first free
ports from --base-port (default 7500), their metrics from --base-port+100,
clear of Ceph's 3300, 6789, 6800-7300 and 7480.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			size, err := checkUpFlags(f)
			if err != nil {
				return fmt.Errorf("cluster up: %w; nothing was created", err)
			}
			mons, osds := 0, 0
			if cmd.Flags().Changed("mons") {
				mons = f.mons
			}
			if cmd.Flags().Changed("osds") {
				osds = f.osds
				if osds == 0 {
					osds = launcher.NoOSDs
				}
			}
			return clusterUp(cmd, out, cf, f, mons, osds, size)
		},
	}
	up.Flags().IntVar(&f.mons, "mons", 1, "monitors of a new cluster: 1, 3 or 5")
	up.Flags().IntVar(&f.osds, "osds", launcher.DefaultOSDs, fmt.Sprintf("OSDs of a new cluster: 0 to %d", launcher.MaxOSDs))
	up.Flags().StringVar(&f.osdSize, "osd-size", defaultClusterOSDSize, "each new OSD's store size (a sparse file)")
	up.Flags().StringVar(&f.auth, "auth", "cephx", "authentication of a new cluster: cephx, or none (no keys, no signatures: for benchmarks against a Ceph set up the same way)")
	up.Flags().IntVar(&f.basePort, "base-port", launcher.DefaultBasePort, "first port tried for monitors, then OSDs, then MDS daemons, then the S3 gateway and the NBD server; metrics from base-port+100")
	up.Flags().BoolVar(&f.s3, "s3", true, fmt.Sprintf("give a new cluster with OSDs an S3 gateway, s3.a (pool %s), and a user %s whose keys up prints", s3Pool, s3User))
	up.Flags().BoolVar(&f.nbd, "nbd", true, fmt.Sprintf("give a new cluster with OSDs an image %s/%s (%d GiB, sparse) exported over NBD by nbd.a", nbdPool, nbdImage, nbdImageSize>>30))
	up.Flags().BoolVar(&f.fs, "fs", true, fmt.Sprintf("give a new cluster with OSDs a file system: pools %s and %s, fs new %s, served by mds.a with mds.b standing by", fsMetaPool, fsDataPool, fsName))
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the cluster's daemons (SIGTERM, then SIGKILL after --stop-timeout); data is kept",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return clusterDown(cmd, out, f)
		},
	}
	down.Flags().DurationVar(&f.stopTimeout, "stop-timeout", 10*time.Second, "how long a daemon has to exit after SIGTERM before SIGKILL")
	status := &cobra.Command{
		Use:   "status",
		Short: "List the cluster's daemons: name, state, pid, addresses, log",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return clusterStatus(cmd, out, f)
		},
	}
	c.AddCommand(up, down, status)
	root.AddCommand(c)
}

// Defaults of the local cluster's OSDs and pool.
const (
	// defaultClusterOSDSize is each OSD's store: a sparse file, so it
	// costs disk space only as data is written.
	defaultClusterOSDSize = "16G"
	// clusterRule is the CRUSH rule of a local cluster: one copy per OSD,
	// as every OSD is on this machine (the default rule, one copy per
	// host, could place only one). Ceph's vstart does the same with osd
	// crush chooseleaf type = 0.
	clusterRule = "replicated_osd"
	// clusterPool and clusterPGs are the pool a local cluster starts
	// with.
	clusterPool = "rbd"
	clusterPGs  = 32
	// The file system a local cluster starts with (--fs), its pools and
	// their PGs, and its MDS daemons (one active, one standby).
	fsName      = "cephfs"
	fsMetaPool  = "cephfs_metadata"
	fsDataPool  = "cephfs_data"
	fsMetaPGs   = 16
	fsDataPGs   = 32
	clusterMDSs = 2
	// mountPoint is where the printed mount command mounts it.
	mountPoint = "/mnt/cuttle"
)

// checkUpFlags checks cluster up's flags before anything is created
// (an OSD's store size is otherwise refused only once the monitors run)
// and returns the OSDs' store size.
func checkUpFlags(f clusterLauncherFlags) (uint64, error) {
	switch f.mons {
	case 1, 3, 5:
	default:
		return 0, fmt.Errorf("--mons %d: a cluster has 1, 3 or 5 monitors (an odd number: a majority of 3 survives the loss of one, of 5 the loss of two)", f.mons)
	}
	if f.osds < 0 || f.osds > launcher.MaxOSDs {
		return 0, fmt.Errorf("--osds %d: from 0 (monitors only) to %d", f.osds, launcher.MaxOSDs)
	}
	if f.auth != "cephx" && f.auth != "none" {
		return 0, fmt.Errorf("--auth %q: cephx or none", f.auth)
	}
	if low, high := 1024, 65535-launcher.MetricsOffset-launcher.PortRange; f.basePort < low || f.basePort > high {
		return 0, fmt.Errorf("--base-port %d: from %d to %d (ports below 1024 need root; the daemons take up to base+%d)",
			f.basePort, low, high, launcher.MetricsOffset+launcher.PortRange-1)
	}
	size, err := cmdutil.ParseSize(f.osdSize)
	if err != nil {
		return 0, fmt.Errorf("--osd-size: %w", err)
	}
	if size-size%daemon.OSDAllocUnit < daemon.MinOSDSize {
		return 0, fmt.Errorf("--osd-size %s is too small: an OSD's store takes at least %s (%d allocation units of %s); the default is %s, a sparse file",
			f.osdSize, cmdutil.FormatSize(daemon.MinOSDSize), daemon.MinOSDSize/daemon.OSDAllocUnit, cmdutil.FormatSize(daemon.OSDAllocUnit), defaultClusterOSDSize)
	}
	return size, nil
}

// newLauncher wires the launcher to this binary, to the daemons' mkfs
// and to the monitor client.
func newLauncher(cmd *cobra.Command, f clusterLauncherFlags, probe func(context.Context, *launcher.Cluster) error, osdSize uint64) (*launcher.Launcher, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cluster: find the cuttle binary: %w", err)
	}
	stderr := cmd.ErrOrStderr()
	return launcher.New(launcher.Config{
		Exe: exe,
		Create: func(ctx context.Context, c *launcher.Cluster, d launcher.Daemon) error {
			return createDaemon(ctx, c, d, osdSize)
		},
		Setup:       setupCluster,
		Prepare:     prepareFrontEnds,
		Probe:       probe,
		StopTimeout: f.stopTimeout,
		Events: launcher.Events{
			Created: func(d launcher.Daemon) {
				if d.Data == "" {
					fmt.Fprintf(stderr, "created %s\n", d.Name())
					return
				}
				fmt.Fprintf(stderr, "created %s in %s\n", d.Name(), d.Data)
			},
			Started: func(d launcher.Daemon, pid int) {
				fmt.Fprintf(stderr, "started %s (pid %d) at %s, log %s\n", d.Name(), pid, d.Addr, d.Log)
			},
			Waiting: func(ds []launcher.Daemon, timeout time.Duration) {
				what := "the cluster to be up"
				switch {
				case len(ds) == 0 || ds[len(ds)-1].Kind == launcher.KindMon:
					what = "the monitors"
				case ds[0].Kind.FrontEnd():
					var n []string
					for _, d := range ds {
						n = append(n, d.Name())
					}
					what = strings.Join(n, ", ") + " to answer"
				}
				fmt.Fprintf(stderr, "waiting up to %v for %s...\n", timeout, what)
			},
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// createDaemon makes a daemon's data directory as its mkfs command
// would. A monitor is made before anything runs; an OSD once the
// monitors are up, as client.admin through the cluster's configuration
// file, with a store of osdSize bytes.
func createDaemon(ctx context.Context, c *launcher.Cluster, d launcher.Daemon, osdSize uint64) error {
	switch d.Kind {
	case launcher.KindMon:
		return monMkfs(monMkfsFlags{id: d.ID, data: d.Data, monHost: c.MonHost(), fsid: c.FSID,
			authMode: c.Auth, adminKeyring: c.Keyring, confOut: c.Conf}, &cmdutil.Output{Format: cmdutil.FormatPlain, W: io.Discard})
	case launcher.KindOSD:
		// What an earlier, failed attempt left is the launcher's own;
		// the OSD's uuid is the same on every attempt, so osd create
		// gives the same id again.
		if err := os.RemoveAll(d.Data); err != nil {
			return err
		}
		cf := &clusterconn.Flags{Conf: c.Conf, Name: "client.admin", Timeout: time.Minute}
		res, err := osdMkfs(ctx, cf, osdMkfsFlags{data: d.Data, size: osdSize, id: -1, uuid: nameUUID(c.FSID, d.Name())})
		if err != nil {
			return err
		}
		if fmt.Sprint(res.ID) != d.ID {
			return fmt.Errorf("the monitors gave the OSD id %d, not %s (was an OSD made by hand?)", res.ID, d.ID)
		}
		return nil
	case launcher.KindMDS:
		if err := os.RemoveAll(d.Data); err != nil {
			return err
		}
		cf := &clusterconn.Flags{Conf: c.Conf, Name: "client.admin", Timeout: time.Minute}
		_, err := mdsMkfs(ctx, cf, d.ID, d.Data)
		return err
	case launcher.KindS3, launcher.KindNBD:
		// The gateway keeps everything in its pool, made by the setup;
		// its user, and the NBD server's image, need the OSDs running:
		// prepareFrontEnds makes them.
		return nil
	}
	return fmt.Errorf("cluster: no way to create a %s daemon", d.Kind)
}

// nameUUID is a UUID (in version 4's layout) derived from a cluster's
// fsid and a daemon's name: the same daemon gets the same one.
func nameUUID(fsid, name string) string {
	b := sha256.Sum256([]byte(fsid + "/" + name))
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// setupCluster gives a new local cluster what a single machine needs:
// the CRUSH rule clusterRule; failure reports counted by OSD rather than
// by host (every OSD shares the one host, so counting by host would never
// reach mon_osd_min_down_reporters and a dead OSD would stay up); and, if
// it has OSDs, the pool clusterPool of min(3, OSDs) copies with that
// rule. Either existing already (a setup tried again) is fine.
//
// Pools made later with the defaults (cuttle osd pool create p 8) must
// work too: the default rule, replicated_rule, wants one host per copy
// and would leave their PGs undersized+peered, and their I/O waiting,
// forever. Ceph's vstart builds its first map with osd_crush_chooseleaf_type
// = 0 instead, which changes replicated_rule itself; here the map is made
// by mon mkfs, before any setting exists, and a local cluster should keep
// the same replicated_rule as any other. So the setup names the rule new
// pools get, in the central configuration (osd_pool_default_crush_rule =
// clusterRule), where `cuttle config get` shows it and anyone can change
// it back, and with fewer than three OSDs their copies
// (osd_pool_default_size), which the rule could not place either.
func setupCluster(ctx context.Context, c *launcher.Cluster) error {
	cmds := []wire.Command{
		wire.NewCommand("osd crush rule create-replicated", "name", clusterRule, "root", "default", "type", "osd"),
		wire.NewCommand("config set", "who", "global", "name", "mon_osd_reporter_subtree_level", "value", "osd"),
		wire.NewCommand("config set", "who", "global", "name", "osd_pool_default_crush_rule", "value", clusterRule),
	}
	if n := len(c.OSDs()); n > 0 {
		if n < 3 {
			cmds = append(cmds, wire.NewCommand("config set", "who", "global", "name", "osd_pool_default_size", "value", fmt.Sprint(n)))
		}
		cmds = append(cmds, wire.NewCommand("osd pool create", "pool", clusterPool, "pg_num", fmt.Sprint(clusterPGs),
			"size", fmt.Sprint(min(3, n)), "rule", clusterRule))
		// With --osds 1 one copy is all there can be: confirm size 1.
		cmds[len(cmds)-1].Args["yes_i_really_mean_it"] = fmt.Sprint(n == 1)
		if len(c.MDSs()) > 0 {
			for _, p := range []struct {
				name string
				pgs  int
			}{{fsMetaPool, fsMetaPGs}, {fsDataPool, fsDataPGs}} {
				cmds = append(cmds, wire.NewCommand("osd pool create", "pool", p.name, "pg_num", fmt.Sprint(p.pgs),
					"size", fmt.Sprint(min(3, n)), "rule", clusterRule, "yes_i_really_mean_it", fmt.Sprint(n == 1)))
			}
			cmds = append(cmds, wire.NewCommand("fs new", "fs_name", fsName, "metadata", fsMetaPool, "data", fsDataPool))
		}
		if len(c.S3Gateways()) > 0 {
			cmds = append(cmds, wire.NewCommand("osd pool create", "pool", s3Pool, "pg_num", fmt.Sprint(s3PGs),
				"size", fmt.Sprint(min(3, n)), "rule", clusterRule, "yes_i_really_mean_it", fmt.Sprint(n == 1)))
		}
	}
	f := &clusterconn.Flags{Conf: c.Conf, Name: "client.admin"}
	mc, err := f.MonClient()
	if err != nil {
		return err
	}
	defer mc.Close()
	for _, cmd := range cmds {
		r, err := mc.Run(ctx, cmd)
		if err != nil {
			return err
		}
		if err := r.Err(); err != nil && r.Code != wire.EEXIST {
			return fmt.Errorf("%s: %w", cmd.Prefix, err)
		}
	}
	return nil
}

// downChecks are the health checks that say a daemon of a kind is down,
// or (OSDs) that data is not available yet: a new pool's PGs are unknown
// until their primaries report them, and a restarted OSD's are stale or
// peering for a moment. Up waits until none of them is raised; other
// checks (a pool without enough OSDs, a flag set) are the operator's
// business and do not keep the cluster from counting as up.
func downChecks(k launcher.Kind) []string {
	switch k {
	case launcher.KindMon:
		return []string{"MON_DOWN"}
	case launcher.KindOSD:
		return []string{"OSD_DOWN", "PG_AVAILABILITY"}
	case launcher.KindMDS:
		// No rank up, or one still recovering (replay, reconnect).
		return []string{"MDS_ALL_DOWN", "FS_DEGRADED"}
	}
	return nil
}

// healthProbe returns the launcher's Probe and a function returning the
// last health summary it saw. The probe asks as client.admin, with the
// cluster's configuration file: the cluster is up once every monitor
// answers "mon stat" itself (which it does only in a quorum with a
// leader, caught up), no health check in downChecks for its daemons'
// kinds is raised (so every PG is active), the first OSD map exists and
// every OSD is up in it at its address.
func healthProbe() (probe func(context.Context, *launcher.Cluster) error, last func() string) {
	var summary string // only used on Up's goroutine
	probe = func(ctx context.Context, c *launcher.Cluster) error {
		for _, m := range c.Mons() {
			if _, err := monQuery(ctx, c, m.ID+"="+m.Addr, "mon stat"); err != nil {
				return fmt.Errorf("%s does not answer yet: %w", m.Name(), err)
			}
		}
		r, err := monQuery(ctx, c, "", "health")
		if err != nil {
			return err
		}
		var h struct {
			Checks map[string]struct{} `json:"checks"`
		}
		if err := json.Unmarshal(r.Data, &h); err != nil {
			return fmt.Errorf("health: the monitor's reply is not JSON: %w", err)
		}
		summary = strings.Join(strings.Fields(r.Text), " ")
		kinds := map[launcher.Kind]bool{}
		for _, d := range c.Daemons {
			kinds[d.Kind] = true
		}
		for kind := range kinds {
			for _, code := range downChecks(kind) {
				if _, ok := h.Checks[code]; ok {
					return fmt.Errorf("health: %s", summary)
				}
			}
		}
		r, err = monQuery(ctx, c, "", "osd dump")
		if err != nil {
			return err
		}
		if err := osdsUp(r.Data, c.OSDs()); err != nil {
			return err
		}
		for _, d := range c.S3Gateways() {
			if err := s3Answers(ctx, d); err != nil {
				return err
			}
		}
		for _, d := range c.NBDServers() {
			if err := nbdAnswers(ctx, d); err != nil {
				return err
			}
		}
		return nil
	}
	return probe, func() string { return summary }
}

// osdsUp checks an "osd dump" reply: every OSD of osds must be up at its
// address.
func osdsUp(dump []byte, osds []launcher.Daemon) error {
	var d osdDump
	if err := json.Unmarshal(dump, &d); err != nil {
		return fmt.Errorf("osd dump: the monitor's reply is not JSON: %w", err)
	}
	up := map[string]string{}
	for _, o := range d.OSDs {
		if o.Up {
			up[fmt.Sprint(o.OSD)] = o.Addr
		}
	}
	var down []string
	for _, o := range osds {
		if addr, ok := up[o.ID]; !ok || addr != o.Addr {
			down = append(down, o.Name())
		}
	}
	if len(down) > 0 {
		return fmt.Errorf("%s not up in the OSD map (epoch %d) yet", strings.Join(down, ", "), d.Epoch)
	}
	return nil
}

// monQuery sends a command without arguments to the cluster's monitors
// (or to those of monHost) as client.admin and returns the reply; a
// refusal is an error.
func monQuery(ctx context.Context, c *launcher.Cluster, monHost, prefix string) (wire.Reply, error) {
	f := &clusterconn.Flags{Conf: c.Conf, MonHost: monHost, Name: "client.admin"}
	mc, err := f.MonClient()
	if err != nil {
		return wire.Reply{}, err
	}
	defer mc.Close()
	r, err := mc.Run(ctx, wire.NewCommand(prefix))
	if err != nil {
		return wire.Reply{}, err
	}
	if err := r.Err(); err != nil {
		return wire.Reply{}, fmt.Errorf("%s: %w", prefix, err)
	}
	return r, nil
}

// clusterReport is what `cluster up` and `cluster status` print.
type clusterReport struct {
	FSID    string            `json:"fsid"`
	Dir     string            `json:"dir"`
	Conf    string            `json:"conf"`
	Keyring string            `json:"keyring"`
	Daemons []launcher.Status `json:"daemons"`
	// Health is the cluster's health when up returned (cluster up only).
	Health string `json:"health,omitempty"`
	// S3 is the S3 gateway's endpoint and user (cluster up only).
	S3 *s3Report `json:"s3,omitempty"`
	// NBD is the NBD export (cluster up only).
	NBD *nbdReport `json:"nbd,omitempty"`
}

// noProbe is the Probe of commands that never wait for health.
func noProbe(context.Context, *launcher.Cluster) error { return nil }

func report(c *launcher.Cluster, st []launcher.Status) clusterReport {
	return clusterReport{FSID: c.FSID, Dir: c.Dir, Conf: c.Conf, Keyring: c.Keyring, Daemons: st}
}

func clusterUp(cmd *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags, f clusterLauncherFlags, mons, osds int, osdSize uint64) error {
	probe, health := healthProbe()
	mdss := 0
	if f.fs && osds != launcher.NoOSDs {
		mdss = clusterMDSs
	}
	gateway := f.s3 && osds != launcher.NoOSDs
	nbdImageSpec := ""
	if f.nbd && osds != launcher.NoOSDs {
		nbdImageSpec = nbdPool + "/" + nbdImage
	}
	l, err := newLauncher(cmd, f, probe, osdSize)
	if err != nil {
		return err
	}
	c, st, err := l.Up(cmd.Context(), launcher.UpOptions{
		Options: launcher.Options{Dir: f.dir, Mons: mons, OSDs: osds, BasePort: f.basePort, Auth: f.auth, MDSs: mdss, S3: gateway, NBD: nbdImageSpec},
		Wait:    cf.Timeout,
	})
	if err != nil {
		return fmt.Errorf("cluster up: %w", err)
	}
	rep := report(c, st)
	rep.Health = health()
	if rep.S3, err = s3Info(cmd.Context(), c); err != nil {
		return fmt.Errorf("cluster up: the cluster is up, but %w", err)
	}
	rep.NBD = nbdInfo(c)
	self := displayExe()
	return out.Print(rep, func(w io.Writer) error {
		fmt.Fprintf(w, "Cuttle cluster %s is up in %s\nhealth: %s\n\n", c.FSID, c.Dir, rep.Health)
		if err := printDaemons(w, st); err != nil {
			return err
		}
		_, err := io.WriteString(w, nextSteps(c, f.dir, self, rep.S3, rep.NBD))
		return err
	})
}

// nextSteps is what `cluster up` tells people to do next, with self the
// command that runs this binary, s3 the gateway's endpoint and user and
// nbd the NBD export (nil: none).
func nextSteps(c *launcher.Cluster, dir, self string, s3 *s3Report, nbd *nbdReport) string {
	dirFlag, where, mk := "", "Commands here read "+clusterconn.DefaultConfPath+"; from elsewhere, export it first:", [2]string{" (make stop)", " (make run)"}
	if dir != clusterconn.DefaultClusterDir {
		dirFlag, where, mk = " --dir "+dir, "Commands find it after this export:", [2]string{}
	}
	steps := [][2]string{
		{self + " status", "health, monitors, OSDs, PGs"},
		{self + " osd tree", "the OSDs in the CRUSH hierarchy"},
		{self + " osd pool ls detail", "pools: " + clusterPool + " is ready for data"},
		{self + " cluster status" + dirFlag, "the daemons: pids, addresses, logs"},
	}
	if len(c.OSDs()) == 0 {
		steps[1] = [2]string{self + " osd pool create " + clusterPool + " 32", ""}
	}
	if len(c.MDSs()) > 0 {
		steps = append(steps, [2]string{self + " fs status", "file system " + fsName + ": its ranks and MDS daemons"},
			[2]string{self + " mount " + mountPoint, "mount it (FUSE; the directory must exist)"})
	}
	width := 0
	for _, s := range steps {
		if s[1] != "" {
			width = max(width, len(s[0]))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nclient.admin's key: %s\n%s\n  export CUTTLE_CONF=%s\n", c.Keyring, where, c.Conf)
	for _, s := range steps {
		if s[1] == "" {
			fmt.Fprintf(&b, "  %s\n", s[0])
		} else {
			fmt.Fprintf(&b, "  %-*s  # %s\n", width, s[0], s[1])
		}
	}
	if s3 != nil {
		b.WriteString(s3Steps(s3, self))
	}
	if nbd != nil {
		b.WriteString(nbdSteps(nbd))
	}
	fmt.Fprintf(&b, `
Stop it with %[1]s cluster down%[2]s%[3]s; data and logs stay in
%[5]s and %[1]s cluster up%[2]s%[4]s starts it again.
Remove %[5]s to start afresh.
`, self, dirFlag, mk[0], mk[1], dir)
	if n := len(c.OSDs()); n > 0 {
		fmt.Fprintf(&b, `The %d OSDs all run on this machine, so pool %s keeps %d copies with
CRUSH rule %s: one per OSD, not one per host; new pools get that
rule too (osd_pool_default_crush_rule).
`, n, clusterPool, min(3, n), clusterRule)
	}
	return b.String()
}

func clusterStatus(cmd *cobra.Command, out *cmdutil.Output, f clusterLauncherFlags) error {
	l, err := newLauncher(cmd, f, noProbe, 0)
	if err != nil {
		return err
	}
	c, st, err := l.Status(f.dir)
	if err != nil {
		return launcherError("cluster status", f.dir, err)
	}
	return out.Print(report(c, st), func(w io.Writer) error {
		fmt.Fprintf(w, "cluster %s in %s\n", c.FSID, c.Dir)
		return printDaemons(w, st)
	})
}

func printDaemons(w io.Writer, st []launcher.Status) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tPID\tADDRESS\tMETRICS\tLOG")
	for _, s := range st {
		pid := "-"
		if s.PID != 0 {
			pid = fmt.Sprint(s.PID)
		}
		metrics := "-"
		if s.MetricsAddr != "" {
			metrics = "http://" + s.MetricsAddr + "/metrics"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.State, pid, s.Addr, metrics, s.Log)
	}
	return tw.Flush()
}

func clusterDown(cmd *cobra.Command, out *cmdutil.Output, f clusterLauncherFlags) error {
	l, err := newLauncher(cmd, f, noProbe, 0)
	if err != nil {
		return err
	}
	stops, err := l.Down(cmd.Context(), f.dir)
	if stops == nil && err != nil {
		return launcherError("cluster down", f.dir, err)
	}
	if perr := out.Print(stops, func(w io.Writer) error {
		for _, s := range stops {
			switch s.Result {
			case "not running":
				fmt.Fprintf(w, "%s was not running\n", s.Name)
			case "killed":
				fmt.Fprintf(w, "killed %s (pid %d): it did not exit within %v of SIGTERM\n", s.Name, s.PID, f.stopTimeout)
			default:
				fmt.Fprintf(w, "%s %s (pid %d)\n", s.Result, s.Name, s.PID)
			}
		}
		return nil
	}); perr != nil {
		return perr
	}
	if err != nil {
		return launcherError("cluster down", f.dir, err)
	}
	return nil
}

// launcherError names the cluster command that failed in front of a
// launcher error, telling a directory without a cluster in the CLI's
// words rather than through the launcher's package prefix.
func launcherError(name, dir string, err error) error {
	if errors.Is(err, launcher.ErrNoCluster) {
		err = clusterconn.Shown(fmt.Sprintf("no cluster in %s (start one with cuttle cluster up)", dir), err)
	}
	return clusterconn.Named(name, err)
}

// displayExe is how to run this binary from the current directory: a
// relative path below it (bin/cuttle), else the absolute path.
func displayExe() string {
	exe, err := os.Executable()
	if err != nil {
		return "cuttle"
	}
	wd, err := os.Getwd()
	if err != nil {
		return exe
	}
	if rel, err := filepath.Rel(wd, exe); err == nil && !strings.HasPrefix(rel, "..") {
		if !strings.Contains(rel, string(filepath.Separator)) {
			rel = "." + string(filepath.Separator) + rel
		}
		return rel
	}
	return exe
}

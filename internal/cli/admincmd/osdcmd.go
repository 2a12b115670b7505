package admincmd

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// AddOSDCommands adds "cuttle osd": the OSD map the monitors keep —
// OSDs, flags, pools and the CRUSH hierarchy (MONITOR-COMMANDS.md lists
// each command's arguments and output) — with the daemon's commands the
// caller gives (osd mkfs, osd run).
func AddOSDCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags, daemon ...*cobra.Command) {
	mc := func(use, short, prefix string, args []string, flags ...string) *cobra.Command {
		return clusterconn.MonCommand(cf, out, use, short, prefix, args, flags...)
	}
	osd := &cobra.Command{Use: "osd", Short: "Create and run OSDs; show and change OSDs, pools and the CRUSH hierarchy in the cluster's OSD map"}
	osd.AddCommand(
		mc("dump [EPOCH]", "Show the OSD map: epoch, flags, pools, OSDs", "osd dump", []string{"?epoch"}),
		mc("tree", "Show the CRUSH hierarchy with OSD states and weights", "osd tree", nil),
		mc("stat", "Count OSDs up and in", "osd stat", nil),
		mc("df", "Show each OSD's space: size, use, variance from the average, PG copies", "osd df", nil),
		mc("ls", "List OSD ids", "osd ls", nil),
		mc("find ID", "Show where an OSD is: address and CRUSH location", "osd find", []string{"id"}),
		osdGetmapCommand(cf),
		mc("create [UUID]", "Allocate an OSD id (the same one again for the same UUID)", "osd create", []string{"?uuid"}),
		mc("down ID...", "Mark OSDs down", "osd down", []string{"ids..."}),
		mc("out ID...", "Mark OSDs out: their data moves elsewhere", "osd out", []string{"ids..."}),
		mc("in ID...", "Mark OSDs in", "osd in", []string{"ids..."}),
		mc("rm ID...", "Remove OSDs that are down, from the map and the CRUSH hierarchy", "osd rm", []string{"ids..."}),
		osdLostCommand(cf, out),
		mc("reweight ID WEIGHT", "Set an OSD's in-weight, 0 to 1", "osd reweight", []string{"id", "weight"}),
		mc("set FLAG", "Set a cluster flag: noout, noup, nodown, noin, pause, ...", "osd set", []string{"key"}),
		mc("unset FLAG", "Clear a cluster flag", "osd unset", []string{"key"}),
		mc("set-full-ratio RATIO", "Set the used fraction (0 to 1] at which OSDs are marked full and their pools refuse writes", "osd set-full-ratio", []string{"ratio"}),
		mc("set-backfillfull-ratio RATIO", "Set the used fraction (0 to 1] at which OSDs receive no backfill", "osd set-backfillfull-ratio", []string{"ratio"}),
		mc("set-nearfull-ratio RATIO", "Set the used fraction (0 to 1] at which OSDs are reported nearfull", "osd set-nearfull-ratio", []string{"ratio"}),
		mc("pg-upmap-items PGID FROM TO [FROM TO...]", "Map a PG's copies off CRUSH's choice: each OSD FROM is replaced by TO (checked against the pool's rule)", "osd pg-upmap-items", []string{"pgid", "mappings..."}),
		mc("rm-pg-upmap-items PGID", "Remove a PG's pg_upmap_items: it goes back to CRUSH's choice", "osd rm-pg-upmap-items", []string{"pgid"}),
		osdPoolCommands(cf, out, mc),
		osdCrushCommands(cf, out, mc),
		osdBlocklistCommands(mc),
	)
	osd.AddCommand(daemon...)
	root.AddCommand(osd)
}

// osdLostCommand is "osd lost ID --yes-i-really-mean-it".
func osdLostCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use: "lost ID --yes-i-really-mean-it",
		Short: "Declare a down OSD lost for good: PGs waiting for it go active without it, giving up what only it held " +
			"(start it again instead if its disk survives)",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := wire.NewCommand("osd lost", "id", args[0])
			if yes {
				c.Args["yes_i_really_mean_it"] = "true"
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, c)
		},
	}
	c.Flags().BoolVar(&yes, sureFlag, false, "confirm giving up what only the OSD held")
	return c
}

type mcFunc func(use, short, prefix string, args []string, flags ...string) *cobra.Command

func osdPoolCommands(cf *clusterconn.Flags, out *cmdutil.Output, mc mcFunc) *cobra.Command {
	pool := &cobra.Command{Use: "pool", Short: "Create, list, change and delete pools"}
	var yes bool
	rm := &cobra.Command{
		Use:   "rm POOL POOL --yes-i-really-really-mean-it",
		Short: "Delete a pool and all its data (the name twice, the flag, and mon_allow_pool_delete=true)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := wire.NewCommand("osd pool rm", "pool", args[0], "pool2", args[1])
			if yes {
				c.Args["yes_i_really_really_mean_it"] = "true"
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, c)
		},
	}
	rm.Flags().BoolVar(&yes, "yes-i-really-really-mean-it", false, "confirm deleting the pool's data")
	pool.AddCommand(
		poolCreateCommand(cf, out),
		mc("ls [detail]", "List pools", "osd pool ls", []string{"?detail"}),
		mc("get POOL VAR", "Show a pool setting: size, min_size, pg_num, pgp_num, pg_num_target, pgp_num_target, crush_rule, "+
			"pg_autoscale_mode, target_size_bytes, target_size_ratio, pg_autoscale_bias or all", "osd pool get", []string{"pool", "var"}),
		mc("autoscale-status", "Show each pool's data, targets and the pg_num the autoscaler suggests (NEW PG_NUM when pg_num is "+
			"more than pg_autoscaler_threshold off it) and its pg_autoscale_mode", "osd pool autoscale-status", nil),
		poolSetCommand(cf, out),
		mc("rename OLD NEW", "Rename a pool", "osd pool rename", []string{"srcpool", "destpool"}),
		rm,
		mc("mksnap POOL SNAP", "Make a pool snapshot (not for pools whose clients manage snapshots)", "osd pool mksnap", []string{"pool", "snap"}),
		mc("rmsnap POOL SNAP", "Remove a pool snapshot; the OSDs then free what only it kept", "osd pool rmsnap", []string{"pool", "snap"}),
		mc("lssnap POOL", "List a pool's snapshots: id, name, creation time", "osd pool lssnap", []string{"pool"}),
	)
	return pool
}

// sureFlag is the flag that confirms a pool keeping too few copies (the
// monitors' yes_i_really_mean_it).
const sureFlag = "yes-i-really-mean-it"

// poolCreateCommand is "cuttle osd pool create".
func poolCreateCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var size, minSize, rule, mode string
	var sure bool
	c := &cobra.Command{
		Use:   "create POOL [PG_NUM [PGP_NUM]]",
		Short: "Create a replicated pool",
		Long: "Create a replicated pool of PG_NUM placement groups (default osd_pool_default_pg_num, 32).\n" +
			"PG_NUM can grow later (cuttle osd pool set POOL pg_num N: the OSDs split the PGs) but not shrink.\n" +
			"The monitors refuse more PG copies than mon_max_pg_per_osd (250) per in OSD, and warn\n" +
			"when the CRUSH rule cannot place SIZE copies on the OSDs there are.",
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			wc := wire.NewCommand("osd pool create", "pool", args[0])
			for i, name := range []string{"pg_num", "pgp_num"} {
				if len(args) > i+1 {
					wc.Args[name] = args[i+1]
				}
			}
			for name, v := range map[string]string{"size": size, "min_size": minSize, "rule": rule, "autoscale_mode": mode} {
				if v != "" {
					wc.Args[name] = v
				}
			}
			if sure {
				wc.Args["yes_i_really_mean_it"] = "true"
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, wc)
		},
	}
	f := c.Flags()
	f.StringVar(&size, "size", "", "copies of each object, `N` from 1 to 10 (default osd_pool_default_size, 3)")
	f.StringVar(&minSize, "min-size", "", "the least copies that must be up for the pool to serve I/O: `M` from 1 to size (default size - size/2)")
	f.StringVar(&rule, "rule", "", "the CRUSH rule placing the copies: a `RULE` name or id (default replicated_rule; see cuttle osd crush rule ls)")
	f.StringVar(&mode, "autoscale-mode", "", "the pool's pg_autoscale_mode, `MODE` on, warn or off (default osd_pool_default_pg_autoscale_mode, warn; see cuttle osd pool autoscale-status)")
	f.BoolVar(&sure, sureFlag, false, "confirm size 1 or a min-size below a majority of size (acknowledged writes can be lost)")
	return c
}

// poolVars returns the variables "osd pool set" takes, each with one
// line of help.
func poolVars() [][2]string {
	return [][2]string{
		{"size", "copies of each object, 1 to 10 (1 needs --yes-i-really-mean-it)"},
		{"min_size", "copies that must be up to serve I/O, 1 to size (below size - size/2 needs --yes-i-really-mean-it)"},
		{"pg_num", "placement groups, 1 to 65536: may grow (the OSDs split each PG in place), not shrink (PG merging is not supported yet)"},
		{"pgp_num", "placement groups CRUSH places, 1 to pg_num: raise it after pg_num to move the split PGs to their own OSDs; sets pgp_num_target, which the monitors step toward while under target_max_misplaced_ratio of the data moves"},
		{"pgp_num_actual", "set pgp_num at once, leaving pgp_num_target (set pgp_num first to the same value to move everything together)"},
		{"crush_rule", "the CRUSH rule placing the copies, by name or id (cuttle osd crush rule ls)"},
		{"pg_autoscale_mode", "on (the monitors raise pg_num as the pool's data grows), warn (health warnings POOL_TOO_FEW_PGS, POOL_TOO_MANY_PGS) or off"},
		{"target_size_bytes", "the size (one copy) the pool is expected to reach, e.g. 100G, for the autoscaler; 0 for none"},
		{"target_size_ratio", "the share of its CRUSH root's space the pool is expected to take, relative to other pools' ratios; wins over target_size_bytes; 0 for none"},
		{"pg_autoscale_bias", "factor of the pool's ideal PG count, in (0, 1000]; default 1"},
		{"ack", "all (a write is answered once every copy has it; the default) or primary (once the primary has it durably, the replicas catching up behind: needs --yes-i-really-mean-it, see docs/OSD.md)"},
		{"read_policy", "primary (every read at the primary; the default), balance (at a member chosen at random) or score (at the member with the best load and distance score); replicas serve only what every member has, else the read goes to the primary (docs/OSD.md, Reading from replicas)"},
	}
}

// poolSetCommand is "cuttle osd pool set".
func poolSetCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var sure bool
	var long strings.Builder
	long.WriteString("Change a pool setting. VAR is one of:\n")
	for _, v := range poolVars() {
		fmt.Fprintf(&long, "  %-17s %s\n", v[0], v[1])
	}
	c := &cobra.Command{
		Use:   "set POOL VAR VALUE",
		Short: "Change a pool setting (size, min_size, pg_num, pgp_num, crush_rule, ack, read_policy, the autoscaler's options)",
		Long:  strings.TrimSuffix(long.String(), "\n"),
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			val := args[2]
			if args[1] == "target_size_bytes" {
				n, err := cmdutil.ParseSize(val)
				if err != nil {
					return fmt.Errorf("osd pool set: target_size_bytes: %w (bytes, or with a unit: 100G)", err)
				}
				val = strconv.FormatUint(n, 10)
			}
			wc := wire.NewCommand("osd pool set", "pool", args[0], "var", args[1], "val", val)
			if sure {
				wc.Args["yes_i_really_mean_it"] = "true"
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, wc)
		},
	}
	c.Flags().BoolVar(&sure, sureFlag, false, "confirm size 1, a min_size below a majority of size or ack primary (acknowledged writes can be lost)")
	return c
}

func osdCrushCommands(cf *clusterconn.Flags, out *cmdutil.Output, mc mcFunc) *cobra.Command {
	crush := &cobra.Command{Use: "crush", Short: "Change the CRUSH hierarchy and rules in the cluster's map"}
	move := &cobra.Command{
		Use:   "move NAME TYPE=PARENT...",
		Short: "Move a bucket under a parent, e.g. move host1 rack=r1 root=default",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := wire.NewCommand("osd crush move", "name", args[0])
			for _, kv := range args[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" || v == "" {
					return fmt.Errorf("osd crush move: %q is not TYPE=NAME", kv)
				}
				c.Args[k] = v
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, c)
		},
	}
	rule := &cobra.Command{Use: "rule", Short: "List, show, create and remove CRUSH rules"}
	rule.AddCommand(
		mc("ls", "List rules", "osd crush rule ls", nil),
		mc("dump [NAME]", "Show rules", "osd crush rule dump", []string{"?name"}),
		mc("create-replicated NAME ROOT FAILURE_DOMAIN [CLASS]", "Create a replicated rule", "osd crush rule create-replicated", []string{"name", "root", "type", "?class"}),
		ruleCreateHybridCommand(cf, out),
		mc("rm NAME", "Remove a rule no pool uses", "osd crush rule rm", []string{"name"}),
	)
	crush.AddCommand(
		mc("add-bucket NAME TYPE", "Add a bucket (host, rack, ...) not yet under any parent", "osd crush add-bucket", []string{"name", "type"}),
		move,
		mc("reweight NAME WEIGHT", "Set a device's CRUSH weight", "osd crush reweight", []string{"name", "weight"}),
		mc("set-device-class CLASS ID...", "Set the device class of OSDs", "osd crush set-device-class", []string{"class", "ids..."}),
		mc("rm-device-class ID...", "Clear the device class of OSDs", "osd crush rm-device-class", []string{"ids..."}),
		mc("rm NAME", "Remove an empty bucket or a device from the hierarchy", "osd crush rm", []string{"name"}),
		rule,
	)
	return crush
}

// osdGetmapCommand saves the binary OSD map (what `cuttle osdmap print`
// and `cuttle osdmap map-object` read).
func osdGetmapCommand(cf *clusterconn.Flags) *cobra.Command {
	var outFile string
	c := &cobra.Command{
		Use:   "getmap [EPOCH] -o FILE",
		Short: "Save the OSD map (the newest, or EPOCH) to a file for the offline osdmap tools",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outFile == "" {
				return fmt.Errorf("osd getmap: -o FILE is required")
			}
			wc := wire.NewCommand("osd getmap")
			if len(args) == 1 {
				wc.Args["epoch"] = args[0]
			}
			return saveMap(cmd.Context(), cf, wc, outFile, cmd)
		},
	}
	c.Flags().StringVarP(&outFile, "out", "o", "", "file to write the map to")
	return c
}

func saveMap(ctx context.Context, cf *clusterconn.Flags, wc wire.Command, path string, cmd *cobra.Command) error {
	mc, err := cf.MonClient()
	if err != nil {
		return err
	}
	defer mc.Close()
	ctx, cancel := context.WithTimeout(ctx, cf.Timeout)
	defer cancel()
	r, err := mc.Run(ctx, wc)
	if err != nil {
		return err
	}
	if err := r.Err(); err != nil {
		return clusterconn.Named(wc.Prefix, err)
	}
	if err := os.WriteFile(path, r.Data, 0o600); err != nil {
		return clusterconn.Named(wc.Prefix, err)
	}
	// As Ceph's "got osdmap epoch N", then where it went.
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: wrote %d bytes to %s\n", strings.TrimSpace(r.Status), len(r.Data), path)
	return nil
}

// osdBlocklistCommands is "cuttle osd blocklist": addresses the OSDs must
// no longer serve (a failed MDS, an evicted client), each until an
// expiry.
func osdBlocklistCommands(mc mcFunc) *cobra.Command {
	bl := &cobra.Command{Use: "blocklist", Short: "Fence addresses: the OSDs are to refuse them until an expiry"}
	bl.AddCommand(
		mc("add ADDR [EXPIRE_SECONDS]", "Blocklist HOST, HOST:PORT or HOST:PORT/NONCE (default for an hour)", "osd blocklist add", []string{"addr", "?expire"}),
		mc("rm ADDR", "Remove a blocklist entry", "osd blocklist rm", []string{"addr"}),
		mc("ls", "List the blocklist entries with their expiry", "osd blocklist ls", nil),
	)
	return bl
}

// ruleCreateHybridCommand is "cuttle osd crush rule create-hybrid": the
// SSD-primary rule (crush.HybridRule) in the cluster's map.
func ruleCreateHybridCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var primary, replica, domain, root string
	cmd := &cobra.Command{
		Use:   "create-hybrid NAME --primary-class ssd --replica-class hdd [--failure-domain host] [--root default]",
		Short: "Create a rule whose first copy (the primary) is on one device class and the others on another (SSD primaries)",
		Long: `Create Ceph's SSD-primary rule: take ROOT class PRIMARY; chooseleaf firstn 1
type DOMAIN; emit; take ROOT class REPLICA; chooseleaf firstn -1 type DOMAIN;
emit. Every PG's primary is then a device of the primary class. The two takes
are independent, so a replica may share the primary's failure domain; check a
map with "cuttle crush test --check-primary-class CLASS --check-failure-domain
TYPE" (docs/CRUSH.md, "Hybrid rules").`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if primary == "" || replica == "" {
				return fmt.Errorf("osd crush rule create-hybrid: --primary-class and --replica-class are required (e.g. --primary-class ssd --replica-class hdd)")
			}
			c := wire.NewCommand("osd crush rule create-hybrid", "name", args[0], "primary_class", primary,
				"replica_class", replica, "type", domain, "root", root)
			return clusterconn.RunMon(cmd.Context(), cf, out, c)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&primary, "primary-class", "", "device class of the first copy (the primary), e.g. ssd")
	fl.StringVar(&replica, "replica-class", "", "device class of the other copies, e.g. hdd")
	fl.StringVar(&domain, "failure-domain", "host", "bucket type the copies are spread across (within each class)")
	fl.StringVar(&root, "root", "default", "CRUSH root to take from")
	return cmd
}

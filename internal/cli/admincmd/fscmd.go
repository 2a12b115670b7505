package admincmd

import (
	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// AddFSCommands adds "cuttle fs": the file systems of the MDS map
// (MONITOR-COMMANDS.md, "File systems").
func AddFSCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags) {
	mc := func(use, short, prefix string, args []string) *cobra.Command {
		return clusterconn.MonCommand(cf, out, use, short, prefix, args)
	}
	fs := &cobra.Command{Use: "fs", Short: "Create, list, change and remove file systems (the MDS map)"}
	fs.AddCommand(
		fsNewCommand(cf, out),
		mc("ls", "List the file systems with their pools", "fs ls", nil),
		mc("status [NAME]", "Show the file systems' ranks, their daemons and states, the pools and the standbys", "fs status", []string{"?fs_name"}),
		mc("dump", "Show the whole MDS map", "fs dump", nil),
		mc("get NAME", "Show one file system's settings and ranks", "fs get", []string{"fs_name"}),
		mc("set NAME VAR VALUE", "Change a setting: max_mds, standby_count_wanted, joinable, allow_standby_replay, down, session_timeout, session_autoclose", "fs set", []string{"fs_name", "var", "val"}),
		mc("fail NAME", "Take a file system down at once: not joinable, every rank failed (fs set NAME joinable true brings it back)", "fs fail", []string{"fs_name"}),
		mc("add_data_pool NAME POOL", "Add a data pool to a file system", "fs add_data_pool", []string{"fs_name", "pool"}),
		mc("rm_data_pool NAME POOL", "Remove a data pool (not the default one) from a file system", "fs rm_data_pool", []string{"fs_name", "pool"}),
		fsRmCommand(cf, out),
		fsScrubCommand(cf, out),
	)
	root.AddCommand(fs)
}

func fsNewCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "new NAME META_POOL DATA_POOL",
		Short: "Create a file system on two existing pools (an empty replicated metadata pool, a default data pool)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			wc := wire.NewCommand("fs new", "fs_name", args[0], "metadata", args[1], "data", args[2])
			if force {
				wc.Args["force"] = "true"
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, wc)
		},
	}
	c.Flags().BoolVar(&force, "force", false, "accept a metadata pool that holds objects, or an erasure-coded default data pool")
	return c
}

func fsRmCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "rm NAME --yes-i-really-mean-it",
		Short: "Remove a file system from the MDS map (take it down first: fs fail NAME); its pools and their data stay",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wc := wire.NewCommand("fs rm", "fs_name", args[0])
			if yes {
				wc.Args["yes_i_really_mean_it"] = "true"
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, wc)
		},
	}
	c.Flags().BoolVar(&yes, sureFlag, false, "confirm removing the file system")
	return c
}

// AddMDSCommands adds "cuttle mds": the MDS daemons as the monitors see
// them (MONITOR-COMMANDS.md, "MDS daemons"), next to the daemon's own
// commands (mds mkfs, mds run), as mon's and osd's (AddMonCommands).
func AddMDSCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags, daemon ...*cobra.Command) {
	mc := func(use, short, prefix string, args []string) *cobra.Command {
		return clusterconn.MonCommand(cf, out, use, short, prefix, args)
	}
	mds := &cobra.Command{Use: "mds", Short: "Create and run MDS daemons; show and fail them"}
	mds.AddCommand(daemon...)
	mds.AddCommand(
		mc("stat", "Show the MDS map in one line: file systems, ranks and their daemons, standbys", "mds stat", nil),
		mc("fail NAME|FS:RANK|RANK|GID", "Fail a daemon: its rank (if any) goes to a standby; the daemon must restart to rejoin", "mds fail", []string{"role_or_gid"}),
		mc("repaired FS:RANK|RANK", "Mark a damaged rank repaired: it is failed, and a standby replays it", "mds repaired", []string{"role"}),
	)
	root.AddCommand(mds)
}

package admincmd

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// AddMonCommands adds "cuttle mon" (the monitor map) with the daemon's
// commands the caller gives (mon mkfs, mon run), and "cuttle status" and
// "cuttle health", the cluster's state as the monitors see it.
func AddMonCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags, daemon ...*cobra.Command) {
	monCmd := &cobra.Command{Use: "mon", Short: "Create and run monitors; show the monitor map"}
	monCmd.AddCommand(daemon...)
	monCmd.AddCommand(
		clusterconn.MonCommand(cf, out, "stat", "Show the monitors, the leader and the quorum", "mon stat", nil),
		clusterconn.MonCommand(cf, out, "dump", "Show the monitor map", "mon dump", nil))
	root.AddCommand(monCmd,
		clusterconn.MonCommand(cf, out, "status", "Show the cluster's state: health, monitors, OSDs, data and PGs, recovery", "status", nil),
		&cobra.Command{
			Use:   "health [detail]",
			Short: "Show the cluster's health (HEALTH_OK, HEALTH_WARN, HEALTH_ERR) and its checks",
			Args:  cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c := wire.NewCommand("health")
				if len(args) == 1 {
					if args[0] != "detail" {
						return fmt.Errorf("health: unknown argument %q (want detail)", args[0])
					}
					c.Args["detail"] = "1"
				}
				return clusterconn.RunMon(cmd.Context(), cf, out, c)
			},
		})
}

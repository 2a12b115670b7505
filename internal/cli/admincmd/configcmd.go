package admincmd

import (
	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// AddConfigCommands adds "cuttle config": the central configuration the
// monitors keep and hand to daemons.
func AddConfigCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags) {
	c := &cobra.Command{Use: "config", Short: "Show and change the cluster's central configuration"}
	c.AddCommand(
		clusterconn.MonCommand(cf, out, "set WHO NAME VALUE", "Set option NAME for WHO (global, mon, osd, osd.3, client, ...)", "config set", []string{"who", "name", "value"}),
		clusterconn.MonCommand(cf, out, "get WHO [NAME]", "Show WHO's options, or one of them", "config get", []string{"who", "?name"}),
		clusterconn.MonCommand(cf, out, "rm WHO NAME", "Remove option NAME of WHO (back to its default)", "config rm", []string{"who", "name"}),
		clusterconn.MonCommand(cf, out, "dump", "Show every option set in the cluster", "config dump", nil),
		clusterconn.MonCommand(cf, out, "help [NAME]", "Describe the options, or one of them", "config help", []string{"?name"}),
	)
	root.AddCommand(c)
}

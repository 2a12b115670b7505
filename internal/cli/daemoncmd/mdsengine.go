//go:build mdcache

package daemoncmd

import (
	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/spf13/cobra"
)

// MDSCommands are the MDS daemon's commands in the mds group: mkfs, and
// run with the real engine (daemon.MDSEngine).
func MDSCommands(cf *clusterconn.Flags, out *cmdutil.Output) []*cobra.Command {
	return []*cobra.Command{MDSMkfsCommand(cf, out), MDSRunCommand(cf, daemon.MDSEngine())}
}

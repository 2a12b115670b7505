//go:build !mdcache

package daemoncmd

import (
	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// MDSCommands are the MDS daemon's commands in the mds group. Until the
// MDS engine (internal/mds/mdcache) is part of the build, there is no
// mds run: mdsengine.go (build tag mdcache) adds it with the real
// engine; the integrator removes this file and that tag when the engine
// lands.
func MDSCommands(cf *clusterconn.Flags, out *cmdutil.Output) []*cobra.Command {
	return []*cobra.Command{MDSMkfsCommand(cf, out)}
}

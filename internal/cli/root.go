// Package cli builds the cuttle command tree: the cobra root command, its
// global flags, and the subcommand families that operators use to inspect and
// change a cluster.
//
// It owns argument parsing and presentation only. Every command turns its
// flags into a call on a library (crush, osdmap, rados, rbd, kv, fsclient)
// and prints the result through a [cmdutil.Output], as plain text for people
// or as JSON for tools (--format). Commands that reach a cluster read the
// cluster configuration file named by --conf (internal/cli/clusterconn); the
// CLI never reads environment variables (cmd/cuttle does) and holds no
// package-level state: everything a command needs hangs off the tree that
// [NewRootCommand] returns, so tests build a fresh tree per case with their
// own writers.
//
// # The root and its families
//
// This package is the root: it assembles the tree, registers the global
// flags, names argument errors (errors.go) and makes command groups
// strict (groups.go). The command families live in sub-packages, by noun:
//
//   - internal/cli/admincmd: the families that administer a running
//     cluster through its monitors and OSDs (mon, status, health, osd, pg,
//     df, auth, config, tell);
//   - internal/cli/daemoncmd: the daemons' commands (mon mkfs and run,
//     osd mkfs and run), which the root places in admincmd's mon and osd
//     groups, and cluster up/down/status, the local cluster;
//   - internal/cli/radoscmd: rados and bench, the object tools, given a
//     dial function made from the cluster flags;
//   - internal/cli/rbdcmd: rbd, the block image commands, dialled the
//     same way;
//   - internal/cli/s3cmd: s3, the S3 gateway (serve) and its users and
//     keys, dialled the same way;
//   - internal/cli/nbdcmd: nbd, the NBD server exporting images, dialled
//     the same way;
//   - internal/cli/fscmd: fs stat and fs lsdir, a file system through
//     the client library (statlite, readdirplus), dialled the same way;
//   - internal/cli/kvcmd: kv, the key-value store commands, dialled the
//     same way;
//   - internal/cli/mapcmd: crush and osdmap, the offline map tools;
//   - internal/cli/toolcmd: objectstore, the offline debug tools for an
//     OSD's store;
//   - internal/cli/clusterconn: the cluster flags and the connection they
//     describe, the generic monitor command, and how errors are named;
//   - internal/cli/cmdutil: what they all share (Output, --format, sizes).
//
// The sub-packages import cmdutil (and clusterconn, those that talk to
// the monitors) and never this package or one another otherwise. The
// root keeps version and the multi-process tests of the assembled
// binary (main_test.go runs the test binary as cuttle).
//
// # Adding a command family
//
// Write a file per family (or a sub-package, for a noun that stands alone)
// with a function
//
//	func AddPGCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags)
//
// that adds its commands under root and prints with out, then call it from
// [NewRootCommand]. Nothing else needs to change.
//
// # Concurrency
//
// A command tree is used by one goroutine at a time; build one tree per
// concurrent invocation.
package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/cuttlestore/cuttle/internal/cli/admincmd"
	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/cli/daemoncmd"
	"github.com/cuttlestore/cuttle/internal/cli/fscmd"
	"github.com/cuttlestore/cuttle/internal/cli/kvcmd"
	"github.com/cuttlestore/cuttle/internal/cli/mapcmd"
	"github.com/cuttlestore/cuttle/internal/cli/mountcmd"
	"github.com/cuttlestore/cuttle/internal/cli/nbdcmd"
	"github.com/cuttlestore/cuttle/internal/cli/radoscmd"
	"github.com/cuttlestore/cuttle/internal/cli/rbdcmd"
	"github.com/cuttlestore/cuttle/internal/cli/s3cmd"
	"github.com/cuttlestore/cuttle/internal/cli/toolcmd"
	"github.com/spf13/cobra"
)

// DefaultClusterDir is where `cuttle cluster up` keeps a local cluster
// (DefaultConfPath is the configuration file in it).
const DefaultClusterDir = clusterconn.DefaultClusterDir

// DefaultConfPath is where commands look for the cluster configuration
// file when neither --conf nor $CUTTLE_CONF names one: the file of the
// local cluster that `cuttle cluster up` (make run) starts in the
// current directory.
const DefaultConfPath = clusterconn.DefaultConfPath

// NewRootCommand returns the cuttle root command with every subcommand
// family registered. Commands write results to stdout and diagnostics to
// stderr. Errors are returned from Execute, not printed, so the caller
// decides how to report them.
func NewRootCommand(stdout, stderr io.Writer) *cobra.Command {
	return NewRootCommandConf(stdout, stderr, "")
}

// NewRootCommandConf is NewRootCommand with the default of --conf, the
// cluster configuration file commands that reach a cluster read (cmd/cuttle
// passes $CUTTLE_CONF or DefaultConfPath).
func NewRootCommandConf(stdout, stderr io.Writer, defaultConf string) *cobra.Command {
	out := &cmdutil.Output{Format: cmdutil.FormatPlain, W: stdout}
	cf := &clusterconn.Flags{Stderr: stderr}
	root := &cobra.Command{
		Use:           "cuttle",
		Short:         "Cuttle is a distributed object, block and file store",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().Var((*cmdutil.FormatFlag)(&out.Format), "format",
		"output format: "+cmdutil.FormatPlain+" or "+cmdutil.FormatJSON)
	cf.Register(root, defaultConf)

	// Each family adds its commands under root. To add a family, write
	// addXxxCommands(root, out) (or a sub-package's AddXxxCommands) and
	// list it here.
	for _, add := range []func(*cobra.Command, *cmdutil.Output){
		addVersionCommand,
		mapcmd.AddCrushCommands,
		mapcmd.AddOSDMapCommands,
		toolcmd.AddObjectStoreCommands,
	} {
		add(root, out)
	}
	// Families that reach a running cluster also get the cluster flags.
	// The mon and osd groups hold daemoncmd's commands (mkfs, run) next
	// to the monitor commands of admincmd.
	admincmd.AddMonCommands(root, out, cf, daemoncmd.MonMkfsCommand(out), daemoncmd.MonRunCommand())
	admincmd.AddOSDCommands(root, out, cf, daemoncmd.OSDMkfsCommand(cf, out), daemoncmd.OSDRunCommand(cf))
	admincmd.AddMDSCommands(root, out, cf, daemoncmd.MDSCommands(cf, out)...)
	for _, add := range []func(*cobra.Command, *cmdutil.Output, *clusterconn.Flags){
		admincmd.AddConfigCommands,
		admincmd.AddPGCommands,
		admincmd.AddBalancerCommands,
		admincmd.AddFSCommands,
		admincmd.AddAuthCommands,
		daemoncmd.AddClusterCommands,
		admincmd.AddTellCommand,
	} {
		add(root, out, cf)
	}
	// The object tools connect through the cluster flags.
	radoscmd.AddRadosCommands(root, out, cf.Dial)
	radoscmd.AddBenchCommands(root, out, cf.Dial)
	rbdcmd.AddRBDCommands(root, out, cf.Dial)
	s3cmd.AddS3Commands(root, out, cf.Dial)
	nbdcmd.AddNBDCommands(root, out, cf.Dial)
	mountcmd.AddMountCommands(root, out, cf.Dial)
	fscmd.AddFSClientCommands(root, out, cf.Dial) // into admincmd's fs group
	kvcmd.AddKVCommands(root, out, cf.Dial)
	strictGroups(root)
	nameArgErrors(root)
	return root
}

// versionInfo is what "cuttle version" prints.
type versionInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
}

func addVersionCommand(root *cobra.Command, out *cmdutil.Output) {
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the cuttle version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := versionInfo{Version: "(unknown)", GoVersion: runtime.Version()}
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				info.Version = bi.Main.Version
			}
			return out.Print(info, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "cuttle %s %s\n", info.Version, info.GoVersion)
				return err
			})
		},
	})
}

package cli

import (
	"strings"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/spf13/cobra"
)

// How the CLI reports a failure is told in internal/cli/clusterconn
// (errors.go): what failed first, named once ([clusterconn.Named]), then
// the cause. The walk here names the argument and flag errors of every
// command by its path (internal/cli/daemoncmd names the cluster
// commands' launcher errors).

// commandName is cmd's path without the root's name: "osd pool create".
func commandName(cmd *cobra.Command) string {
	path := cmd.CommandPath()
	if cmd.HasParent() {
		path = path[len(cmd.Root().Name())+1:]
	}
	return path
}

// nameArgErrors makes the argument and flag errors of every command under
// root name the command: "osd pool rm: accepts 2 arg(s), received 1"
// rather than cobra's bare "accepts 2 arg(s), received 1". Errors that
// name the command already (cobra.NoArgs's "unknown command ... for
// "cuttle version"") are left as they are.
func nameArgErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return nameCommandError(cmd, err)
	})
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		if args := cmd.Args; args != nil && cmd.HasParent() {
			cmd.Args = func(cmd *cobra.Command, a []string) error {
				return nameCommandError(cmd, args(cmd, a))
			}
		}
	}
	walk(root)
}

func nameCommandError(cmd *cobra.Command, err error) error {
	if err == nil || !cmd.HasParent() || strings.Contains(err.Error(), `"`+cmd.CommandPath()+`"`) {
		return err
	}
	return clusterconn.Named(commandName(cmd), err)
}

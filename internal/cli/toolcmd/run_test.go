package toolcmd

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
)

// run executes a command tree of this package's families under a root
// with --format, as internal/cli assembles them, and returns stdout,
// stderr and the error from Execute. internal/cli's tests cover the
// whole tree.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	out := &cmdutil.Output{Format: cmdutil.FormatPlain, W: &stdout}
	root := &cobra.Command{Use: "cuttle", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.PersistentFlags().Var((*cmdutil.FormatFlag)(&out.Format), "format", "output format")
	AddObjectStoreCommands(root, out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

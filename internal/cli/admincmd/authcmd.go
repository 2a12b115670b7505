package admincmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/spf13/cobra"
)

// AddAuthCommands adds "cuttle auth": the entities, keys and caps the
// monitors' auth database holds (internal/mon/authmon;
// docs/AUTH-COMMANDS.md is the operator's guide).
func AddAuthCommands(root *cobra.Command, out *cmdutil.Output, cf *clusterconn.Flags) {
	c := &cobra.Command{Use: "auth", Short: "Manage the cluster's entities, their keys and capabilities"}
	c.AddCommand(
		authCapsCommand(cf, out, "add ENTITY [SERVICE=CAPS ...]", "Create ENTITY with a new key and the given caps", "auth add", false),
		authCapsCommand(cf, out, "get-or-create ENTITY [SERVICE=CAPS ...]", "Print ENTITY's keyring, creating it with the given caps if missing", "auth get-or-create", false),
		authCapsCommand(cf, out, "caps ENTITY SERVICE=CAPS ...", "Replace ENTITY's caps (an empty CAPS grants nothing for that service)", "auth caps", true),
		clusterconn.MonCommand(cf, out, "get ENTITY", "Print ENTITY's keyring (its key and caps)", "auth get", []string{"entity"}),
		clusterconn.MonCommand(cf, out, "print-key ENTITY", "Print ENTITY's key", "auth print-key", []string{"entity"}),
		clusterconn.MonCommand(cf, out, "ls", "List every entity with its key and caps", "auth ls", nil),
		clusterconn.MonCommand(cf, out, "rm ENTITY", "Remove ENTITY: it can no longer authenticate", "auth rm", []string{"entity"}),
		clusterconn.MonCommand(cf, out, "get-rotating [SERVICE]", "Fetch the calling daemon's service keys, sealed with its own key (daemons do this; --name osd.N)", "auth get-rotating", []string{"?service"}),
		authImportCommand(cf, out),
	)
	root.AddCommand(c)
}

// authCapsCommand sends prefix with the entity and its caps, given as
// SERVICE=CAPS words (mon='allow r') or, as Ceph's CLI takes them, as
// SERVICE CAPS pairs (mon 'allow r').
func authCapsCommand(cf *clusterconn.Flags, out *cmdutil.Output, use, short, prefix string, needCaps bool) *cobra.Command {
	minArgs := 1
	if needCaps {
		minArgs = 2
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

Caps are given per service (mon, osd, mds, mgr) as SERVICE=CAPS or as
SERVICE CAPS, e.g.

    cuttle ` + prefix + ` client.app mon='allow r' osd='allow rw pool=rbd'
    cuttle ` + prefix + ` client.app mon 'allow r' osd 'allow rw pool=rbd'`,
		Args: cobra.MinimumNArgs(minArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			wc := wire.NewCommand(prefix, "entity", args[0])
			caps, err := parseCapsArgs(args[1:])
			if err != nil {
				return clusterconn.Named(prefix, err)
			}
			for svc, text := range caps {
				wc.Args["caps."+svc] = text
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, wc)
		},
	}
}

// parseCapsArgs reads SERVICE=CAPS words and SERVICE CAPS pairs. A word
// is SERVICE=CAPS when what precedes its first '=' is a single word, so
// "allow rw pool=rbd" after a SERVICE word is that service's caps.
func parseCapsArgs(args []string) (auth.Caps, error) {
	caps := auth.Caps{}
	for i := 0; i < len(args); i++ {
		svc, text, ok := strings.Cut(args[i], "=")
		if !ok || svc == "" || strings.ContainsAny(svc, " \t") {
			if i+1 == len(args) {
				return nil, fmt.Errorf("caps %q: want SERVICE=CAPS, or SERVICE followed by its CAPS", args[i])
			}
			svc, text = args[i], args[i+1]
			i++
		}
		if _, dup := caps[svc]; dup {
			return nil, fmt.Errorf("caps for %s given twice", svc)
		}
		caps[svc] = text
	}
	return caps, nil
}

// authImportCommand sends a keyring file's text (Ceph's auth import -i).
func authImportCommand(cf *clusterconn.Flags, out *cmdutil.Output) *cobra.Command {
	var in string
	c := &cobra.Command{
		Use:   "import -i FILE",
		Short: "Add or replace the entities of a keyring file, with their keys and caps",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" {
				return fmt.Errorf("auth import: give the keyring with -i FILE (- for stdin)")
			}
			var r io.Reader = cmd.InOrStdin()
			if in != "-" {
				f, err := os.Open(in)
				if err != nil {
					return fmt.Errorf("auth import: %w", err)
				}
				defer f.Close()
				r = f
			}
			text, err := io.ReadAll(io.LimitReader(r, auth.MaxKeyringSize+1))
			if err != nil {
				return fmt.Errorf("auth import: %w", err)
			}
			if len(text) > auth.MaxKeyringSize {
				return fmt.Errorf("auth import: %s is larger than %d bytes", in, auth.MaxKeyringSize)
			}
			return clusterconn.RunMon(cmd.Context(), cf, out, wire.NewCommand("auth import", "keyring", string(text)))
		},
	}
	c.Flags().StringVarP(&in, "input", "i", "", "the keyring file to import (- for stdin)")
	return c
}

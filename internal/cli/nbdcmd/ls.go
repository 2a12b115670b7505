package nbdcmd

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/nbd"
)

func lsCommand(out *cmdutil.Output) *cobra.Command {
	var connect string
	var tlsFlags clientTLS
	c := &cobra.Command{
		Use:   "ls [--connect ADDRESS] [--tls [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]]",
		Short: "List the exports of a running NBD server (its name, size, and whether read-only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := parseListen(connect)
			if err != nil {
				return err
			}
			tlsConf, err := tlsFlags.config(a)
			if err != nil {
				return err
			}
			exports, err := nbd.List(cmd.Context(), a.network, a.addr, tlsConf)
			if err != nil {
				if terr := tlsFailure(a, err); terr != nil {
					return terr
				}
				if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
					return fmt.Errorf("%s: %w; is cuttle nbd serve running there? (ECONNREFUSED)", a, err)
				}
				return fmt.Errorf("%s: %w (EIO)", a, err)
			}
			if exports == nil {
				exports = []nbd.ListedExport{}
			}
			return out.Print(exports, func(w io.Writer) error {
				for _, e := range exports {
					mode := "rw"
					if e.ReadOnly {
						mode = "ro"
					}
					if _, err := fmt.Fprintf(w, "%-20s %10s %s %s\n", e.Name, cmdutil.FormatSize(e.Size), mode, e.Description); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&connect, "connect", DefaultListen, "the server's address: tcp://HOST:PORT or unix:///path")
	tlsFlags.addFlags(c.Flags())
	return c
}

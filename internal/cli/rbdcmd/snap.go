package rbdcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/rbd"
)

// snapCommand is a snapshot command on IMAGE@SNAP: run does it.
func snapCommand(e *env, use, short string, run func(img *rbd.Image, ctx context.Context, snap string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use + " [POOL/]IMAGE@SNAP",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], 1)
			if err != nil {
				return err
			}
			return e.withImage(cmd, spec{pool: s.pool, image: s.image}, rbd.OpenOptions{}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				if err := run(img, ctx, s.snap); err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: s.image, Snap: s.snap})
			})
		},
	}
}

func snapCreateCommand(e *env) *cobra.Command {
	return snapCommand(e, "create", "Take a snapshot of an image", (*rbd.Image).SnapCreate)
}

func snapRmCommand(e *env) *cobra.Command {
	return snapCommand(e, "rm", "Remove a snapshot (not while protected)", (*rbd.Image).SnapRemove)
}

func snapRollbackCommand(e *env) *cobra.Command {
	return snapCommand(e, "rollback", "Make an image what it was at a snapshot (its bytes and size)", (*rbd.Image).SnapRollback)
}

func snapLsCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "ls [POOL/]IMAGE",
		Short: "List an image's snapshots",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], -1)
			if err != nil {
				return err
			}
			return e.withImage(cmd, s, rbd.OpenOptions{ReadOnly: true}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				list := img.SnapList()
				return e.out.Print(list, func(w io.Writer) error {
					if len(list) == 0 {
						return nil
					}
					if _, err := fmt.Fprintf(w, "%6s  %-20s %10s  %-9s %s\n", "SNAPID", "NAME", "SIZE", "PROTECTED", "TIMESTAMP"); err != nil {
						return err
					}
					for _, sn := range list {
						if _, err := fmt.Fprintf(w, "%6d  %-20s %10s  %-9v %s\n", sn.ID, sn.Name, cmdutil.FormatSize(sn.Size), sn.Protected, sn.Created.Format("2006-01-02 15:04:05")); err != nil {
							return err
						}
					}
					return nil
				})
			})
		},
	}
}

func snapProtectCommand(e *env) *cobra.Command {
	return snapCommand(e, "protect", "Protect a snapshot from removal", (*rbd.Image).SnapProtect)
}

func snapUnprotectCommand(e *env) *cobra.Command {
	return snapCommand(e, "unprotect", "Let a protected snapshot be removed again", (*rbd.Image).SnapUnprotect)
}

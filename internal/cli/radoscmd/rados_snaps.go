package radoscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// Pool snapshots, as Ceph's rados tool spells them: mksnap, rmsnap,
// lssnap (docs/SNAPSHOTS.md).

// snapReport is a pool snapshot in --format json.
type snapReport struct {
	Pool    string    `json:"pool"`
	ID      uint64    `json:"id"`
	Name    string    `json:"name"`
	Created time.Time `json:"created,omitzero"`
}

// snapFailure says what failed with the monitors' own words, which name
// the snapshot and what to do.
func snapFailure(what string, err error) error {
	var oe *rados.OpError
	if errors.As(err, &oe) && oe.Status != "" {
		return &cliError{fmt.Sprintf("%s: %s (%s)", what, oe.Status, wire.ErrnoName(int32(oe.Errno))), err}
	}
	return radosFailure(what, err)
}

func radosMksnapCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "mksnap SNAP",
		Short: "Make a pool snapshot named SNAP",
		Long: `Make a snapshot of the whole pool named SNAP. Objects written afterwards
keep their contents at SNAP for reads at the snapshot (rados -s SNAP get) and
rollback. A pool whose clients manage their own snapshots (block images)
refuses pool snapshots.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				id, err := ioc.CreatePoolSnap(ctx, name)
				if err != nil {
					return snapFailure("mksnap "+name, err)
				}
				return e.out.Print(snapReport{Pool: e.pool, ID: id, Name: name}, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "created pool %s snap %s\n", e.pool, name)
					return err
				})
			})
		},
	}
}

func radosRmsnapCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "rmsnap SNAP",
		Short: "Remove the pool snapshot SNAP; the OSDs then free what only it kept",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				id, err := ioc.LookupPoolSnap(name)
				if errors.Is(err, rados.ErrNotFound) {
					err = nil // the monitors' refusal says it better
				}
				if err != nil {
					return snapFailure("rmsnap "+name, err)
				}
				if err := ioc.RemovePoolSnap(ctx, name); err != nil {
					return snapFailure("rmsnap "+name, err)
				}
				return e.out.Print(snapReport{Pool: e.pool, ID: id, Name: name}, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "removed pool %s snap %s\n", e.pool, name)
					return err
				})
			})
		},
	}
}

func radosLssnapCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "lssnap",
		Short: "List the pool's snapshots: id, name, creation time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				snaps, err := ioc.PoolSnaps()
				if err != nil {
					return radosFailure(e.pool, err)
				}
				r := make([]snapReport, len(snaps))
				for i, s := range snaps {
					r[i] = snapReport{Pool: e.pool, ID: s.ID, Name: s.Name, Created: s.Created}
				}
				return e.out.Print(r, func(w io.Writer) error {
					for _, s := range snaps {
						if _, err := fmt.Fprintf(w, "%d\t%s\t%s\n", s.ID, lineSafe(s.Name), s.Created.Local().Format("2006.01.02 15:04:05")); err != nil {
							return err
						}
					}
					_, err := fmt.Fprintf(w, "%d snaps\n", len(snaps))
					return err
				})
			})
		},
	}
}

package radoscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// snapArg resolves a snapshot given by name (a pool snapshot) or, for
// self-managed snapshots, which have no names, by id.
func snapArg(ioc *rados.IOContext, v string) (uint64, error) {
	id, err := ioc.LookupPoolSnap(v)
	if err == nil {
		return id, nil
	}
	if n, perr := strconv.ParseUint(v, 10, 64); perr == nil && n > 0 {
		if ioc.SnapRemoved(n) {
			return 0, &cliError{fmt.Sprintf("pool %s snapshot %d was removed; reads and rollbacks at it are refused (cuttle rados -p %s lssnap lists the live ones)",
				ioc.PoolName(), n, ioc.PoolName()), fmt.Errorf("snapshot %d removed: %w", n, rados.ErrNotFound)}
		}
		return n, nil
	}
	if errors.Is(err, rados.ErrNotFound) {
		return 0, &cliError{fmt.Sprintf("pool %s has no snapshot %q (cuttle rados -p %s lssnap lists them)", ioc.PoolName(), v, ioc.PoolName()), err}
	}
	return 0, radosFailure(ioc.PoolName(), err)
}

func radosRollbackCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "rollback OBJECT SNAP",
		Short: "Make OBJECT what it was at snapshot SNAP (deleted if it did not exist then)",
		Long: `Make OBJECT what it was at snapshot SNAP: its data, extended attributes and
omap at the snapshot, or no object if it did not exist then. The version it
replaces is kept for the snapshots that need it. SNAP is a pool snapshot's
name, or an id for self-managed snapshots.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				id, err := snapArg(ioc, args[1])
				if err != nil {
					return err
				}
				if err := ioc.Rollback(ctx, name, id); err != nil {
					if errors.Is(err, rados.ErrNotFound) {
						return &cliError{fmt.Sprintf("rollback %s: pool %s has no snapshot %d (removed?)", e.path(name), e.pool, id), err}
					}
					return radosFailure("rollback "+e.path(name), err)
				}
				return e.out.Print(snapReport{Pool: e.pool, ID: id, Name: args[1]}, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "rolled back pool %s to snapshot %s\n", e.pool, args[1])
					return err
				})
			})
		},
	}
}

// cloneReport is one version of an object in listsnaps --format json.
type cloneReport struct {
	ID      string   `json:"cloneid"` // a number, or "head"
	Snaps   []uint64 `json:"snaps"`
	Size    uint64   `json:"size"`
	Overlap string   `json:"overlap"`
}

func radosListsnapsCommand(e *radosEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "listsnaps OBJECT",
		Short: "List OBJECT's clones: the snapshots each serves, size, what it shares with the next version",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				ls, err := ioc.ListSnaps(ctx, name)
				if err != nil {
					return radosFailure("listsnaps "+e.path(name), err)
				}
				rep := struct {
					Name   string        `json:"name"`
					Seq    uint64        `json:"seq"`
					Clones []cloneReport `json:"clones"`
				}{Name: name, Seq: ls.Seq, Clones: []cloneReport{}}
				for _, c := range ls.Clones {
					r := cloneReport{ID: strconv.FormatUint(c.ID, 10), Snaps: c.Snaps, Size: c.Size}
					if c.ID == rados.SnapHead {
						r.ID = "head"
					} else {
						parts := make([]string, len(c.Overlap))
						for i, x := range c.Overlap {
							parts[i] = fmt.Sprintf("%d~%d", x.Offset, x.Length)
						}
						r.Overlap = "[" + strings.Join(parts, ",") + "]"
					}
					if r.Snaps == nil {
						r.Snaps = []uint64{}
					}
					rep.Clones = append(rep.Clones, r)
				}
				return e.out.Print(rep, func(w io.Writer) error {
					fmt.Fprintf(w, "%s:\ncloneid\tsnaps\tsize\toverlap\n", lineSafe(name))
					for _, r := range rep.Clones {
						snaps := "-"
						if len(r.Snaps) > 0 {
							ids := make([]string, len(r.Snaps))
							for i, s := range r.Snaps {
								ids[len(r.Snaps)-1-i] = strconv.FormatUint(s, 10)
							}
							snaps = strings.Join(ids, ",")
						}
						line := fmt.Sprintf("%s\t%s\t%d\t%s", r.ID, snaps, r.Size, r.Overlap)
						if _, err := fmt.Fprintln(w, strings.TrimSuffix(line, "\t")); err != nil {
							return err
						}
					}
					return nil
				})
			})
		},
	}
}

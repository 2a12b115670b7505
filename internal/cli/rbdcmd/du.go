package rbdcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/rbd"
)

// duReport is what `rbd du --format json` prints, as Ceph's.
type duReport struct {
	Images           []rbd.Usage `json:"images"`
	TotalProvisioned uint64      `json:"total_provisioned_size"`
	TotalUsed        uint64      `json:"total_used_size"`
}

// usageOf appends the usage of image name: each snapshot's (oldest
// first) then the head's, or only snapshot snap's if named.
func usageOf(ctx context.Context, p *rbd.Pool, name, snap string, out []rbd.Usage) (_ []rbd.Usage, err error) {
	one := func(snap string) error {
		img, err := p.Open(ctx, name, rbd.OpenOptions{ReadOnly: true, Snap: snap})
		if err != nil {
			return err
		}
		u, err := img.DiskUsage(ctx)
		out = append(out, u)
		return errors.Join(err, img.Close(ctx))
	}
	if snap != "" {
		return out, one(snap)
	}
	head, err := p.Open(ctx, name, rbd.OpenOptions{ReadOnly: true})
	if err != nil {
		return out, err
	}
	snaps := head.SnapList()
	if err := head.Close(ctx); err != nil {
		return out, err
	}
	for _, s := range snaps {
		if err := one(s.Name); err != nil {
			return out, err
		}
	}
	return out, one("")
}

func duCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "du [[POOL/]IMAGE[@SNAP]]",
		Short: "Show images' provisioned and used bytes (from the object map)",
		Long: `Show the size (provisioned) and the bytes of existing data objects
(used) of an image and each of its snapshots, or of every image of the
pool. With the object map (docs/RBD.md) it reads only the map; without one,
or with one flagged invalid, it stats every data object.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var s spec
			if len(args) == 1 {
				var err error
				if s, err = e.parseSpec(args[0], 0); err != nil {
					return err
				}
			} else {
				s.pool = e.pool
			}
			return e.withPool(cmd, s.pool, func(ctx context.Context, p *rbd.Pool) error {
				names := []string{s.image}
				if s.image == "" {
					var err error
					if names, err = p.List(ctx); err != nil {
						return err
					}
				}
				r := duReport{Images: []rbd.Usage{}}
				for _, name := range names {
					var err error
					if r.Images, err = usageOf(ctx, p, name, s.snap, r.Images); err != nil {
						return err
					}
				}
				for _, u := range r.Images {
					if u.Snap == "" {
						r.TotalProvisioned += u.Provisioned
					}
					r.TotalUsed += u.Used
				}
				return e.out.Print(r, func(w io.Writer) error {
					tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
					fmt.Fprintf(tw, "NAME\tPROVISIONED\tUSED\t\n")
					for _, u := range r.Images {
						name := u.Name
						if u.Snap != "" {
							name += "@" + u.Snap
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t\n", name, cmdutil.FormatSize(u.Provisioned), cmdutil.FormatSize(u.Used))
					}
					if len(r.Images) > 1 {
						fmt.Fprintf(tw, "<TOTAL>\t%s\t%s\t\n", cmdutil.FormatSize(r.TotalProvisioned), cmdutil.FormatSize(r.TotalUsed))
					}
					return tw.Flush()
				})
			})
		},
	}
}

func objectMapCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "object-map COMMAND ...", Short: "Repair an image's object map"}
	c.AddCommand(&cobra.Command{
		Use:   "rebuild [POOL/]IMAGE",
		Short: "Rebuild the object map from the data objects that exist (clears its invalid flag)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], -1)
			if err != nil {
				return err
			}
			return e.withImage(cmd, s, rbd.OpenOptions{}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				if err := img.RebuildObjectMap(ctx); err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: s.image})
			})
		},
	})
	return c
}

package rbdcmd

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/rbd"
)

// sizeFlag is a byte count flag that takes units (10G, 512M).
type sizeFlag struct {
	v   uint64
	set bool
}

func (f *sizeFlag) String() string { return fmt.Sprint(f.v) }
func (f *sizeFlag) Type() string   { return "size" }
func (f *sizeFlag) Set(s string) error {
	v, err := cmdutil.ParseSize(s)
	if err != nil {
		return err
	}
	f.v, f.set = v, true
	return nil
}

func createCommand(e *env) *cobra.Command {
	var size, objectSize, stripeUnit sizeFlag
	var order uint8
	var stripeCount uint64
	var dataPool string
	var features []string
	c := &cobra.Command{
		Use:   "create [POOL/]IMAGE --size SIZE",
		Short: "Create an image of SIZE bytes (10G, 512M, ...)",
		Long: `Create an image. Its data objects are 4 MiB unless --object-size (or
--order, log2 of it) says otherwise, from 64K to 32M; --stripe-unit and
--stripe-count stripe its bytes over several objects at once; --data-pool
keeps its data objects in another pool than its header.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], -1)
			if err != nil {
				return err
			}
			if !size.set {
				return fmt.Errorf("no size: give --size SIZE, e.g. --size 10G (EINVAL)")
			}
			o := rbd.CreateOptions{Order: order, StripeUnit: stripeUnit.v, StripeCount: stripeCount, DataPool: dataPool}
			if err := imageFeatures(features, &o); err != nil {
				return err
			}
			if objectSize.set {
				if objectSize.v == 0 || objectSize.v&(objectSize.v-1) != 0 {
					return fmt.Errorf("--object-size %d is not a power of two; use e.g. 4M (EINVAL)", objectSize.v)
				}
				o.Order = uint8(bits.TrailingZeros64(objectSize.v))
			}
			return e.withPool(cmd, s.pool, func(ctx context.Context, p *rbd.Pool) error {
				if err := p.Create(ctx, s.image, size.v, o); err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: s.image, Size: size.v})
			})
		},
	}
	f := c.Flags()
	f.Var(&size, "size", "the image's size in bytes, with a unit: K, M, G, T (required)")
	f.Var(&objectSize, "object-size", "size of the data objects, a power of two from 64K to 32M (default 4M)")
	f.Uint8Var(&order, "order", 0, "log2 of the object size, 16 to 25 (default 22)")
	f.Var(&stripeUnit, "stripe-unit", "bytes dealt to one object of a stripe before the next (default: the object size)")
	f.Uint64Var(&stripeCount, "stripe-count", 0, "objects a stripe spans (default 1)")
	f.StringVar(&dataPool, "data-pool", "", "pool of the data objects (default: the image's pool)")
	f.StringSliceVar(&features, "image-feature", nil, "the features, as Ceph's: layering, object-map (default both); --image-feature layering leaves the object map out")
	return c
}

// imageFeatures applies --image-feature: the features named, of those
// this version has (layering is always on; striping follows the layout).
func imageFeatures(names []string, o *rbd.CreateOptions) error {
	if names == nil {
		return nil
	}
	o.NoObjectMap = true
	for _, n := range names {
		switch n {
		case "layering", "striping", "exclusive-lock":
		case "object-map":
			o.NoObjectMap = false
		default:
			return fmt.Errorf("--image-feature %q: want layering, striping, exclusive-lock or object-map (EINVAL)", n)
		}
	}
	return nil
}

func lsCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "ls [POOL]",
		Short: "List the images of a pool",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pool := e.pool
			if len(args) == 1 {
				pool = args[0]
			}
			return e.withPool(cmd, pool, func(ctx context.Context, p *rbd.Pool) error {
				names, err := p.List(ctx)
				if err != nil {
					return err
				}
				if names == nil {
					names = []string{}
				}
				return e.out.Print(names, func(w io.Writer) error {
					for _, n := range names {
						if _, err := fmt.Fprintln(w, n); err != nil {
							return err
						}
					}
					return nil
				})
			})
		},
	}
}

func infoCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "info [POOL/]IMAGE[@SNAP]",
		Short: "Show an image's size, objects, striping and features (at a snapshot)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], 0)
			if err != nil {
				return err
			}
			return e.withImage(cmd, s, rbd.OpenOptions{ReadOnly: true, Snap: s.snap}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				info := img.Stat()
				return e.out.Print(info, func(w io.Writer) error {
					var b strings.Builder
					fmt.Fprintf(&b, "rbd image '%s':\n", info.Name)
					fmt.Fprintf(&b, "\tsize %s in %d objects\n", cmdutil.FormatSize(info.Size), info.Objects)
					fmt.Fprintf(&b, "\torder %d (%s objects)\n", info.Order, cmdutil.FormatSize(info.ObjectSize))
					fmt.Fprintf(&b, "\tsnapshot_count: %d\n", info.Snapshots)
					fmt.Fprintf(&b, "\tid: %s\n", info.ID)
					fmt.Fprintf(&b, "\tblock_name_prefix: %s\n", info.BlockNamePrefix)
					fmt.Fprintf(&b, "\tformat: 2\n")
					fmt.Fprintf(&b, "\tfeatures: %s\n", strings.Join(info.Features, ", "))
					if info.DataPool != "" {
						fmt.Fprintf(&b, "\tdata_pool: %s\n", info.DataPool)
					}
					if pa := info.Parent; pa != nil {
						fmt.Fprintf(&b, "\tparent: %s/%s@%s\n\toverlap: %s\n", pa.Pool, pa.Image, pa.Snap, cmdutil.FormatSize(pa.Overlap))
					}
					fmt.Fprintf(&b, "\tcreate_timestamp: %s\n", info.Created.Format("2006-01-02 15:04:05 UTC"))
					if info.StripeUnit != info.ObjectSize || info.StripeCount != 1 {
						fmt.Fprintf(&b, "\tstripe unit: %s\n\tstripe count: %d\n", cmdutil.FormatSize(info.StripeUnit), info.StripeCount)
					}
					_, err := io.WriteString(w, b.String())
					return err
				})
			})
		},
	}
}

func resizeCommand(e *env) *cobra.Command {
	var size sizeFlag
	var allowShrink bool
	c := &cobra.Command{
		Use:   "resize [POOL/]IMAGE --size SIZE [--allow-shrink]",
		Short: "Grow an image, or shrink it with --allow-shrink",
		Long: `Set an image's size. Growing adds zeros. Shrinking discards the bytes
beyond the new size (snapshots keep theirs), so it needs --allow-shrink.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], -1)
			if err != nil {
				return err
			}
			if !size.set {
				return fmt.Errorf("no size: give --size SIZE, e.g. --size 20G (EINVAL)")
			}
			return e.withImage(cmd, s, rbd.OpenOptions{}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				if err := img.Resize(ctx, size.v, rbd.ResizeOptions{AllowShrink: allowShrink}); err != nil {
					return err
				}
				return e.out.Print(imageReport{Pool: s.pool, Image: s.image, Size: size.v}, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "resized %s to %s\n", s, cmdutil.FormatSize(size.v))
					return err
				})
			})
		},
	}
	c.Flags().Var(&size, "size", "the new size in bytes, with a unit: K, M, G, T (required)")
	c.Flags().BoolVar(&allowShrink, "allow-shrink", false, "allow a smaller size, discarding the data beyond it")
	return c
}

func rmCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm [POOL/]IMAGE",
		Short: "Remove an image and all its data (its snapshots first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], -1)
			if err != nil {
				return err
			}
			return e.withPool(cmd, s.pool, func(ctx context.Context, p *rbd.Pool) error {
				if err := p.Remove(ctx, s.image); err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: s.image})
			})
		},
	}
}

func renameCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rename [POOL/]IMAGE NEWNAME",
		Short: "Rename an image within its pool",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], -1)
			if err != nil {
				return err
			}
			return e.withPool(cmd, s.pool, func(ctx context.Context, p *rbd.Pool) error {
				if err := p.Rename(ctx, s.image, args[1]); err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: args[1]})
			})
		},
	}
}

func cpCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "cp [POOL/]IMAGE[@SNAP] [POOL/]NEWIMAGE",
		Short: "Copy an image (or a snapshot of it) to a new image, sparsely",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := e.parseSpec(args[0], 0)
			if err != nil {
				return err
			}
			dst, err := e.parseSpec(args[1], -1)
			if err != nil {
				return err
			}
			return e.withImage(cmd, src, rbd.OpenOptions{ReadOnly: true, Snap: src.snap}, func(ctx context.Context, p *rbd.Pool, img *rbd.Image) error {
				to := p
				if dst.pool != src.pool {
					var err error
					if to, err = rbd.NewPool(p.Conn(), dst.pool, rbd.Options{}); err != nil {
						return err
					}
				}
				if err := img.Copy(ctx, to, dst.image, rbd.CreateOptions{}); err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: dst.pool, Image: dst.image, Size: img.Size()})
			})
		},
	}
}

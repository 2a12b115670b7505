package rbdcmd

import (
	"context"
	"fmt"
	"io"
	"math/bits"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/rbd"
)

func cloneCommand(e *env) *cobra.Command {
	var objectSize, stripeUnit sizeFlag
	var stripeCount uint64
	var dataPool string
	c := &cobra.Command{
		Use:   "clone [POOL/]IMAGE@SNAP [POOL/]CHILD",
		Short: "Make a copy-on-write clone of a protected snapshot",
		Long: `Make CHILD a clone of IMAGE@SNAP: an image that reads as the snapshot
until written, storing only what is written to it (the rest reads through
to the parent). The snapshot must be protected (rbd snap protect) and
stays so while it has clones; rbd flatten makes a clone independent. The
clone may be in another pool; it takes the parent's object size and
striping unless --object-size, --stripe-unit or --stripe-count say
otherwise.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := e.parseSpec(args[0], 1)
			if err != nil {
				return err
			}
			dst, err := e.parseSpec(args[1], -1)
			if err != nil {
				return err
			}
			o := rbd.CreateOptions{StripeUnit: stripeUnit.v, StripeCount: stripeCount, DataPool: dataPool}
			if objectSize.set {
				if objectSize.v == 0 || objectSize.v&(objectSize.v-1) != 0 {
					return fmt.Errorf("--object-size %d is not a power of two; use e.g. 4M (EINVAL)", objectSize.v)
				}
				o.Order = uint8(bits.TrailingZeros64(objectSize.v))
			}
			if o.Order == 0 && (o.StripeUnit != 0 || o.StripeCount != 0) {
				return fmt.Errorf("--stripe-unit and --stripe-count need --object-size too (EINVAL)")
			}
			return e.withPool(cmd, dst.pool, func(ctx context.Context, p *rbd.Pool) error {
				parent := p
				if src.pool != dst.pool {
					var err error
					if parent, err = rbd.NewPool(p.Conn(), src.pool, rbd.Options{}); err != nil {
						return err
					}
				}
				if err := p.Clone(ctx, parent, src.image, src.snap, dst.image, o); err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: dst.pool, Image: dst.image})
			})
		},
	}
	f := c.Flags()
	f.Var(&objectSize, "object-size", "size of the clone's data objects, a power of two from 64K to 32M (default: the parent's)")
	f.Var(&stripeUnit, "stripe-unit", "bytes dealt to one object of a stripe before the next (with --object-size)")
	f.Uint64Var(&stripeCount, "stripe-count", 0, "objects a stripe spans (with --object-size)")
	f.StringVar(&dataPool, "data-pool", "", "pool of the clone's data objects (default: the clone's pool)")
	return c
}

// flattenReport is flatten's JSON result.
type flattenReport struct {
	Pool    string `json:"pool"`
	Image   string `json:"image"`
	Objects uint64 `json:"objects"`
}

func flattenCommand(e *env) *cobra.Command {
	var noProgress bool
	c := &cobra.Command{
		Use:   "flatten [POOL/]IMAGE",
		Short: "Copy a clone's parent data into it and detach it from its parent",
		Long: `Make a clone independent: every object of the parent's data the clone
does not have yet is copied into it, then the clone forgets its parent
and the parent's snapshot forgets the clone (which may then be
unprotected and removed). I/O to the clone may go on meanwhile. The
clone's older snapshots still read the parent: until they are removed,
the clone stays its child (rbd info shows overlap 0). A progress line is
drawn on a terminal's stderr.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], -1)
			if err != nil {
				return err
			}
			return e.withImage(cmd, s, rbd.OpenOptions{}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				var objects uint64
				var bar func(uint64)
				o := rbd.FlattenOptions{Progress: func(done, total uint64) {
					if bar == nil {
						bar = progressBar(cmd.ErrOrStderr(), !noProgress, "Image flatten", total)
						if bar == nil {
							bar = func(uint64) {}
						}
					}
					objects = total
					bar(done)
				}}
				if err := img.Flatten(ctx, o); err != nil {
					return err
				}
				return e.printSilent(flattenReport{Pool: s.pool, Image: s.image, Objects: objects})
			})
		},
	}
	c.Flags().BoolVar(&noProgress, "no-progress", false, "draw no progress line")
	return c
}

func childrenCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "children [POOL/]IMAGE@SNAP",
		Short: "List the clones of a snapshot",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], 1)
			if err != nil {
				return err
			}
			return e.withImage(cmd, spec{pool: s.pool, image: s.image}, rbd.OpenOptions{ReadOnly: true}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				kids, err := img.Children(ctx, s.snap)
				if err != nil {
					return err
				}
				return e.out.Print(kids, func(w io.Writer) error {
					for _, k := range kids {
						name := k.Image
						if name == "" {
							name = "(unnamed, id " + k.ImageID + ")"
						}
						if _, err := fmt.Fprintf(w, "%s/%s\n", k.Pool, name); err != nil {
							return err
						}
					}
					return nil
				})
			})
		},
	}
}

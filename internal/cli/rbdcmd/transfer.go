package rbdcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/rbd"
)

// progressBar returns a TransferOptions.Progress that draws
// "VERB: NN% complete..." on w, as Ceph's rbd does, when w is a terminal
// and show is set; else nil.
func progressBar(w io.Writer, show bool, verb string, total uint64) func(uint64) {
	f, ok := w.(*os.File)
	if !show || !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	last := -1
	return func(done uint64) {
		pct := 100
		if total > 0 {
			pct = int(done * 100 / total)
		}
		if pct == last {
			return
		}
		last = pct
		end := ""
		if done >= total {
			end = " done.\n"
		}
		fmt.Fprintf(f, "\r%s: %d%% complete...%s", verb, pct, end)
	}
}

func importCommand(e *env) *cobra.Command {
	var objectSize, stripeUnit sizeFlag
	var stripeCount uint64
	var dataPool string
	var features []string
	var noProgress bool
	c := &cobra.Command{
		Use:   "import FILE|- [POOL/]IMAGE",
		Short: "Create an image from a raw disk image (a file, or stdin for -), sparsely",
		Long: `Create IMAGE with the bytes of FILE (or of stdin, for -): the image's
size is the file's (or the stream's length). 4 KiB blocks of zeros are not
written, so the image holds data only where the file does; 16 chunks of
4 MiB are written at once. A progress line is drawn on a terminal's stderr.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[1], -1)
			if err != nil {
				return err
			}
			o := rbd.CreateOptions{StripeUnit: stripeUnit.v, StripeCount: stripeCount, DataPool: dataPool}
			if err := imageFeatures(features, &o); err != nil {
				return err
			}
			if objectSize.set {
				if objectSize.v == 0 || objectSize.v&(objectSize.v-1) != 0 {
					return fmt.Errorf("--object-size %d is not a power of two; use e.g. 4M (EINVAL)", objectSize.v)
				}
				o.Order = uint8(bits.TrailingZeros64(objectSize.v))
			}
			var r io.Reader = cmd.InOrStdin()
			size := int64(-1)
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return fmt.Errorf("import: %w", err)
				}
				defer f.Close()
				st, err := f.Stat()
				if err != nil {
					return fmt.Errorf("import: %w", err)
				}
				if st.Mode().IsRegular() {
					size = st.Size()
				}
				r = f
			}
			return e.withPool(cmd, s.pool, func(ctx context.Context, p *rbd.Pool) error {
				t := rbd.TransferOptions{Progress: progressBar(cmd.ErrOrStderr(), !noProgress && size >= 0, "Importing image", uint64(max(size, 0)))}
				if err := rbd.Import(ctx, p, s.image, r, size, o, t); err != nil {
					return err
				}
				info, err := p.Stat(ctx, s.image)
				if err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: s.image, Size: info.Size})
			})
		},
	}
	f := c.Flags()
	f.Var(&objectSize, "object-size", "size of the data objects, a power of two from 64K to 32M (default 4M)")
	f.Var(&stripeUnit, "stripe-unit", "bytes dealt to one object of a stripe before the next (default: the object size)")
	f.Uint64Var(&stripeCount, "stripe-count", 0, "objects a stripe spans (default 1)")
	f.StringVar(&dataPool, "data-pool", "", "pool of the data objects (default: the image's pool)")
	f.StringSliceVar(&features, "image-feature", nil, "the features: layering, object-map (default both)")
	f.BoolVar(&noProgress, "no-progress", false, "draw no progress line")
	return c
}

func exportCommand(e *env) *cobra.Command {
	var noProgress bool
	var cpuProfile string
	c := &cobra.Command{
		Use:   "export [POOL/]IMAGE[@SNAP] FILE|-",
		Short: "Write an image (or a snapshot) to a raw file, sparsely, or to stdout for -",
		Long: `Write the image's bytes to FILE (which must not exist) or to stdout (-).
Ranges the image holds no data in are not read (the object map says
which); in a file they are left as holes. 16 chunks of 4 MiB are read at
once. A progress line is drawn on a terminal's stderr.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], 0)
			if err != nil {
				return err
			}
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer func() { _ = stopProfile() }() // a profile that fails to close fails no export
			return e.withImage(cmd, s, rbd.OpenOptions{ReadOnly: true, Snap: s.snap}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				t := rbd.TransferOptions{Progress: progressBar(cmd.ErrOrStderr(), !noProgress, "Exporting image", img.Size())}
				if args[1] == "-" {
					return img.Export(ctx, cmd.OutOrStdout(), t)
				}
				f, err := os.OpenFile(args[1], os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("export: %s exists; remove it or name another file (EEXIST)", args[1])
				}
				if err != nil {
					return fmt.Errorf("export: %w", err)
				}
				if err := img.Export(ctx, f, t); err != nil {
					return errors.Join(err, f.Close())
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("export: %w", err)
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: s.image, Snap: s.snap, Size: img.Size()})
			})
		},
	}
	c.Flags().BoolVar(&noProgress, "no-progress", false, "draw no progress line")
	addCPUProfileFlag(c, &cpuProfile)
	return c
}

func exportDiffCommand(e *env) *cobra.Command {
	var fromSnap string
	var noProgress bool
	c := &cobra.Command{
		Use:   "export-diff [POOL/]IMAGE[@SNAP] FILE|- [--from-snap SNAP]",
		Short: "Write what changed since --from-snap (or since empty) in Ceph's rbd diff v1 format",
		Long: `Write the changes between snapshot --from-snap (without it: an empty
image) and IMAGE (its head, or @SNAP) to FILE (which must not exist) or
stdout: the new size, then the 4 KiB blocks that changed, as data or as
zeros (docs/FORMATS.md "Block image diffs"; Ceph's rbd import-diff reads
it). import-diff applies it to another image.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], 0)
			if err != nil {
				return err
			}
			return e.withImage(cmd, s, rbd.OpenOptions{ReadOnly: true, Snap: s.snap}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				t := rbd.TransferOptions{Progress: progressBar(cmd.ErrOrStderr(), !noProgress, "Exporting image", img.Size())}
				if args[1] == "-" {
					return img.ExportDiff(ctx, fromSnap, cmd.OutOrStdout(), t)
				}
				f, err := os.OpenFile(args[1], os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("export-diff: %s exists; remove it or name another file (EEXIST)", args[1])
				}
				if err != nil {
					return fmt.Errorf("export-diff: %w", err)
				}
				if err := img.ExportDiff(ctx, fromSnap, f, t); err != nil {
					return errors.Join(err, f.Close())
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("export-diff: %w", err)
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: s.image, Snap: s.snap, Size: img.Size()})
			})
		},
	}
	c.Flags().StringVar(&fromSnap, "from-snap", "", "the snapshot the diff starts from (default: an empty image)")
	c.Flags().BoolVar(&noProgress, "no-progress", false, "draw no progress line")
	return c
}

func importDiffCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "import-diff FILE|- [POOL/]IMAGE",
		Short: "Apply a diff (rbd diff v1, from export-diff) to an image",
		Long: `Apply the diff in FILE (or stdin) to IMAGE, which must have the diff's
from-snapshot: it takes the diff's size and changed blocks, then a
snapshot named as the diff's to-snapshot, if it names one.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[1], -1)
			if err != nil {
				return err
			}
			var r io.Reader = cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return fmt.Errorf("import-diff: %w", err)
				}
				defer f.Close()
				r = f
			}
			return e.withImage(cmd, s, rbd.OpenOptions{}, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				if err := img.ImportDiff(ctx, r, rbd.TransferOptions{}); err != nil {
					return err
				}
				return e.printSilent(imageReport{Pool: s.pool, Image: s.image, Size: img.Size()})
			})
		},
	}
}

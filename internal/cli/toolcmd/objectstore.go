package toolcmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
)

// osFlags are the flags every objectstore command shares.
type osFlags struct {
	path   string
	device string
}

func (f *osFlags) options() (blockstore.Options, error) {
	if f.path == "" {
		return blockstore.Options{}, fmt.Errorf("no store given (--path DIR)")
	}
	return blockstore.Options{Path: f.path, DevicePath: f.device}, nil
}

// open opens the store at --path, with a clear error when there is none.
func (f *osFlags) open() (*blockstore.Store, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	if err := f.exists(); err != nil {
		return nil, err
	}
	return blockstore.Open(opts)
}

func (f *osFlags) exists() error {
	if _, err := os.Stat(f.path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no store at %s: the directory does not exist (create one with \"cuttle objectstore mkfs\")", f.path)
		}
		return err
	}
	if _, err := os.Stat(f.path + "/db"); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no store at %s (create one with \"cuttle objectstore mkfs\")", f.path)
	}
	return nil
}

// closeStore closes s, keeping the first error.
func closeStore(s *blockstore.Store, err *error) {
	if cerr := s.Close(); *err == nil && cerr != nil {
		*err = cerr
	}
}

// AddObjectStoreCommands adds "cuttle objectstore" under root: make,
// check, list, dump, read and benchmark an OSD's store offline.
func AddObjectStoreCommands(root *cobra.Command, out *cmdutil.Output) {
	f := &osFlags{}
	cmd := &cobra.Command{
		Use:   "objectstore",
		Short: "Create, check and inspect a local block store (like ceph-objectstore-tool and ceph-bluestore-tool)",
		Long: `Create, check and inspect a local block store: the engine an OSD keeps its
objects in (a data file plus a Pebble database of metadata, see
internal/objectstore/blockstore).

Every command works on the store in --path DIR, which must not be open in
another process (the OSD must be stopped).`,
	}
	cmd.PersistentFlags().StringVar(&f.path, "path", "", "store directory (required)")
	cmd.PersistentFlags().StringVar(&f.device, "device", "", "data file or block device to use instead of DIR/block")
	cmd.AddCommand(osMkfsCommand(out, f), osFsckCommand(out, f), osListCommand(out, f),
		osDumpCommand(out, f), osGetCommand(out, f), osBenchCommand(out, f))
	root.AddCommand(cmd)
}

// mkfsInfo is what "objectstore mkfs" prints.
type mkfsInfo struct {
	Path          string `json:"path"`
	Size          uint64 `json:"size"`
	AllocUnit     uint64 `json:"alloc_unit"`
	ChecksumBlock uint64 `json:"checksum_block"`
	Units         uint64 `json:"units"`
}

func osMkfsCommand(out *cmdutil.Output, f *osFlags) *cobra.Command {
	var size, au, cb string
	cmd := &cobra.Command{
		Use:   "mkfs --path DIR --size SIZE [--alloc-unit 64K] [--checksum-block 4K]",
		Short: "Create an empty store",
		Long: `Create an empty store in DIR (made if missing): a data file DIR/block of
SIZE bytes (or the --device given, which must exist) and a Pebble database
DIR/db. SIZE is rounded down to a multiple of the allocation unit. Sizes
take binary suffixes: 64K, 10G, 1.5T (K = 1024).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options()
			if err != nil {
				return err
			}
			if size == "" {
				return fmt.Errorf("no size given (--size SIZE, e.g. 10G)")
			}
			if opts.Size, err = cmdutil.ParseSize(size); err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			if opts.AllocUnit, err = cmdutil.ParseSize(au); err != nil {
				return fmt.Errorf("--alloc-unit: %w", err)
			}
			if opts.ChecksumBlock, err = cmdutil.ParseSize(cb); err != nil {
				return fmt.Errorf("--checksum-block: %w", err)
			}
			if opts.AllocUnit == 0 || opts.ChecksumBlock == 0 {
				return fmt.Errorf("the allocation unit and checksum block must not be 0")
			}
			if opts.Size < opts.AllocUnit {
				return fmt.Errorf("--size %s is smaller than the allocation unit %s", size, cmdutil.FormatSize(opts.AllocUnit))
			}
			if err := blockstore.Mkfs(opts); err != nil {
				return err
			}
			info := mkfsInfo{Path: f.path, Size: opts.Size - opts.Size%opts.AllocUnit, AllocUnit: opts.AllocUnit, ChecksumBlock: opts.ChecksumBlock}
			info.Units = info.Size / info.AllocUnit
			return out.Print(info, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "created store %s: %s (%d bytes), %d allocation units of %s, checksum block %s\n",
					info.Path, cmdutil.FormatSize(info.Size), info.Size, info.Units, cmdutil.FormatSize(info.AllocUnit), cmdutil.FormatSize(info.ChecksumBlock))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&size, "size", "", "device size, e.g. 10G (required)")
	cmd.Flags().StringVar(&au, "alloc-unit", "64K", "allocation unit: a power of two from the checksum block to 1G")
	cmd.Flags().StringVar(&cb, "checksum-block", "4K", "bytes per crc32c: a power of two of at least 512")
	return cmd
}

func osFsckCommand(out *cmdutil.Output, f *osFlags) *cobra.Command {
	var fo blockstore.FsckOptions
	cmd := &cobra.Command{
		Use:   "fsck --path DIR [--deep] [--repair]",
		Short: "Check a store's metadata (and with --deep its data) for consistency",
		Long: `Check a closed store: every key and record decodes, every allocation unit an
object maps belongs to that object only and is marked used in the
allocation bitmap, every unit marked used belongs to an object (else it is
leaked), omap entries belong to existing objects, the per-pool counters
match the records, deferred writes are well formed. --deep also reads
every allocated unit and verifies every checksum.

--repair fixes what is derived metadata, in one atomic batch: it frees
leaked space, marks owned-but-free units used, deletes orphaned omap
entries and rewrites wrong counters. It never changes object data or
records; if a record does not decode it frees and deletes nothing.

The exit status is 1 if problems remain after any repair.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options()
			if err != nil {
				return err
			}
			if err := f.exists(); err != nil {
				return err
			}
			rep, err := blockstore.Fsck(cmd.Context(), opts, fo)
			if err != nil {
				return err
			}
			if err := out.Print(rep, func(w io.Writer) error { return printFsck(w, rep) }); err != nil {
				return err
			}
			if !rep.Clean() {
				return fmt.Errorf("fsck: %d problems found, %d repaired", rep.Found, rep.Repaired)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fo.Deep, "deep", false, "read all object data and verify every checksum")
	cmd.Flags().BoolVar(&fo.Repair, "repair", false, "fix leaked space, the bitmap, orphaned omap entries, unit and shard keys, and counters")
	return cmd
}

func printFsck(w io.Writer, r blockstore.FsckReport) error {
	mode := "fsck"
	if r.Deep {
		mode = "deep fsck"
	}
	fmt.Fprintf(w, "%s of %s\n", mode, r.Path)
	fmt.Fprintf(w, "device: %s, allocation unit %s, checksum block %s\n", cmdutil.FormatSize(r.Size), cmdutil.FormatSize(r.AllocUnit), cmdutil.FormatSize(r.ChecksumBlock))
	fmt.Fprintf(w, "collections: %d, objects: %d, extents: %d, omap entries: %d\n", r.Collections, r.Objects, r.Extents, r.OmapEntries)
	fmt.Fprintf(w, "space: %d bytes used, %d free, %d owned by objects, %d stored\n", r.BytesUsed, r.BytesFree, r.BytesOwned, r.BytesStored)
	if r.PendingDeferred > 0 {
		fmt.Fprintf(w, "pending deferred writes: %d (replayed at the next open)\n", r.PendingDeferred)
	}
	if r.Deep {
		fmt.Fprintf(w, "checksum blocks verified: %d\n", r.BlocksVerified)
	}
	if r.Found == 0 {
		_, err := fmt.Fprintln(w, "no problems found")
		return err
	}
	fmt.Fprintf(w, "problems: %d found, %d repaired\n", r.Found, r.Repaired)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
	if r.Omitted > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", r.Omitted)
	}
	if r.RepairSkipped != "" {
		fmt.Fprintf(w, "repair skipped: %s\n", r.RepairSkipped)
	}
	return nil
}

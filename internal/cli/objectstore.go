package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

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

func addObjectStoreCommands(root *cobra.Command, out *Output) {
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

// parseSize parses a byte count: an integer or decimal number with an
// optional binary suffix K, M, G, T or P (also written KiB, KB, k...).
func parseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && !(t[i-1] >= '0' && t[i-1] <= '9') {
		i--
	}
	num, suffix := t[:i], strings.ToUpper(strings.TrimSpace(t[i:]))
	shift := 0
	switch strings.TrimSuffix(strings.TrimSuffix(suffix, "B"), "I") {
	case "":
	case "K":
		shift = 10
	case "M":
		shift = 20
	case "G":
		shift = 30
	case "T":
		shift = 40
	case "P":
		shift = 50
	default:
		return 0, fmt.Errorf("bad size %q: unknown unit %q (want K, M, G, T or P)", s, t[i:])
	}
	if suffix == "I" || suffix == "IB" {
		return 0, fmt.Errorf("bad size %q", s)
	}
	if num == "" {
		return 0, fmt.Errorf("bad size %q: no number", s)
	}
	if !strings.Contains(num, ".") {
		v, err := strconv.ParseUint(num, 10, 64)
		if err != nil || (shift > 0 && v > math.MaxUint64>>shift) {
			return 0, fmt.Errorf("bad size %q: not a number of bytes below 2^64", s)
		}
		return v << shift, nil
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	b := v * float64(uint64(1)<<shift)
	if b >= math.MaxUint64 || b != math.Trunc(b) {
		return 0, fmt.Errorf("bad size %q: not a whole number of bytes", s)
	}
	return uint64(b), nil
}

// formatSize prints n in the largest binary unit it reaches ("64 KiB",
// "1.5 GiB", "100 B").
func formatSize(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for u+1 < len(units) && n >= 1<<(10*(u+1)) {
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	div := uint64(1) << (10 * u)
	if n%div == 0 {
		return fmt.Sprintf("%d %s", n/div, units[u])
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(div), units[u])
}

// mkfsInfo is what "objectstore mkfs" prints.
type mkfsInfo struct {
	Path          string `json:"path"`
	Size          uint64 `json:"size"`
	AllocUnit     uint64 `json:"alloc_unit"`
	ChecksumBlock uint64 `json:"checksum_block"`
	Units         uint64 `json:"units"`
}

func osMkfsCommand(out *Output, f *osFlags) *cobra.Command {
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
			if opts.Size, err = parseSize(size); err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			if opts.AllocUnit, err = parseSize(au); err != nil {
				return fmt.Errorf("--alloc-unit: %w", err)
			}
			if opts.ChecksumBlock, err = parseSize(cb); err != nil {
				return fmt.Errorf("--checksum-block: %w", err)
			}
			if opts.AllocUnit == 0 || opts.ChecksumBlock == 0 {
				return fmt.Errorf("the allocation unit and checksum block must not be 0")
			}
			if opts.Size < opts.AllocUnit {
				return fmt.Errorf("--size %s is smaller than the allocation unit %s", size, formatSize(opts.AllocUnit))
			}
			if err := blockstore.Mkfs(opts); err != nil {
				return err
			}
			info := mkfsInfo{Path: f.path, Size: opts.Size - opts.Size%opts.AllocUnit, AllocUnit: opts.AllocUnit, ChecksumBlock: opts.ChecksumBlock}
			info.Units = info.Size / info.AllocUnit
			return out.Print(info, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "created store %s: %s (%d bytes), %d allocation units of %s, checksum block %s\n",
					info.Path, formatSize(info.Size), info.Size, info.Units, formatSize(info.AllocUnit), formatSize(info.ChecksumBlock))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&size, "size", "", "device size, e.g. 10G (required)")
	cmd.Flags().StringVar(&au, "alloc-unit", "64K", "allocation unit: a power of two from the checksum block to 1G")
	cmd.Flags().StringVar(&cb, "checksum-block", "4K", "bytes per crc32c: a power of two of at least 512")
	return cmd
}

func osFsckCommand(out *Output, f *osFlags) *cobra.Command {
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
	fmt.Fprintf(w, "device: %s, allocation unit %s, checksum block %s\n", formatSize(r.Size), formatSize(r.AllocUnit), formatSize(r.ChecksumBlock))
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

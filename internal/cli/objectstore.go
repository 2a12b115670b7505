package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/bench"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/objid"
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
	cmd.Flags().BoolVar(&fo.Repair, "repair", false, "fix leaked space, the bitmap, orphaned omap entries and counters")
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

// collectionInfo is one line of "objectstore list".
type collectionInfo struct {
	Collection string `json:"collection"`
	Objects    int    `json:"objects"`
}

// objectInfo names an object in JSON output.
type objectInfo struct {
	ID        string `json:"id"`
	Pool      int64  `json:"pool"`
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
	Name      string `json:"name"`
	Snap      string `json:"snap"`
	Hash      string `json:"hash"`
}

func newObjectInfo(o objid.ID) objectInfo {
	return objectInfo{ID: o.String(), Pool: o.Pool, Namespace: o.Namespace, Key: o.Key, Name: o.Name,
		Snap: objid.SnapString(o.Snap), Hash: fmt.Sprintf("%08x", o.Hash)}
}

// listAll returns every object of c in order.
func listAll(ctx context.Context, s objectstore.Store, c objectstore.CollectionID) ([]objid.ID, error) {
	var all []objid.ID
	next := objid.ID{}
	for {
		objs, n, err := s.ListObjects(ctx, c, next, 1024)
		if err != nil {
			return nil, err
		}
		all = append(all, objs...)
		if n.IsMax() {
			return all, nil
		}
		next = n
	}
}

// collectionArg parses --collection and checks the collection exists.
func collectionArg(ctx context.Context, s objectstore.Store, name string) (objectstore.CollectionID, error) {
	if name == "" {
		return objectstore.CollectionID{}, fmt.Errorf("no collection given (--collection C, e.g. 1.1f_head or meta)")
	}
	c, err := objectstore.ParseCollectionID(name)
	if err != nil {
		return c, err
	}
	ok, err := s.CollectionExists(ctx, c)
	if err != nil {
		return c, err
	}
	if !ok {
		return c, fmt.Errorf("no collection %s in the store (see \"cuttle objectstore list\")", c)
	}
	return c, nil
}

func osListCommand(out *Output, f *osFlags) *cobra.Command {
	var coll string
	cmd := &cobra.Command{
		Use:   "list --path DIR [--collection C]",
		Short: "List the collections, or the objects of one in hash order",
		Long: `Without --collection, list every collection with its number of objects.
With --collection C (as "meta", "POOL.SEED_head" or "POOL.SEED_TEMP", the
seed in hex), list C's objects in hash order, one per line in Ceph's
hobject form POOL:HASHKEY:NAMESPACE:KEY:NAME:SNAP.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			s, err := f.open()
			if err != nil {
				return err
			}
			defer closeStore(s, &err)
			if coll == "" {
				colls, err := s.ListCollections(ctx)
				if err != nil {
					return err
				}
				infos := make([]collectionInfo, 0, len(colls))
				for _, c := range colls {
					objs, err := listAll(ctx, s, c)
					if err != nil {
						return err
					}
					infos = append(infos, collectionInfo{Collection: c.String(), Objects: len(objs)})
				}
				return out.Print(infos, func(w io.Writer) error {
					if len(infos) == 0 {
						_, err := fmt.Fprintln(w, "no collections")
						return err
					}
					for _, c := range infos {
						if _, err := fmt.Fprintf(w, "%s\t%d objects\n", c.Collection, c.Objects); err != nil {
							return err
						}
					}
					return nil
				})
			}
			c, err := collectionArg(ctx, s, coll)
			if err != nil {
				return err
			}
			objs, err := listAll(ctx, s, c)
			if err != nil {
				return err
			}
			infos := make([]objectInfo, 0, len(objs))
			for _, o := range objs {
				infos = append(infos, newObjectInfo(o))
			}
			return out.Print(infos, func(w io.Writer) error {
				for _, o := range infos {
					if _, err := fmt.Fprintln(w, o.ID); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&coll, "collection", "", "collection whose objects to list")
	return cmd
}

// objectFlags select one object: --collection and --object, narrowed by
// --pool, --namespace, --key and --snap.
type objectFlags struct {
	coll, name, ns, key, snap string
	pool                      int64
}

func (of *objectFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&of.coll, "collection", "", "collection holding the object (required)")
	fl.StringVar(&of.name, "object", "", "object name (required)")
	fl.Int64Var(&of.pool, "pool", 0, "object's pool (default: any; the collection's pool is tried first)")
	fl.StringVar(&of.ns, "namespace", "", "object's namespace (default: any; \"\" is tried first)")
	fl.StringVar(&of.key, "key", "", "object's locator key (default: any; none is tried first)")
	fl.StringVar(&of.snap, "snap", "", "snapshot: head, snapdir or a hex snap id (default: any; head is tried first)")
}

func parseSnap(s string) (uint64, error) {
	switch s {
	case "head":
		return objid.NoSnap, nil
	case "snapdir":
		return objid.SnapDir, nil
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		return 0, fmt.Errorf("bad --snap %q: want head, snapdir or a hex snap id", s)
	}
	return v, nil
}

// resolve finds the one object the flags name in an open store. The
// object is looked up directly first (default pool, namespace, key and
// snap); failing that the collection is searched for objects with the
// name that match every flag given, preferring the head when --snap is
// not given and several versions match.
func (of *objectFlags) resolve(cmd *cobra.Command, s objectstore.Store) (objectstore.CollectionID, objid.ID, error) {
	ctx := cmd.Context()
	c, err := collectionArg(ctx, s, of.coll)
	if err != nil {
		return c, objid.ID{}, err
	}
	if of.name == "" {
		return c, objid.ID{}, fmt.Errorf("no object given (--object NAME)")
	}
	changed := cmd.Flags().Changed
	pool := c.Pool
	if c.Kind == objectstore.KindMeta {
		pool = -1
	}
	if changed("pool") {
		pool = of.pool
	}
	snap := objid.NoSnap
	if changed("snap") {
		if snap, err = parseSnap(of.snap); err != nil {
			return c, objid.ID{}, err
		}
	}
	direct := objid.New(pool, of.ns, of.key, of.name, snap)
	if _, err := s.Stat(ctx, c, direct); err == nil {
		return c, direct, nil
	} else if !errors.Is(err, objectstore.ErrNotFound) {
		return c, objid.ID{}, err
	}
	objs, err := listAll(ctx, s, c)
	if err != nil {
		return c, objid.ID{}, err
	}
	var found []objid.ID
	for _, o := range objs {
		if o.Name == of.name && (!changed("pool") || o.Pool == pool) && (!changed("namespace") || o.Namespace == of.ns) &&
			(!changed("key") || o.Key == of.key) && (!changed("snap") || o.Snap == snap) {
			found = append(found, o)
		}
	}
	if len(found) > 1 && !changed("snap") {
		var heads []objid.ID
		for _, o := range found {
			if o.Snap == objid.NoSnap {
				heads = append(heads, o)
			}
		}
		if len(heads) == 1 {
			found = heads
		}
	}
	switch len(found) {
	case 0:
		return c, objid.ID{}, fmt.Errorf("no object %q in %s (see \"cuttle objectstore list --collection %s\")", of.name, c, c)
	case 1:
		return c, found[0], nil
	}
	names := make([]string, len(found))
	for i, o := range found {
		names[i] = o.String()
	}
	return c, objid.ID{}, fmt.Errorf("%d objects named %q in %s: %s; choose one with --pool, --namespace, --key or --snap",
		len(found), of.name, c, strings.Join(names, ", "))
}

// dumpInfo is what "objectstore dump" prints.
type dumpInfo struct {
	Collection string                  `json:"collection"`
	Object     objectInfo              `json:"object"`
	Size       uint64                  `json:"size"`
	Allocated  uint64                  `json:"allocated"`
	Attrs      []kvInfo                `json:"attrs"`
	OmapHeader []byte                  `json:"omap_header"`
	Omap       []kvInfo                `json:"omap"`
	Layout     blockstore.ObjectLayout `json:"layout"`
}

// kvInfo is an attribute or omap entry; JSON carries the value in base64.
type kvInfo struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// showBytes prints a value for people: quoted if it is printable text,
// hex otherwise, cut after 64 bytes.
func showBytes(b []byte) string {
	const limit = 64
	cut := b
	if len(cut) > limit {
		cut = cut[:limit]
	}
	text := utf8.Valid(cut)
	for _, r := range string(cut) {
		if r < 0x20 || r == 0x7f {
			text = false
			break
		}
	}
	var s string
	if text {
		s = strconv.Quote(string(cut))
	} else {
		s = fmt.Sprintf("%x", cut)
	}
	if len(b) > limit {
		s += "..."
	}
	return fmt.Sprintf("(%d bytes) %s", len(b), s)
}

func osDumpCommand(out *Output, f *osFlags) *cobra.Command {
	var of objectFlags
	cmd := &cobra.Command{
		Use:   "dump --path DIR --collection C --object NAME [--pool P --namespace NS --key K --snap S]",
		Short: "Print an object's size, attributes, omap and extent map (with device offsets and checksums)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			s, err := f.open()
			if err != nil {
				return err
			}
			defer closeStore(s, &err)
			c, o, err := of.resolve(cmd, s)
			if err != nil {
				return err
			}
			d := dumpInfo{Collection: c.String(), Object: newObjectInfo(o), Attrs: []kvInfo{}, Omap: []kvInfo{}}
			st, err := s.Stat(ctx, c, o)
			if err != nil {
				return err
			}
			d.Size, d.Allocated = st.Size, st.Allocated
			attrs, err := s.GetAttrs(ctx, c, o)
			if err != nil {
				return err
			}
			for _, k := range sortedKeys(attrs) {
				d.Attrs = append(d.Attrs, kvInfo{k, attrs[k]})
			}
			if d.OmapHeader, err = s.OmapGetHeader(ctx, c, o); err != nil {
				return err
			}
			for after := ""; ; {
				kvs, more, err := s.OmapIterate(ctx, c, o, after, "", 1024)
				if err != nil {
					return err
				}
				for _, kv := range kvs {
					d.Omap = append(d.Omap, kvInfo{kv.Key, kv.Value})
				}
				if !more || len(kvs) == 0 {
					break
				}
				after = kvs[len(kvs)-1].Key
			}
			if d.Layout, err = s.Layout(ctx, c, o); err != nil {
				return err
			}
			return out.Print(d, func(w io.Writer) error { return printDump(w, d) })
		},
	}
	of.add(cmd)
	return cmd
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func printDump(w io.Writer, d dumpInfo) error {
	fmt.Fprintf(w, "collection: %s\n", d.Collection)
	fmt.Fprintf(w, "object: %s\n", d.Object.ID)
	fmt.Fprintf(w, "  pool %d, namespace %q, key %q, name %q, snap %s, hash %s\n",
		d.Object.Pool, d.Object.Namespace, d.Object.Key, d.Object.Name, d.Object.Snap, d.Object.Hash)
	fmt.Fprintf(w, "nid: %d\n", d.Layout.Nid)
	fmt.Fprintf(w, "size: %d\n", d.Size)
	fmt.Fprintf(w, "allocated: %d\n", d.Allocated)
	fmt.Fprintf(w, "attrs: %d\n", len(d.Attrs))
	for _, a := range d.Attrs {
		fmt.Fprintf(w, "  %q %s\n", a.Key, showBytes(a.Value))
	}
	fmt.Fprintf(w, "omap header: %s\n", showBytes(d.OmapHeader))
	fmt.Fprintf(w, "omap: %d\n", len(d.Omap))
	for _, kv := range d.Omap {
		fmt.Fprintf(w, "  %q %s\n", kv.Key, showBytes(kv.Value))
	}
	fmt.Fprintf(w, "extents: %d (checksum block %d)\n", len(d.Layout.Extents), d.Layout.ChecksumBlock)
	for _, e := range d.Layout.Extents {
		fmt.Fprintf(w, "  %#x~%#x at device %#x\n", e.Offset, e.Length, e.DevOffset)
		// Eight checksums a line, each line headed by the logical offset
		// of its first block.
		for i, c := range e.Checksums {
			if i%8 == 0 {
				fmt.Fprintf(w, "    %#x crc32c", e.Offset+uint64(i)*d.Layout.ChecksumBlock)
			}
			fmt.Fprintf(w, " %08x", c)
			if i%8 == 7 || i == len(e.Checksums)-1 {
				fmt.Fprintln(w)
			}
		}
	}
	fmt.Fprintf(w, "pages: %d\n", len(d.Layout.Pages))
	for _, p := range d.Layout.Pages {
		fmt.Fprintf(w, "  %#x~%#x\n", p.Offset, p.Length)
	}
	return nil
}

// getInfo is what "objectstore get -o FILE" prints.
type getInfo struct {
	Collection string `json:"collection"`
	Object     string `json:"object"`
	Bytes      uint64 `json:"bytes"`
	Output     string `json:"output"`
}

func osGetCommand(out *Output, f *osFlags) *cobra.Command {
	var of objectFlags
	var output string
	cmd := &cobra.Command{
		Use:   "get --path DIR --collection C --object NAME [...] [-o FILE]",
		Short: "Write an object's data to standard output or a file",
		Long: `Write an object's data (holes as zeros) to standard output, or to FILE with
-o, then report what was written. Every checksum is verified as the data is
read; a mismatch fails the command.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			s, err := f.open()
			if err != nil {
				return err
			}
			defer closeStore(s, &err)
			c, o, err := of.resolve(cmd, s)
			if err != nil {
				return err
			}
			st, err := s.Stat(ctx, c, o)
			if err != nil {
				return err
			}
			w := out.W
			var file *os.File
			if output != "" && output != "-" {
				if file, err = os.Create(output); err != nil {
					return err
				}
				w = file
			}
			const chunk = 4 << 20
			var n uint64
			for n < st.Size {
				b, rerr := s.Read(ctx, c, o, n, min(chunk, st.Size-n))
				if rerr == nil && len(b) == 0 {
					rerr = fmt.Errorf("short read at %d of %d bytes", n, st.Size)
				}
				if rerr != nil {
					err = rerr
					break
				}
				if _, err = w.Write(b); err != nil {
					break
				}
				n += uint64(len(b))
			}
			if file != nil {
				if cerr := file.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					_ = os.Remove(output) // no partial object left behind
				}
			}
			if err != nil || file == nil {
				return err
			}
			info := getInfo{Collection: c.String(), Object: o.String(), Bytes: n, Output: output}
			return out.Print(info, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "wrote %d bytes of %s %s to %s\n", info.Bytes, info.Collection, info.Object, info.Output)
				return err
			})
		},
	}
	of.add(cmd)
	cmd.Flags().StringVarP(&output, "out", "o", "", "file to write (default: standard output)")
	return cmd
}

// benchResult is one line of "objectstore bench".
type benchResult struct {
	Workload    string  `json:"workload"`
	BlockSize   uint64  `json:"block_size"`
	Concurrency int     `json:"concurrency"`
	Ops         int64   `json:"ops"`
	Bytes       uint64  `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	MiBps       float64 `json:"mib_per_sec"`
	IOPS        float64 `json:"iops"`
	P50us       int64   `json:"p50_us"`
	P99us       int64   `json:"p99_us"`
	MaxUs       int64   `json:"max_us"`
}

func osBenchCommand(out *Output, f *osFlags) *cobra.Command {
	var (
		workloads          string
		objSize, bs, total string
		w                  bench.Workload
	)
	cmd := &cobra.Command{
		Use:   "bench --path DIR [--workload seq-write,seq-read,rand-write,rand-read] [...]",
		Short: "Measure the store's throughput and latency (internal/bench)",
		Long: `Run workloads against the store and print, for each, throughput, operations
per second and latency percentiles. Writes wait until durable unless
--applied-only. Read and overwrite workloads first prefill their objects
(not measured); objects are written to collection 1.0_head, which is
created if missing, and are left in the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			var kinds []bench.Kind
			for _, name := range strings.Split(workloads, ",") {
				k, err := bench.ParseKind(strings.TrimSpace(name))
				if err != nil {
					return err
				}
				kinds = append(kinds, k)
			}
			if w.ObjectSize, err = parseSize(objSize); err != nil {
				return fmt.Errorf("--object-size: %w", err)
			}
			if bs != "" {
				if w.BlockSize, err = parseSize(bs); err != nil {
					return fmt.Errorf("--block-size: %w", err)
				}
			}
			if total != "" {
				if w.TotalBytes, err = parseSize(total); err != nil {
					return fmt.Errorf("--total: %w", err)
				}
			}
			s, err := f.open()
			if err != nil {
				return err
			}
			defer closeStore(s, &err)
			var results []benchResult
			for _, k := range kinds {
				w.Kind = k
				r, err := bench.RunObjectStore(cmd.Context(), s, w)
				if err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				results = append(results, benchResult{Workload: string(r.Workload), BlockSize: r.BlockSize, Concurrency: r.Concurrency,
					Ops: r.Ops, Bytes: r.Bytes, Seconds: r.Elapsed.Seconds(), MiBps: r.MiBps, IOPS: r.IOPS,
					P50us: r.P50.Microseconds(), P99us: r.P99.Microseconds(), MaxUs: r.Max.Microseconds()})
				if out.Format != FormatJSON {
					if _, err := fmt.Fprintln(out.W, r); err != nil {
						return err
					}
				}
			}
			if out.Format == FormatJSON {
				return out.Print(results, nil)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&workloads, "workload", "seq-write,seq-read,rand-write,rand-read", "comma-separated workloads to run in order")
	fl.StringVar(&objSize, "object-size", "4M", "size of each object")
	fl.StringVar(&bs, "block-size", "", "bytes per operation (default: the object size for seq-*, 4K for rand-*)")
	fl.IntVar(&w.Objects, "objects", 0, "objects the read and overwrite workloads spread over (default: 1 GiB's worth, at most 4096)")
	fl.IntVar(&w.Concurrency, "jobs", 1, "concurrent operations")
	fl.DurationVar(&w.Duration, "duration", 10*time.Second, "time limit of each workload")
	fl.StringVar(&total, "total", "", "byte limit of each workload (whichever of --duration and --total comes first)")
	fl.BoolVar(&w.AppliedOnly, "applied-only", false, "writes wait until visible, not until durable")
	return cmd
}

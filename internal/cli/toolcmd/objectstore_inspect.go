package toolcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/objid"
)

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

func osListCommand(out *cmdutil.Output, f *osFlags) *cobra.Command {
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

// openObject opens the store and resolves the object the flags of name;
// on success the caller closes the store.
func (f *osFlags) openObject(cmd *cobra.Command, of *objectFlags) (*blockstore.Store, objectstore.CollectionID, objid.ID, error) {
	s, err := f.open()
	if err != nil {
		return nil, objectstore.CollectionID{}, objid.ID{}, err
	}
	c, o, err := of.resolve(cmd, s)
	if err != nil {
		_ = s.Close()
		return nil, objectstore.CollectionID{}, objid.ID{}, err
	}
	return s, c, o, nil
}

func osDumpCommand(out *cmdutil.Output, f *osFlags) *cobra.Command {
	var of objectFlags
	cmd := &cobra.Command{
		Use:   "dump --path DIR --collection C --object NAME [--pool P --namespace NS --key K --snap S]",
		Short: "Print an object's size, attributes, omap and extent map (with device offsets and checksums)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			s, c, o, err := f.openObject(cmd, &of)
			if err != nil {
				return err
			}
			defer closeStore(s, &err)
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

func osGetCommand(out *cmdutil.Output, f *osFlags) *cobra.Command {
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
			s, c, o, err := f.openObject(cmd, &of)
			if err != nil {
				return err
			}
			defer closeStore(s, &err)
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

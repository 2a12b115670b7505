package storetest

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// castagnoli is the CRC table Dump digests data with: hardware-fast, and
// a chance of 2^-32 of missing a difference.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxDumpRead is the largest object Dump reads whole; of larger objects
// it reads the allocated extents and a byte at each end of every hole.
const maxDumpRead = 64 << 10

// Dump renders everything a store holds as text, one fact per line, for
// comparing two stores or one store before and after: every collection,
// every object in list order with its size, extents, data digest,
// attributes, omap header and entries, and the stored bytes of StatFS.
// For each collection in colls and object in objs that is absent, it
// also records the error class Stat returns, so two engines must agree on
// why an object is missing.
func Dump(ctx context.Context, s objectstore.Store, colls []objectstore.CollectionID, objs []objid.ID) (string, error) {
	return dump(ctx, s, colls, objs, nil)
}

// objKey names an object in a collection.
type objKey struct {
	c objectstore.CollectionID
	o objid.ID
}

// dump is Dump, but when only is not nil it details only the objects in
// it; of the others it records the name and place in the listing.
func dump(ctx context.Context, s objectstore.Store, colls []objectstore.CollectionID, objs []objid.ID, only map[objKey]bool) (string, error) {
	var b strings.Builder
	cs, err := s.ListCollections(ctx)
	if err != nil {
		return "", fmt.Errorf("list collections: %w", err)
	}
	sortCollections(cs)
	for _, c := range cs {
		fmt.Fprintf(&b, "collection %v\n", c)
		listed, next, err := s.ListObjects(ctx, c, objid.ID{}, 0)
		if err != nil || !next.IsMax() {
			return "", fmt.Errorf("list %v: next %v: %w", c, next, err)
		}
		for _, o := range listed {
			if only != nil && !only[objKey{c, o}] {
				fmt.Fprintf(&b, "  object %v\n", o)
				continue
			}
			if err := dumpObject(ctx, &b, s, c, o); err != nil {
				return "", fmt.Errorf("%v %v: %w", c, o, err)
			}
		}
	}
	for _, c := range colls {
		for _, o := range objs {
			if only != nil && !only[objKey{c, o}] {
				continue
			}
			if _, err := s.Stat(ctx, c, o); err != nil {
				fmt.Fprintf(&b, "absent %v %v: %s\n", c, o, ErrorClass(err))
			}
		}
	}
	st, err := s.StatFS(ctx)
	if err != nil {
		return "", fmt.Errorf("statfs: %w", err)
	}
	pools := slices.Sorted(maps.Keys(st.PoolStored))
	fmt.Fprintf(&b, "stored %d\n", st.Stored)
	for _, p := range pools {
		fmt.Fprintf(&b, "pool %d stored %d\n", p, st.PoolStored[p])
	}
	return b.String(), nil
}

func dumpObject(ctx context.Context, b *strings.Builder, s objectstore.Store, c objectstore.CollectionID, o objid.ID) error {
	st, err := s.Stat(ctx, c, o)
	if err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	exts, err := s.ExtentMap(ctx, c, o, 0, 0)
	if err != nil {
		return fmt.Errorf("extent map: %w", err)
	}
	fmt.Fprintf(b, "  object %v size %d allocated %d extents %v\n", o, st.Size, st.Allocated, exts)
	h := crc32.New(castagnoli)
	if st.Size <= maxDumpRead {
		data, err := s.Read(ctx, c, o, 0, 0)
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		h.Write(data)
	} else {
		for _, e := range exts {
			data, err := s.Read(ctx, c, o, e.Offset, e.Length)
			if err != nil {
				return fmt.Errorf("read extent: %w", err)
			}
			fmt.Fprintf(h, "%d:", e.Offset)
			h.Write(data)
		}
		samples := []uint64{0, st.Size / 3, st.Size - 1}
		for _, e := range exts {
			if e.Offset > 0 {
				samples = append(samples, e.Offset-1)
			}
			samples = append(samples, e.Offset+e.Length)
		}
		for _, off := range samples {
			data, err := s.Read(ctx, c, o, off, 1)
			if err != nil {
				return fmt.Errorf("read sample: %w", err)
			}
			fmt.Fprintf(h, "@%d:%x", off, data)
		}
	}
	fmt.Fprintf(b, "    data crc32c %08x\n", h.Sum32())
	attrs, err := s.GetAttrs(ctx, c, o)
	if err != nil {
		return fmt.Errorf("getattrs: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		fmt.Fprintf(b, "    attr %q = %s\n", k, short(attrs[k]))
	}
	hdr, err := s.OmapGetHeader(ctx, c, o)
	if err != nil {
		return fmt.Errorf("omap header: %w", err)
	}
	if len(hdr) > 0 {
		fmt.Fprintf(b, "    omap header %s\n", short(hdr))
	}
	kvs, more, err := s.OmapIterate(ctx, c, o, "", "", 0)
	if err != nil || more {
		return fmt.Errorf("omap iterate (more %v): %w", more, err)
	}
	for _, kv := range kvs {
		fmt.Fprintf(b, "    omap %q = %s\n", kv.Key, short(kv.Value))
	}
	return nil
}

// short prints a value, or its length and digest when it is long.
func short(v []byte) string {
	if len(v) <= 24 {
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%d bytes crc32c %08x", len(v), crc32.Checksum(v, castagnoli))
}

// errorClasses are the classes ErrorClass tells apart, in the order it
// tries them.
var errorClasses = []error{
	objectstore.ErrCollectionNotFound, objectstore.ErrNotFound, objectstore.ErrExists,
	objectstore.ErrNotEmpty, objectstore.ErrNoAttr, objectstore.ErrNoSpace, objectstore.ErrInvalid,
	objectstore.ErrCorrupt, objectstore.ErrClosed, context.Canceled, context.DeadlineExceeded,
}

// ErrorClass names err's class: "ok" for nil, the sentinel's message for
// a classed error, "unclassified: ..." otherwise.
func ErrorClass(err error) string {
	if err == nil {
		return "ok"
	}
	for _, c := range errorClasses {
		if errors.Is(err, c) {
			return c.Error()
		}
	}
	return "unclassified: " + err.Error()
}

// diffDumps shows the first lines where two dumps differ.
func diffDumps(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			lo := max(0, i-3)
			return fmt.Sprintf("first difference at line %d:\n--- a\n%s\n+++ b\n%s",
				i+1, strings.Join(al[lo:min(len(al), i+4)], "\n"), strings.Join(bl[lo:min(len(bl), i+4)], "\n"))
		}
	}
	return "(no difference)"
}

func (e *env) dump() string {
	e.Helper()
	d, err := Dump(e.ctx, e.s, nil, nil)
	if err != nil {
		e.Fatalf("dump: %v", err)
	}
	return d
}

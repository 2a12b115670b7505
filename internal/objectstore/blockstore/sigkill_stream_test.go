package blockstore

import (
	"context"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// A stream is a seeded, replayable sequence of transactions that one
// worker commits. Each worker owns a pool, its collections and objects,
// so the streams of concurrent workers never touch the same state: the
// recovered state of a worker's collections is the state after some
// prefix of its own stream whatever the interleaving, and the tests can
// replay that prefix on a memstore to compare.
//
// Every transaction the stream yields is valid on the state its
// predecessors leave (the generator models existence and sizes), so a
// rejected Queue is a bug of the engine or of the generator.

// streamObjects is the number of object names of a stream.
const streamObjects = 5

// streamMaxSize bounds the objects' sizes (a few allocation units).
const streamMaxSize = 6 * testAU

type streamLoc struct{ c, o int }

type streamGen struct {
	r     *rand.Rand
	colls [2]objectstore.CollectionID // main, temp
	objs  []objid.ID
	sizes map[streamLoc]uint64 // existing objects and their sizes
	n     int                  // transactions generated
}

func newStreamGen(seed uint64, worker int) *streamGen {
	pool := int64(worker + 1)
	g := &streamGen{
		r:     rand.New(rand.NewPCG(seed, 7919+uint64(worker))),
		colls: [2]objectstore.CollectionID{objectstore.PGCollection(pool, 0), objectstore.TempCollection(pool, 0)},
		sizes: make(map[streamLoc]uint64),
	}
	for i := range streamObjects {
		g.objs = append(g.objs, objid.Object(pool, "", fmt.Sprintf("w%d.o%d", worker, i)))
	}
	return g
}

// pool is the pool of the stream's collections.
func (g *streamGen) pool() int64 { return g.colls[0].Pool }

// next returns the next transaction of the stream.
func (g *streamGen) next() *objectstore.Transaction {
	g.n++
	tx := new(objectstore.Transaction)
	if g.n == 1 {
		return tx.CreateCollection(g.colls[0]).CreateCollection(g.colls[1])
	}
	for range 1 + g.r.IntN(4) {
		g.op(tx)
	}
	return tx
}

// writeRange picks a write: whole units (copy-on-write past
// overwriteInPlaceMax, deferred in place up to it), a medium
// unaligned range, or a small one within or just past the data (a
// deferred overwrite when it lands in committed space).
func (g *streamGen) writeRange(size uint64) (off, n uint64) {
	switch g.r.IntN(3) {
	case 0:
		off = uint64(g.r.IntN(streamMaxSize/testAU-1)) * testAU
		n = uint64(1+g.r.IntN(3)) * testAU
	case 1:
		off = uint64(g.r.IntN(streamMaxSize - 9000))
		n = uint64(1 + g.r.IntN(9000))
	default:
		off = uint64(g.r.IntN(int(min(size, streamMaxSize-600)) + 1))
		n = uint64(1 + g.r.IntN(500))
	}
	return off, min(n, streamMaxSize-off)
}

func (g *streamGen) op(tx *objectstore.Transaction) {
	l := streamLoc{0, g.r.IntN(streamObjects)}
	if g.r.IntN(10) == 0 {
		l.c = 1
	}
	c, o := g.colls[l.c], g.objs[l.o]
	size, exists := g.sizes[l]
	k := g.r.IntN(100)
	creates := k < 25 || (k >= 50 && k < 55) || (k >= 67 && k < 75) || (k >= 78 && k < 86) || (k >= 92 && k < 94)
	if !exists && !creates {
		k = 0 // the op needs the object: write instead
	}
	other := func() streamLoc {
		d := streamLoc{g.r.IntN(2), g.r.IntN(streamObjects)}
		if g.r.IntN(3) != 0 {
			d.c = l.c
		}
		return d
	}
	switch {
	case k < 25 || (k < 50 && size == 0):
		off, n := g.writeRange(size)
		tx.Write(c, o, off, randBytes(g.r, int(n)))
		g.sizes[l] = max(size, off+n)
	case k < 50: // small overwrite inside the data: deferred
		off := uint64(g.r.IntN(int(size)))
		n := min(uint64(1+g.r.IntN(300)), streamMaxSize-off)
		tx.Write(c, o, off, randBytes(g.r, int(n)))
		g.sizes[l] = max(size, off+n)
	case k < 55:
		off := uint64(g.r.IntN(int(size) + 1))
		n := min(uint64(1+g.r.IntN(2*testAU)), streamMaxSize-off)
		tx.Zero(c, o, off, n)
		g.sizes[l] = max(size, off+n)
	case k < 62:
		ns := uint64(g.r.IntN(int(min(size+testAU, streamMaxSize)) + 1))
		tx.Truncate(c, o, ns)
		g.sizes[l] = ns
	case k < 67:
		tx.Remove(c, o)
		delete(g.sizes, l)
	case k < 75:
		attrs := map[string][]byte{}
		for range 1 + g.r.IntN(2) {
			attrs[fmt.Sprint("a", g.r.IntN(3))] = randBytes(g.r, g.r.IntN(20))
		}
		tx.SetAttrs(c, o, attrs)
		g.sizes[l] = size
	case k < 78:
		tx.RmAttr(c, o, fmt.Sprint("a", g.r.IntN(3)))
	case k < 86:
		kv := map[string][]byte{}
		for range 1 + g.r.IntN(3) {
			kv[fmt.Sprint("k", g.r.IntN(8))] = randBytes(g.r, g.r.IntN(30))
		}
		tx.OmapSetKeys(c, o, kv)
		g.sizes[l] = size
	case k < 89:
		tx.OmapRmKeys(c, o, fmt.Sprint("k", g.r.IntN(8)), fmt.Sprint("k", g.r.IntN(8)))
	case k < 91:
		a, b := fmt.Sprint("k", g.r.IntN(8)), fmt.Sprint("k", g.r.IntN(8))
		tx.OmapRmKeyRange(c, o, min(a, b), max(a, b))
	case k < 92:
		tx.OmapClear(c, o)
		g.sizes[l] = size
	case k < 94:
		tx.OmapSetHeader(c, o, randBytes(g.r, g.r.IntN(40)))
		g.sizes[l] = size
	case k < 96:
		d := streamLoc{l.c, g.r.IntN(streamObjects)}
		tx.Clone(c, o, g.objs[d.o])
		g.sizes[d] = size
	case k < 98 && size > 0:
		d := streamLoc{l.c, g.r.IntN(streamObjects)}
		srcOff := uint64(g.r.IntN(int(size)))
		n := uint64(1 + g.r.IntN(int(size-srcOff)))
		dstOff := uint64(g.r.IntN(int(streamMaxSize-n) + 1))
		tx.CloneRange(c, o, g.objs[d.o], srcOff, n, dstOff)
		g.sizes[d] = max(g.sizes[d], dstOff+n)
	default:
		d := other()
		if d == l {
			tx.Touch(c, o)
			return
		}
		tx.Move(c, o, g.colls[d.c], g.objs[d.o])
		g.sizes[d] = size
		delete(g.sizes, l)
	}
}

// dumpStream renders everything a store holds in the collections of
// stream g (listing, sizes, extents, data, attributes, omap) and the
// stored bytes of its pool, for comparing a store with a model.
func dumpStream(ctx context.Context, s objectstore.Store, g *streamGen) (string, error) {
	var b strings.Builder
	for _, c := range g.colls {
		ok, err := s.CollectionExists(ctx, c)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "collection %v exists %v\n", c, ok)
		if !ok {
			continue
		}
		objs, next, err := s.ListObjects(ctx, c, objid.ID{}, 0)
		if err != nil || !next.IsMax() {
			return "", fmt.Errorf("list %v: %w", c, err)
		}
		for _, o := range objs {
			if err := dumpStreamObject(ctx, &b, s, c, o); err != nil {
				return "", fmt.Errorf("%v %v: %w", c, o, err)
			}
		}
	}
	st, err := s.StatFS(ctx)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "pool %d stored %d\n", g.pool(), st.PoolStored[g.pool()])
	return b.String(), nil
}

func dumpStreamObject(ctx context.Context, b *strings.Builder, s objectstore.Store, c objectstore.CollectionID, o objid.ID) error {
	st, err := s.Stat(ctx, c, o)
	if err != nil {
		return err
	}
	ext, err := s.ExtentMap(ctx, c, o, 0, 0)
	if err != nil {
		return err
	}
	data, err := s.Read(ctx, c, o, 0, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "  %v size %d allocated %d extents %v data %d bytes crc %08x\n", o, st.Size, st.Allocated, ext, len(data), crc32.ChecksumIEEE(data))
	attrs, err := s.GetAttrs(ctx, c, o)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		fmt.Fprintf(b, "    attr %q %x\n", k, attrs[k])
	}
	h, err := s.OmapGetHeader(ctx, c, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "    omap header %x\n", h)
	kvs, more, err := s.OmapIterate(ctx, c, o, "", "", 0)
	if err != nil || more {
		return fmt.Errorf("omap iterate (more %v): %w", more, err)
	}
	for _, kv := range kvs {
		fmt.Fprintf(b, "    omap %q %x\n", kv.Key, kv.Value)
	}
	return nil
}

// diffLines shows the first line where two dumps differ.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  got:  %s\n  want: %s", i+1, x, y)
		}
	}
	return "(no difference)"
}

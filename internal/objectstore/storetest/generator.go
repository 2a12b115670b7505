package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// Generator produces a seeded, replayable stream of transactions over a
// small, fixed set of collections and objects, so that operations collide:
// most transactions are valid, and some fail on the store's state (a
// missing object, a non-empty collection) or on Validate (a range past
// MaxObjectSize, objid.Max()). The same seed always yields the same stream.
// The first transaction creates every collection.
type Generator struct {
	rng   *rand.Rand
	colls []objectstore.CollectionID
	objs  []objid.ID
	steps int
}

// NewGenerator returns the generator for seed.
func NewGenerator(seed int64) *Generator {
	return &Generator{
		rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed)),
		colls: []objectstore.CollectionID{objectstore.MetaCollection, objectstore.PGCollection(1, 0),
			objectstore.PGCollection(1, 1), objectstore.TempCollection(1, 0), objectstore.PGCollection(2, 0)},
		objs: []objid.ID{
			objid.Object(1, "", "a"), objid.Object(1, "", "b"), objid.Object(1, "", "c"), objid.Object(2, "", "a"),
			objid.New(1, "ns", "loc", "d", objid.NoSnap), objid.New(1, "ns", "loc", "e", objid.NoSnap),
			objid.New(1, "", "", "a", 3), objid.Object(-1, "", "osdmap.1"),
		},
	}
}

// Collections returns every collection the stream names.
func (g *Generator) Collections() []objectstore.CollectionID { return g.colls }

// Objects returns every object the stream names (in each collection).
func (g *Generator) Objects() []objid.ID { return g.objs }

// Next returns the next transaction.
func (g *Generator) Next() *objectstore.Transaction {
	g.steps++
	t := new(objectstore.Transaction)
	if g.steps == 1 {
		for _, c := range g.colls {
			t.CreateCollection(c)
		}
		return t
	}
	n := 1
	for n < 8 && g.rng.IntN(2) == 0 {
		n++
	}
	for range n {
		g.op(t)
	}
	return t
}

func (g *Generator) coll() objectstore.CollectionID { return g.colls[g.rng.IntN(len(g.colls))] }
func (g *Generator) obj() objid.ID                  { return g.objs[g.rng.IntN(len(g.objs))] }
func (g *Generator) pct(p int) bool                 { return g.rng.IntN(100) < p }

// offset picks an offset that is often on or near a page boundary.
func (g *Generator) offset() uint64 {
	switch g.rng.IntN(20) {
	case 0:
		return 0
	case 1, 2, 3, 4, 5:
		return uint64(g.rng.IntN(3 * PageSize))
	case 6, 7, 8, 9, 10, 11:
		return uint64(g.rng.IntN(16)+1)*PageSize + uint64(g.rng.IntN(5)) - 2
	case 12:
		if g.pct(10) {
			return objectstore.MaxObjectSize - uint64(g.rng.IntN(3*PageSize))
		}
		return uint64(g.rng.IntN(4 << 20))
	}
	return uint64(g.rng.IntN(64 << 10))
}

func (g *Generator) length() uint64 {
	switch g.rng.IntN(10) {
	case 0:
		return 0
	case 1, 2, 3:
		return uint64(1 + g.rng.IntN(100))
	case 4, 5:
		return PageSize
	}
	return uint64(g.rng.IntN(3*PageSize + 1))
}

func (g *Generator) data() []byte {
	n := g.length()
	if g.pct(10) {
		return make([]byte, n)
	}
	return pattern(byte(g.rng.IntN(256)), int(n))
}

func (g *Generator) value() []byte {
	if g.pct(10) {
		return nil
	}
	return pattern(byte(g.rng.IntN(256)), g.rng.IntN(40))
}

func (g *Generator) attrName() string { return []string{"_", "a", "b", "snapset"}[g.rng.IntN(4)] }

func (g *Generator) omapKey() string {
	if g.pct(5) {
		return ""
	}
	return []string{"k", "p/"}[g.rng.IntN(2)] + string(rune('0'+g.rng.IntN(8)))
}

func (g *Generator) kv(keyf func() string) map[string][]byte {
	m := map[string][]byte{}
	for range g.rng.IntN(4) {
		m[keyf()] = g.value()
	}
	return m
}

// op appends one random operation to t.
func (g *Generator) op(t *objectstore.Transaction) {
	c, o := g.coll(), g.obj()
	switch r := g.rng.IntN(100); {
	case r < 20:
		t.Write(c, o, g.offset(), g.data())
	case r < 26:
		t.Zero(c, o, g.offset(), g.length()*uint64(1+g.rng.IntN(4)))
	case r < 32:
		t.Truncate(c, o, g.offset())
	case r < 36:
		t.Touch(c, o)
	case r < 41:
		t.Remove(c, o)
	case r < 46:
		t.Clone(c, o, g.obj())
	case r < 51:
		t.CloneRange(c, o, g.obj(), uint64(g.rng.IntN(2*PageSize)), g.length(), g.offset())
	case r < 57:
		t.SetAttrs(c, o, g.kv(g.attrName))
	case r < 61:
		t.RmAttr(c, o, g.attrName())
	case r < 69:
		t.OmapSetKeys(c, o, g.kv(g.omapKey))
	case r < 73:
		t.OmapRmKeys(c, o, g.omapKey(), g.omapKey())
	case r < 76:
		t.OmapRmKeyRange(c, o, g.omapKey(), g.omapKey())
	case r < 78:
		t.OmapClear(c, o)
	case r < 81:
		t.OmapSetHeader(c, o, g.value())
	case r < 87:
		t.Move(c, o, g.coll(), g.obj())
	case r < 89:
		t.RemoveCollection(c)
	case r < 91:
		t.CreateCollection(c)
	case r < 92:
		t.Write(c, o, objectstore.MaxObjectSize-1, []byte("xy")) // invalid
	case r < 93:
		t.Touch(c, objid.Max()) // invalid
	case r < 95:
		// Often invalid (the meta collection, into itself, a value wider
		// than its bits): validation must catch those.
		t.SplitCollection(c, g.coll(), uint8(g.rng.IntN(3)), uint32(g.rng.IntN(4)))
	default:
		t.Touch(c, o)
	}
}

// FormatTransaction renders t for an op log, one operation per line.
func FormatTransaction(t *objectstore.Transaction) string {
	var b strings.Builder
	for i, op := range t.Ops {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %v", op.Code, op.Collection)
		if op.Code == objectstore.OpCreateCollection || op.Code == objectstore.OpRemoveCollection {
			continue
		}
		if op.Code == objectstore.OpSplitCollection {
			fmt.Fprintf(&b, " -> %v bits %d value %#x", op.DestCollection, op.Offset, op.Length)
			continue
		}
		fmt.Fprintf(&b, " %v", op.Object)
		switch op.Code {
		case objectstore.OpWrite:
			fmt.Fprintf(&b, " @%d len %d data %s", op.Offset, len(op.Data), short(op.Data))
		case objectstore.OpZero:
			fmt.Fprintf(&b, " @%d len %d", op.Offset, op.Length)
		case objectstore.OpTruncate:
			fmt.Fprintf(&b, " to %d", op.Offset)
		case objectstore.OpClone:
			fmt.Fprintf(&b, " -> %v", op.Dest)
		case objectstore.OpCloneRange:
			fmt.Fprintf(&b, " @%d len %d -> %v @%d", op.Offset, op.Length, op.Dest, op.DestOffset)
		case objectstore.OpMove:
			fmt.Fprintf(&b, " -> %v %v", op.DestCollection, op.Dest)
		case objectstore.OpSetAttrs, objectstore.OpOmapSetKeys:
			fmt.Fprintf(&b, " %s", formatKV(op.Attrs))
		case objectstore.OpRmAttr:
			fmt.Fprintf(&b, " %q", op.Key)
		case objectstore.OpOmapRmKeys:
			fmt.Fprintf(&b, " %q", op.Keys)
		case objectstore.OpOmapRmKeyRange:
			fmt.Fprintf(&b, " [%q, %q)", op.Key, op.EndKey)
		case objectstore.OpOmapSetHeader:
			fmt.Fprintf(&b, " %s", short(op.Data))
		}
	}
	return b.String()
}

func formatKV(m map[string][]byte) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%q=%s", k, short(m[k])))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

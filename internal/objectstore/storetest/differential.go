package storetest

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// logTail is how many op-log entries a failure prints.
const logTail = 200

// fullDumpEvery is how often Differential compares every object; between
// full comparisons it compares the listings and the objects the step's
// transaction named.
const fullDumpEvery = 16

// Differential applies the first steps transactions of NewGenerator(seed)
// to a and b (which must start empty) and requires the same outcome: the
// same error class, or success on both. After every step it compares the
// collections, their listings, the stored bytes, and every object the
// transaction named (size, extents, data, attributes, omap), every 16th
// step and the last all objects (Dump), and a few random reads: ranges
// of Read and ExtentMap, OmapIterate with random after, prefix and limit,
// OmapGetValues, GetAttr, and ListObjects pages from random cursors. On a
// mismatch it reports the seed, the step and the op log; rerunning with
// the same seed and steps replays it exactly.
func Differential(t *testing.T, seed int64, steps int, a, b objectstore.Store) {
	t.Helper()
	ctx := context.Background()
	g := NewGenerator(seed)
	var oplog []string
	fail := func(step int, format string, args ...any) {
		t.Helper()
		from := max(0, len(oplog)-logTail)
		t.Fatalf("differential seed %d: step %d: %s\nop log (steps %d to %d of %d; replay with seed %d, steps %d):\n%s",
			seed, step, fmt.Sprintf(format, args...), from, len(oplog)-1, len(oplog), seed, step+1,
			strings.Join(oplog[from:], "\n"))
	}
	applied := 0
	for step := range steps {
		tx := g.Next()
		ea, eb := objectstore.Apply(ctx, a, tx), objectstore.Apply(ctx, b, tx)
		ca, cb := ErrorClass(ea), ErrorClass(eb)
		oplog = append(oplog, fmt.Sprintf("%5d %s => %s", step, FormatTransaction(tx), ca))
		if ca != cb || strings.HasPrefix(ca, "unclassified") {
			fail(step, "outcomes differ:\n  a: %v\n  b: %v", ea, eb)
		}
		if ea == nil {
			applied++
		}
		only := touched(tx)
		if step%fullDumpEvery == 0 || step == steps-1 {
			only = nil
		}
		da, err := dump(ctx, a, g.Collections(), g.Objects(), only)
		if err != nil {
			fail(step, "dump a: %v", err)
		}
		db, err := dump(ctx, b, g.Collections(), g.Objects(), only)
		if err != nil {
			fail(step, "dump b: %v", err)
		}
		if da != db {
			fail(step, "stores differ:\n%s", diffDumps(da, db))
		}
		for range 4 {
			p := g.probe()
			if ra, rb := p(ctx, a), p(ctx, b); ra != rb {
				fail(step, "reads differ:\n  a: %s\n  b: %s", ra, rb)
			}
		}
	}
	t.Logf("differential seed %d: %d steps, %d transactions applied", seed, steps, applied)
}

// touched returns the objects t names, or nil (everything) if it changes
// collections.
func touched(t *objectstore.Transaction) map[objKey]bool {
	m := map[objKey]bool{}
	for _, op := range t.Ops {
		switch op.Code {
		case objectstore.OpCreateCollection, objectstore.OpRemoveCollection, objectstore.OpSplitCollection:
			return nil
		case objectstore.OpMove:
			m[objKey{op.DestCollection, op.Dest}] = true
		case objectstore.OpClone, objectstore.OpCloneRange:
			m[objKey{op.Collection, op.Dest}] = true
		}
		m[objKey{op.Collection, op.Object}] = true
	}
	return m
}

// probe returns a random read, rendered with its outcome.
func (g *Generator) probe() func(context.Context, objectstore.Store) string {
	c, o := g.coll(), g.obj()
	switch g.rng.IntN(6) {
	case 0:
		// Never length 0 (to the end): objects may be a TiB long.
		off, n := g.offset(), 1+g.length()*uint64(g.rng.IntN(3))
		return func(ctx context.Context, s objectstore.Store) string {
			data, err := s.Read(ctx, c, o, off, n)
			return fmt.Sprintf("read %v %v @%d len %d: %d bytes %s %s%s", c, o, off, n, len(data), short(data), ErrorClass(err),
				checkReadCRC(ctx, s, c, o, off, n, data, err))
		}
	case 1:
		off, n := g.offset(), g.length()*uint64(g.rng.IntN(4))
		return func(ctx context.Context, s objectstore.Store) string {
			exts, err := s.ExtentMap(ctx, c, o, off, n)
			return fmt.Sprintf("extent map %v %v @%d len %d: %v %s", c, o, off, n, exts, ErrorClass(err))
		}
	case 2:
		after, prefix, limit := g.omapKey(), []string{"", "k", "p/", "k1"}[g.rng.IntN(4)], g.rng.IntN(5)
		if g.pct(30) {
			after = ""
		}
		return func(ctx context.Context, s objectstore.Store) string {
			kvs, more, err := s.OmapIterate(ctx, c, o, after, prefix, limit)
			var parts []string
			for _, kv := range kvs {
				parts = append(parts, fmt.Sprintf("%q=%s", kv.Key, short(kv.Value)))
			}
			return fmt.Sprintf("omap iterate %v %v after %q prefix %q limit %d: %v more %v %s",
				c, o, after, prefix, limit, parts, more, ErrorClass(err))
		}
	case 3:
		keys := []string{g.omapKey(), g.omapKey(), g.omapKey()}
		return func(ctx context.Context, s objectstore.Store) string {
			vals, err := s.OmapGetValues(ctx, c, o, keys)
			return fmt.Sprintf("omap get %v %v %q: %s %s", c, o, keys, formatKV(vals), ErrorClass(err))
		}
	case 4:
		name := g.attrName()
		return func(ctx context.Context, s objectstore.Store) string {
			v, err := s.GetAttr(ctx, c, o, name)
			return fmt.Sprintf("getattr %v %v %q: %s %s", c, o, name, short(v), ErrorClass(err))
		}
	}
	start, limit := g.obj(), g.rng.IntN(4)
	if g.pct(30) {
		start = objid.ID{}
	}
	return func(ctx context.Context, s objectstore.Store) string {
		objs, next, err := s.ListObjects(ctx, c, start, limit)
		if err != nil {
			next = objid.ID{}
		}
		return fmt.Sprintf("list %v from %v limit %d: %v next %v %s", c, start, limit, objs, next, ErrorClass(err))
	}
}

func sortedKeys(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }

// checkReadCRC reads again with ReadCRC where s implements it and returns
// what is wrong with its result (nothing for a good one): other bytes or
// another error than Read's, or a checksum that is not theirs.
func checkReadCRC(ctx context.Context, s objectstore.Store, c objectstore.CollectionID, o objid.ID, off, n uint64, data []byte, err error) string {
	cr, ok := s.(objectstore.CRCReader)
	if !ok {
		return ""
	}
	got, crc, cerr := cr.ReadCRC(ctx, c, o, off, n)
	switch {
	case ErrorClass(cerr) != ErrorClass(err) || !bytes.Equal(got, data):
		return fmt.Sprintf(" (ReadCRC returned %d bytes %s %s)", len(got), short(got), ErrorClass(cerr))
	case cerr == nil && crc != crc32.Checksum(got, crc32.MakeTable(crc32.Castagnoli)):
		return fmt.Sprintf(" (ReadCRC checksum %#08x is not that of its bytes)", crc)
	}
	return ""
}

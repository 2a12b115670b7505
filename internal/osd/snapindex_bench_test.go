package osd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// walkTrimHeads finds the heads to trim for removed snaps by reading
// every object's snap set, as the trimmer did before the snap index: the
// baseline of BenchmarkSnapTrimFind.
func walkTrimHeads(ctx context.Context, s objectstore.Store, pg osdmap.PG, removed osdmap.SnapIntervals) ([]objid.ID, error) {
	c := objectstore.PGCollection(pg.Pool, pg.Seed)
	var heads []objid.ID
	for cursor := (objid.ID{}); ; {
		objs, next, err := s.ListObjects(ctx, c, cursor, trimBatch)
		if err != nil {
			return nil, err
		}
		for _, id := range objs {
			if id.Pool != pg.Pool || !holdsSnapSet(id) {
				continue
			}
			b, err := s.GetAttr(ctx, c, id, SnapSetAttr)
			if errors.Is(err, objectstore.ErrNoAttr) || errors.Is(err, objectstore.ErrNotFound) {
				continue
			} else if err != nil {
				return nil, err
			}
			if ss, err := snaps.Unmarshal(b); err == nil && ss.Trimmable(removed.Contains) {
				heads = append(heads, id.WithSnap(objid.NoSnap))
			}
		}
		if next.IsMax() || len(objs) == 0 {
			return heads, nil
		}
		cursor = next
	}
}

// fillSnapPG stores a PG of objects heads, of which the first cloned
// have a clone serving snap 1 (with the snap set and index entries a
// write under that snapshot leaves), in transactions of 500 objects.
func fillSnapPG(tb testing.TB, s objectstore.Store, pg osdmap.PG, objects, cloned int) {
	tb.Helper()
	ctx := context.Background()
	c := objectstore.PGCollection(pg.Pool, pg.Seed)
	var t objectstore.Transaction
	pglog.CreateTxn(&t, pglog.Info{PG: pg})
	markSnapIndexTxn(&t, pg)
	data := make([]byte, 4096)
	info := ops.Info{Version: wire.Version{Epoch: 1, Counter: 1}}.Encode()
	for i := range objects {
		head := objid.Object(pg.Pool, "", fmt.Sprint("rbd_data.", i))
		t.Touch(c, head)
		t.Write(c, head, 0, data)
		t.SetAttr(c, head, ops.InfoAttr, info)
		if i < cloned {
			ss := snaps.SnapSet{Seq: 1, Clones: []snaps.Clone{{ID: 1, Snaps: []uint64{1}, Size: 4096, Overlap: snaps.Whole(4096)}}}
			t.Clone(c, head, head.WithSnap(1))
			t.SetAttr(c, head, SnapSetAttr, ss.Marshal())
			add, _ := snaps.IndexChanges(head, snaps.SnapSet{}, ss)
			indexTxn(&t, pg, add, nil)
		}
		if (i+1)%500 == 0 || i == objects-1 {
			if err := objectstore.Apply(ctx, s, &t); err != nil {
				tb.Fatal(err)
			}
			t = objectstore.Transaction{}
		}
	}
}

// BenchmarkSnapTrimFind measures how the trimmer finds the objects to
// trim when one snapshot is removed, in a PG of 10,000 objects of which
// 100 have a clone: by walking every object's snap set (before the snap
// index) or by reading the snapshot's index keys. docs/SNAPSHOTS.md has
// the figures.
func BenchmarkSnapTrimFind(b *testing.B) {
	const objects, cloned = 10000, 100
	pg := osdmap.PG{Pool: 1, Seed: 0}
	removed := osdmap.SnapIntervals{{Start: 1, Len: 1}}
	ctx := context.Background()
	stores := map[string]func(b *testing.B) objectstore.Store{
		"memstore": func(*testing.B) objectstore.Store { return memstore.New(memstore.Options{}) },
		"blockstore": func(b *testing.B) objectstore.Store {
			opts := blockstore.Options{Path: filepath.Join(b.TempDir(), "store"), Size: 1 << 30}
			if err := blockstore.Mkfs(opts); err != nil {
				b.Fatal(err)
			}
			s, err := blockstore.Open(opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	for _, name := range []string{"memstore", "blockstore"} {
		s := stores[name](b)
		fillSnapPG(b, s, pg, objects, cloned)
		b.Run(name+"/walk", func(b *testing.B) {
			for b.Loop() {
				heads, err := walkTrimHeads(ctx, s, pg, removed)
				if err != nil || len(heads) != cloned {
					b.Fatalf("%d heads, %v", len(heads), err)
				}
			}
		})
		b.Run(name+"/index", func(b *testing.B) {
			for b.Loop() {
				heads, keys, err := trimHeads(ctx, s, pg, removed)
				if err != nil || len(heads) != cloned || keys != cloned {
					b.Fatalf("%d heads, %d keys, %v", len(heads), keys, err)
				}
			}
		})
	}
}

// The index and the walk find the same heads, and the index check
// agrees with the index the fill wrote.
func TestTrimHeadsMatchTheWalk(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.Options{})
	pg := osdmap.PG{Pool: 1, Seed: 0}
	fillSnapPG(t, s, pg, 300, 17)
	removed := osdmap.SnapIntervals{{Start: 1, Len: 1}}
	walked, err := walkTrimHeads(ctx, s, pg, removed)
	if err != nil {
		t.Fatal(err)
	}
	indexed, keys, err := trimHeads(ctx, s, pg, removed)
	if err != nil || keys != 17 {
		t.Fatalf("%d keys, %v", keys, err)
	}
	set := map[objid.ID]bool{}
	for _, h := range walked {
		set[h] = true
	}
	if len(walked) != 17 || len(indexed) != 17 {
		t.Fatalf("walk found %d heads, the index %d; want 17", len(walked), len(indexed))
	}
	for _, h := range indexed {
		if !set[h] {
			t.Fatalf("the index names %v, which the walk does not", h)
		}
	}
	if none, _, err := trimHeads(ctx, s, pg, osdmap.SnapIntervals{{Start: 2, Len: 5}}); err != nil || len(none) != 0 {
		t.Fatalf("snaps 2-6 have no clones, the index names %v (%v)", none, err)
	}
	chk, err := checkSnapIndex(ctx, s, pg, func(objid.ID) bool { return false })
	if err != nil || !chk.empty() || chk.heads != 17 {
		t.Fatalf("index check: %+v, %v", chk, err)
	}
}

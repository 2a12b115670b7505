package blockstore

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// TestGroupCommitShares checks that transactions queued while a group
// commits share the next group (one data sync, one batch, one WAL sync)
// rather than committing one by one.
func TestGroupCommitShares(t *testing.T) {
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	o := objid.Object(1, "", "o")
	apply(t, s, new(objectstore.Transaction).CreateCollection(c).Write(c, o, 0, make([]byte, 4*testAU)))
	g0, t0 := GroupStats(s)
	// A reader holding applyMu stalls the committer before it applies
	// the group it took; everything queued meanwhile waits for the next.
	s.applyMu.RLock()
	var comps []*objectstore.Completion
	for i := range 64 {
		comp, err := s.Queue(ctx, new(objectstore.Transaction).Write(c, o, uint64(i%16)*testCB, make([]byte, testCB)))
		if err != nil {
			t.Fatal(err)
		}
		comps = append(comps, comp)
	}
	s.applyMu.RUnlock()
	for _, comp := range comps {
		if err := comp.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	g1, t1 := GroupStats(s)
	if t1-t0 != 64 || g1-g0 > 2 {
		t.Fatalf("64 transactions committed in %d groups holding %d", g1-g0, t1-t0)
	}
}

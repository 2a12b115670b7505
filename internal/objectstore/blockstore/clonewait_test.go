package blockstore

import (
	"bytes"
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// TestCloneWaitsOnlyForOmap checks that a clone of an object without
// omap entries queues while earlier transactions have not applied (a
// snapshot's copy-on-write of a RADOS head must not wait for the
// store's whole pipeline) and copies their data, and that a clone of an
// object with omap entries still sees every entry queued before it.
func TestCloneWaitsOnlyForOmap(t *testing.T) {
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	defer s.Close()
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	head, plain := objid.Object(1, "", "head"), objid.Object(1, "", "head").WithSnap(4)
	withOmap, omapClone := objid.Object(1, "", "omap"), objid.Object(1, "", "omap").WithSnap(4)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c).Write(c, head, 0, make([]byte, testCB)))
	data := bytes.Repeat([]byte("v2"), testCB/2)

	// The committer cannot apply anything while applyMu is held: the
	// write below stays queued, and a clone that waited for it to apply
	// would never return.
	s.applyMu.RLock()
	if _, err := s.Queue(ctx, new(objectstore.Transaction).Write(c, head, 0, data)); err != nil {
		s.applyMu.RUnlock()
		t.Fatal(err)
	}
	cloned, err := s.Queue(ctx, new(objectstore.Transaction).Clone(c, head, plain))
	if err != nil {
		s.applyMu.RUnlock()
		t.Fatal(err)
	}
	if _, err := s.Queue(ctx, new(objectstore.Transaction).Touch(c, withOmap).
		OmapSetKeys(c, withOmap, map[string][]byte{"k": []byte("queued")})); err != nil {
		s.applyMu.RUnlock()
		t.Fatal(err)
	}
	omapDone := make(chan error, 1)
	go func() {
		comp, err := s.Queue(ctx, new(objectstore.Transaction).Clone(c, withOmap, omapClone))
		if err == nil {
			err = comp.Wait(ctx)
		}
		omapDone <- err
	}()
	s.applyMu.RUnlock()
	if err := cloned.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-omapDone; err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(ctx, c, plain, 0, testCB)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the clone reads %d bytes (%v), want the queued write's", len(got), err)
	}
	vals, err := s.OmapGetValues(ctx, c, omapClone, []string{"k"})
	if err != nil || string(vals["k"]) != "queued" {
		t.Fatalf("the omap clone has %q (%v), want the queued entry", vals["k"], err)
	}
}

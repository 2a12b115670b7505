package sim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rados"
)

// Pool snapshots and self-managed snap ids through the client library
// against real monitors: each call returns once the client's map has the
// change, and the modes never mix (docs/SNAPSHOTS.md).
func TestClientPoolSnaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.admin")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		a, err := io.CreatePoolSnap(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.CreatePoolSnap(ctx, "b")
		if err != nil || b <= a {
			t.Fatalf("second snap id %d after %d: %v", b, a, err)
		}
		if id, err := io.LookupPoolSnap("b"); err != nil || id != b {
			t.Fatalf("LookupPoolSnap(b) = %d %v, want %d", id, err, b)
		}
		if _, err := io.CreatePoolSnap(ctx, "a"); !errors.Is(err, rados.ErrExists) {
			t.Fatalf("duplicate snap name: %v", err)
		}
		if err := io.RemovePoolSnap(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := io.RemovePoolSnap(ctx, "a"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("removing a removed snap: %v", err)
		}
		if _, err := io.LookupPoolSnap("a"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("LookupPoolSnap of a removed snap: %v", err)
		}
		snaps, err := io.PoolSnaps()
		if err != nil || len(snaps) != 1 || snaps[0].Name != "b" || snaps[0].ID != b {
			t.Fatalf("PoolSnaps = %+v %v", snaps, err)
		}
		if _, err := io.SelfManagedSnapCreate(ctx); !errors.Is(err, rados.ErrInvalid) {
			t.Fatalf("self-managed snap on a pool-snaps pool: %v", err)
		}

		if err := conn.CreatePool(ctx, "img", &rados.PoolOptions{PGNum: 8}); err != nil {
			t.Fatal(err)
		}
		img, err := conn.OpenIOContext("img")
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for range 3 {
			id, err := img.SelfManagedSnapCreate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if !slices.IsSorted(ids) || ids[0] == ids[2] {
			t.Fatalf("self-managed ids %v not increasing", ids)
		}
		if err := img.SelfManagedSnapRemove(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		if err := img.SelfManagedSnapRemove(ctx, ids[1]); err != nil {
			t.Fatalf("removing an id twice: %v", err)
		}
		if err := img.SelfManagedSnapRemove(ctx, 1000); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("removing an id never given out: %v", err)
		}
		if _, err := img.CreatePoolSnap(ctx, "x"); !errors.Is(err, rados.ErrInvalid) {
			t.Fatalf("pool snap on a self-managed pool: %v", err)
		}
		// The client's map has the removal as soon as the call returns.
		p := c.Map().PoolByName("img")
		if !p.RemovedSnaps.Contains(ids[1]) || p.RemovedSnaps.Contains(ids[2]) {
			t.Fatalf("removed snaps %s, want %d in and %d out", p.RemovedSnaps, ids[1], ids[2])
		}
	})
}

package rbd_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/rbd"
)

// Two openers (two processes of one entity) writing alternately: each
// write moves the exclusive lock to its writer, every write lands, and
// only one of them holds the lock at a time. Then both write at once,
// disjoint blocks, and the image holds all of it. Header changes of one
// reach the other without Refresh.
func TestExclusiveLockTwoWriters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, p := simCluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 1*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		var imgs [2]*rbd.Image
		for i := range imgs {
			q, err := rbd.NewPool(c.Client("client.rbd"), "rbd", rbd.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if imgs[i], err = q.Open(ctx, "disk", rbd.OpenOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		a, b := imgs[0], imgs[1]
		rng := rand.New(rand.NewPCG(8, 9))
		model := make([]byte, 1*mib)
		for i := range 20 {
			w := imgs[i%2]
			off := rng.IntN(len(model) - 100*kib)
			data := random(rng, 1+rng.IntN(100*kib))
			if err := w.WriteAt(ctx, data, uint64(off)); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
			copy(model[off:], data)
			if !w.LockOwner() || imgs[(i+1)%2].LockOwner() {
				t.Fatalf("after write %d by opener %d: owners %v %v", i, i%2, a.LockOwner(), b.LockOwner())
			}
		}
		// Both at once: opener i writes the 64 KiB blocks i, i+2, ...
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for i, img := range imgs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for blk := i; blk < 16; blk += 2 {
					data := bytes.Repeat([]byte{byte(0x10*i + blk + 1)}, 64*kib)
					if err := img.WriteAt(ctx, data, uint64(blk*64*kib)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for blk := range 16 {
			i := blk % 2
			copy(model[blk*64*kib:], bytes.Repeat([]byte{byte(0x10*i + blk + 1)}, 64*kib))
		}
		if a.LockOwner() == b.LockOwner() {
			t.Fatalf("owners %v %v", a.LockOwner(), b.LockOwner())
		}
		for _, img := range imgs {
			if got := read(t, img); !bytes.Equal(got, model) {
				t.Fatal("the image differs from the writes")
			}
		}
		// A resize and a snapshot by one are seen by the other at its
		// next call.
		if err := a.Resize(ctx, 2*mib, rbd.ResizeOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := b.ReadAt(ctx, make([]byte, kib), 2*mib-kib); err != nil {
			t.Fatalf("read past the old end after the other's resize: %v", err)
		}
		if err := a.SnapCreate(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if err := b.ReadAt(ctx, make([]byte, 1), 0); err != nil {
			t.Fatal(err)
		}
		if s := b.SnapList(); len(s) != 1 || s[0].Name != "s1" || b.Size() != 2*mib {
			t.Fatalf("the other opener sees snapshots %+v, size %d", s, b.Size())
		}
		// Its writes after the snapshot carry the new snap context: the
		// snapshot keeps the data as it was.
		if err := b.WriteAt(ctx, random(rng, 64*kib), 0); err != nil {
			t.Fatal(err)
		}
		at, err := p.Open(ctx, "disk", rbd.OpenOptions{Snap: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if got := read(t, at); !bytes.Equal(got[:len(model)], model) {
			t.Fatal("the snapshot differs from the image before it")
		}
		for _, img := range []*rbd.Image{a, b, at} {
			if err := img.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if a.LockOwner() || b.LockOwner() {
			t.Fatal("an owner after close")
		}
	})
}

// A holder that dies (its Conn closed without releasing: its watch stays
// until the OSD times it out): the other opener's write waits for the
// watch timeout, fences the dead holder (its instance in the OSD map's
// blocklist) and breaks its lock, then writes.
func TestExclusiveLockDeadHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, p := simCluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 1*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		dying := c.Client("client.rbd")
		q, err := rbd.NewPool(dying, "rbd", rbd.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := q.Open(ctx, "disk", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteAt(ctx, []byte("from a"), 0); err != nil {
			t.Fatal(err)
		}
		b, err := p.Open(ctx, "disk", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dead := dying.Instance()
		dying.Close()
		start := time.Now()
		if err := b.WriteAt(ctx, []byte("from b"), 6); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < 25*time.Second || waited > 2*time.Minute {
			t.Fatalf("took the lock of a dead holder after %v (its watch times out after 30 s)", waited)
		}
		if _, ok := c.Map().Blocklist()[dead]; !ok {
			t.Fatalf("the dead holder %s is not in the blocklist %v", dead, c.Map().BlocklistAddrs())
		}
		if !b.LockOwner() {
			t.Fatal("the survivor does not hold the lock")
		}
		buf := make([]byte, 12)
		if err := b.ReadAt(ctx, buf, 0); err != nil || string(buf) != "from afrom b" {
			t.Fatalf("read %q %v", buf, err)
		}
		if err := b.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A snapshot asked for by a second opener while the lock's holder keeps
// writing (8 writers, as an NBD server under fio): the holder releases
// the lock and lets the requester take it before its queued writes ask
// for it back, so the snapshot is taken while the writes go on rather
// than once they stop.
func TestExclusiveLockRequesterGoesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _, p := simCluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "disk", 1*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		var imgs [2]*rbd.Image
		for i := range imgs {
			q, err := rbd.NewPool(c.Client("client.rbd"), "rbd", rbd.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if imgs[i], err = q.Open(ctx, "disk", rbd.OpenOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		holder, other := imgs[0], imgs[1]
		if err := holder.WriteAt(ctx, []byte{1}, 0); err != nil {
			t.Fatal(err)
		}
		const writes = 400
		var mu sync.Mutex
		done := 0
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for {
					mu.Lock()
					if done == writes {
						mu.Unlock()
						return
					}
					done++
					mu.Unlock()
					if err := holder.WriteAt(ctx, bytes.Repeat([]byte{byte(w)}, 4*kib), uint64(w)*64*kib); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		if err := other.SnapCreate(ctx, "mid"); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		at := done
		mu.Unlock()
		wg.Wait()
		if at == writes {
			t.Fatalf("the snapshot was taken once all %d writes were done", writes)
		}
		t.Logf("the snapshot was taken after %d of %d writes", at, writes)
		for _, img := range imgs {
			if err := img.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

package rbd_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

// storedMap reads and decodes an image's object map (snap 0: the head).
func storedMap(t *testing.T, conn *rados.Conn, id string, snap uint64) clsrbd.ObjectMap {
	t.Helper()
	io, err := conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.Read(context.Background(), clsrbd.ObjectMapName(id, snap), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := clsrbd.DecodeObjectMap(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// existing returns the numbers of the image's data objects that exist.
func existing(t *testing.T, conn *rados.Conn, id string) map[uint64]bool {
	t.Helper()
	out := map[uint64]bool{}
	for _, name := range objects(t, conn, "rbd", "rbd_data."+id+".") {
		n, err := strconv.ParseUint(name[strings.LastIndexByte(name, '.')+1:], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = true
	}
	return out
}

// mapStates renders a map as one letter an object: x exists, . absent,
// p pending.
func mapStates(m clsrbd.ObjectMap) string {
	var b strings.Builder
	for n := range m.Count() {
		b.WriteByte(".xp?"[m.State(n)])
	}
	return b.String()
}

// checkCovers fails unless the map says exists (or pending) for every
// data object that exists; exact also asks the converse.
func checkCovers(t *testing.T, conn *rados.Conn, id string, m clsrbd.ObjectMap, exact bool) {
	t.Helper()
	have := existing(t, conn, id)
	for n := range m.Count() {
		st := m.State(n)
		if have[n] && st == clsrbd.ObjectNonexistent {
			t.Fatalf("object %d exists but the map says not: %s", n, mapStates(m))
		}
		if exact && !have[n] && st != clsrbd.ObjectNonexistent {
			t.Fatalf("object %d does not exist but the map says %d: %s", n, st, mapStates(m))
		}
	}
}

// The object map follows writes, discards, resizes, snapshots and a
// rollback exactly; du answers from it; a damaged map is flagged invalid
// (du then stats the objects) until rebuilt.
func TestObjectMap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, p := cluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "om", 1*mib, rbd.CreateOptions{Order: 16}); err != nil { // 16 objects
			t.Fatal(err)
		}
		img, err := p.Open(ctx, "om", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		info := img.Stat()
		if !strings.Contains(strings.Join(info.Features, ","), "object-map") {
			t.Fatalf("features %v", info.Features)
		}
		id := info.ID
		if m := storedMap(t, conn, id, 0); m.Count() != 16 || mapStates(m) != strings.Repeat(".", 16) {
			t.Fatalf("a new image's map: %d %s", m.Count(), mapStates(m))
		}
		rng := rand.New(rand.NewPCG(5, 6))
		write := func(img *rbd.Image, off, n int) {
			t.Helper()
			if err := img.WriteAt(ctx, random(rng, n), uint64(off)); err != nil {
				t.Fatal(err)
			}
		}
		write(img, 0, 100)                                         // object 0
		write(img, 3*64*kib-10, 20)                                // objects 2 and 3
		write(img, 10*64*kib, 64*kib)                              // object 10
		if err := img.Discard(ctx, 3*64*kib, 64*kib); err != nil { // object 3 goes
			t.Fatal(err)
		}
		if err := img.Discard(ctx, 0, 50); err != nil { // object 0 stays (zeroed in part)
			t.Fatal(err)
		}
		want := "x.x.......x....."
		if m := storedMap(t, conn, id, 0); mapStates(m) != want || m.Flags != 0 {
			t.Fatalf("map %s flags %d, want %s", mapStates(m), m.Flags, want)
		}
		checkCovers(t, conn, id, storedMap(t, conn, id, 0), true)
		u, err := img.DiskUsage(ctx)
		if err != nil || !u.FromObjectMap || u.Used != 3*64*kib || u.Provisioned != 1*mib {
			t.Fatalf("du %+v %v", u, err)
		}
		// A snapshot keeps the map of its time.
		if err := img.SnapCreate(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		snapID := img.SnapList()[0].ID
		write(img, 15*64*kib, 10)
		if err := img.Resize(ctx, 2*mib, rbd.ResizeOptions{}); err != nil {
			t.Fatal(err)
		}
		write(img, 20*64*kib, 10)
		if m := storedMap(t, conn, id, 0); mapStates(m) != "x.x.......x....x....x..........." {
			t.Fatalf("head map after the snapshot, a write and a resize: %s", mapStates(m))
		}
		if m := storedMap(t, conn, id, snapID); mapStates(m) != want {
			t.Fatalf("snapshot map %s, want %s", mapStates(m), want)
		}
		at, err := p.Open(ctx, "om", rbd.OpenOptions{Snap: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if u, err := at.DiskUsage(ctx); err != nil || !u.FromObjectMap || u.Used != 3*64*kib || u.Snap != "s" {
			t.Fatalf("du at the snapshot %+v %v", u, err)
		}
		if err := at.Close(ctx); err != nil {
			t.Fatal(err)
		}
		// Shrinking forgets the objects beyond; rollback brings the
		// snapshot's map back.
		if err := img.Resize(ctx, 18*64*kib, rbd.ResizeOptions{AllowShrink: true}); err != nil {
			t.Fatal(err)
		}
		if m := storedMap(t, conn, id, 0); mapStates(m) != "x.x.......x....x.." {
			t.Fatalf("map after a shrink: %s", mapStates(m))
		}
		if err := img.SnapRollback(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if m := storedMap(t, conn, id, 0); mapStates(m) != want || m.Flags != 0 {
			t.Fatalf("map after rollback %s flags %d", mapStates(m), m.Flags)
		}
		checkCovers(t, conn, id, storedMap(t, conn, id, 0), true)
		if err := img.Close(ctx); err != nil {
			t.Fatal(err)
		}

		// A damaged map: the next holder flags it invalid (every object
		// may exist); du stats the objects; rebuild makes it right.
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, clsrbd.ObjectMapName(id, 0), []byte("junk")); err != nil {
			t.Fatal(err)
		}
		img, err = p.Open(ctx, "om", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		write(img, 5*64*kib, 10)
		m := storedMap(t, conn, id, 0)
		if m.Flags&clsrbd.ObjectMapInvalid == 0 || mapStates(m) != strings.Repeat("x", 16) {
			t.Fatalf("a damaged map reloaded: %s flags %d", mapStates(m), m.Flags)
		}
		if u, err := img.DiskUsage(ctx); err != nil || u.FromObjectMap || u.Used != 2*64*kib+100+10 {
			t.Fatalf("du with an invalid map %+v %v (objects %v)", u, err, existing(t, conn, id))
		}
		if err := img.RebuildObjectMap(ctx); err != nil {
			t.Fatal(err)
		}
		if m := storedMap(t, conn, id, 0); m.Flags != 0 || mapStates(m) != "x.x..x....x....." {
			t.Fatalf("rebuilt map %s flags %d", mapStates(m), m.Flags)
		}
		if u, err := img.DiskUsage(ctx); err != nil || !u.FromObjectMap || u.Used != 4*64*kib {
			t.Fatalf("du after rebuild %+v %v", u, err)
		}
		// No map: du stats, rebuild refuses.
		if err := p.Create(ctx, "plain", 1*mib, rbd.CreateOptions{Order: 16, NoObjectMap: true}); err != nil {
			t.Fatal(err)
		}
		plain, err := p.Open(ctx, "plain", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		write(plain, 64*kib, 1000)
		if u, err := plain.DiskUsage(ctx); err != nil || u.FromObjectMap || u.Used != 1000 {
			t.Fatalf("du without a map %+v %v", u, err)
		}
		if err := plain.RebuildObjectMap(ctx); !errors.Is(err, rbd.ErrInvalid) {
			t.Fatalf("rebuild without the feature: %v", err)
		}
		for _, i := range []*rbd.Image{img, plain} {
			if err := i.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Remove(ctx, "plain"); err != nil {
			t.Fatal(err)
		}
	})
}

// A holder killed in the middle of writes and discards leaves a map that
// still covers every object that exists (it marks before it writes); the
// next holder, after fencing it, finds the map right in that sense.
func TestObjectMapHolderDies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, conn, p := simCluster(t)
		ctx := context.Background()
		if err := p.Create(ctx, "crash", 2*mib, rbd.CreateOptions{Order: 16}); err != nil {
			t.Fatal(err)
		}
		dying := c.Client("client.rbd")
		q, err := rbd.NewPool(dying, "rbd", rbd.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := q.Open(ctx, "crash", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		id := a.Stat().ID
		done := make(chan error, 4)
		var ops atomic.Int64
		enough := make(chan struct{})
		for w := range 4 {
			go func() {
				rng := rand.New(rand.NewPCG(uint64(w), 1))
				for i := 0; ; i++ {
					if ops.Add(1) == 60 {
						close(enough)
					}
					off := uint64(rng.IntN(2*mib - 100*kib))
					var err error
					if i%3 == 2 {
						err = a.Discard(ctx, off, uint64(rng.IntN(200*kib)))
					} else {
						err = a.WriteAt(ctx, random(rng, 1+rng.IntN(100*kib)), off)
					}
					if err != nil {
						done <- err
						return
					}
				}
			}()
		}
		// Let the writers run a while, then cut the holder off.
		<-enough
		dying.Close()
		for range 4 {
			if err := <-done; err == nil {
				t.Fatal("a writer of a closed connection succeeded")
			}
		}
		checkCovers(t, conn, id, storedMap(t, conn, id, 0), false)
		b, err := p.Open(ctx, "crash", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.WriteAt(ctx, []byte("after"), 0); err != nil {
			t.Fatal(err)
		}
		m := storedMap(t, conn, id, 0)
		checkCovers(t, conn, id, m, false)
		if err := b.RebuildObjectMap(ctx); err != nil {
			t.Fatal(err)
		}
		checkCovers(t, conn, id, storedMap(t, conn, id, 0), true)
		if err := b.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

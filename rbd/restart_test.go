package rbd_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rbd"
)

// An image written and snapshotted while OSDs stop and come back, one at
// a time: after each restart the head and every snapshot read back as
// the model has them (recovery brings the returning OSD's objects and
// clones up to date before it serves them).
func TestImageSurvivesOSDRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 9, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
		for _, h := range []string{"h1", "h2", "h3"} {
			c.AddOSD(h)
		}
		c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3", "min_size", "2")
		c.WaitForEpoch(c.Epoch())
		p, err := rbd.NewPool(c.Client("client.rbd"), "rbd", rbd.Options{MaxInFlight: 4})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		const size = 2 * mib
		if err := p.Create(ctx, "vm", size, rbd.CreateOptions{Order: 16, StripeUnit: 64 * kib, StripeCount: 2}); err != nil {
			t.Fatal(err)
		}
		img, err := p.Open(ctx, "vm", rbd.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(9, 9))
		head := make([]byte, size)
		snaps := map[string][]byte{}
		writes := func(n int) {
			for range n {
				off := rng.IntN(size)
				data := random(rng, 1+rng.IntN(min(size-off, 200*kib)))
				if err := img.WriteAt(ctx, data, uint64(off)); err != nil {
					t.Fatal(err)
				}
				copy(head[off:], data)
			}
		}
		check := func(when string) {
			t.Helper()
			if got := read(t, img); !bytes.Equal(got, head) {
				t.Fatalf("%s: the head differs from the model", when)
			}
			for name, want := range snaps {
				at, err := p.Open(ctx, "vm", rbd.OpenOptions{Snap: name})
				if err != nil {
					t.Fatal(err)
				}
				if got := read(t, at); !bytes.Equal(got, want) {
					t.Fatalf("%s: snapshot %s differs from the model", when, name)
				}
			}
		}
		writes(10)
		for i, id := range []int32{0, 1, 2} {
			name := "s" + string(rune('0'+i))
			if err := img.SnapCreate(ctx, name); err != nil {
				t.Fatal(err)
			}
			snaps[name] = bytes.Clone(head)
			c.StopOSD(id)
			writes(10)
			check("with osd." + string(rune('0'+id)) + " down")
			c.StartOSD(id)
			c.WaitForEpoch(c.Epoch())
			writes(5)
			check("after osd." + string(rune('0'+id)) + " returned")
		}
		if err := img.SnapRollback(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		head = bytes.Clone(snaps["s1"])
		c.StopOSD(2)
		check("rolled back, osd.2 down")
	})
}

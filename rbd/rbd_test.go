package rbd_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// cluster starts a monitor and three OSDs in the simulator with pools
// "rbd" (images) and "data" (a data pool), and returns the client and
// the images of pool rbd.
func cluster(t *testing.T) (*rados.Conn, *rbd.Pool) {
	t.Helper()
	_, conn, p := simCluster(t)
	return conn, p
}

// simCluster is cluster, also returning the simulator.
func simCluster(t *testing.T) (*sim.Cluster, *rados.Conn, *rbd.Pool) {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 5, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3")
	c.Run("osd pool create", "pool", "data", "pg_num", "8", "size", "2")
	c.WaitForEpoch(c.Epoch())
	conn := c.Client("client.rbd")
	p, err := rbd.NewPool(conn, "rbd", rbd.Options{MaxInFlight: 4})
	if err != nil {
		t.Fatal(err)
	}
	return c, conn, p
}

// objects lists the names of pool's objects with prefix, sorted.
func objects(t *testing.T, conn *rados.Conn, pool, prefix string) []string {
	t.Helper()
	io, err := conn.OpenIOContext(pool)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for e, err := range io.Objects(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Name, prefix) {
			names = append(names, e.Name)
		}
	}
	slices.Sort(names)
	return names
}

func random(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32()) | 1
	}
	return b
}

// Random writes, reads, discards and resizes of images with several
// layouts (one with a separate data pool), checked byte for byte against
// a model of each image; then their removal leaves no object behind.
func TestImageAgainstModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn, p := cluster(t)
		ctx := context.Background()
		for i, o := range []rbd.CreateOptions{
			{Order: 16},
			{Order: 18, StripeUnit: 64 * kib, StripeCount: 3},
			{Order: 17, DataPool: "data"},
		} {
			name := "img" + string(rune('a'+i))
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			size := 1*mib + rng.IntN(mib)
			if err := p.Create(ctx, name, uint64(size), o); err != nil {
				t.Fatal(err)
			}
			img, err := p.Open(ctx, name, rbd.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			info := img.Stat()
			if info.Size != uint64(size) || info.Order != o.Order || (o.DataPool != "") != (info.DataPool == "data") {
				t.Fatalf("%s: info %+v", name, info)
			}
			model := make([]byte, size)
			for op := range 60 {
				switch k := rng.IntN(12); {
				case k < 5: // write
					off := rng.IntN(len(model))
					data := random(rng, 1+rng.IntN(min(len(model)-off, 300*kib)))
					if err := img.WriteAt(ctx, data, uint64(off)); err != nil {
						t.Fatal(err)
					}
					copy(model[off:], data)
				case k < 8: // read
					off := rng.IntN(len(model))
					buf := bytes.Repeat([]byte{0xee}, 1+rng.IntN(min(len(model)-off, 400*kib)))
					if err := img.ReadAt(ctx, buf, uint64(off)); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(buf, model[off:off+len(buf)]) {
						t.Fatalf("%s op %d: read [%d,+%d) differs from the model", name, op, off, len(buf))
					}
				case k < 10: // discard
					off := rng.IntN(len(model))
					n := 1 + rng.IntN(min(len(model)-off, 600*kib))
					if err := img.Discard(ctx, uint64(off), uint64(n)); err != nil {
						t.Fatal(err)
					}
					clear(model[off : off+n])
				default: // resize, down or up
					size := 64*kib + rng.IntN(2*mib)
					if err := img.Resize(ctx, uint64(size), rbd.ResizeOptions{AllowShrink: true}); err != nil {
						t.Fatal(err)
					}
					if size < len(model) {
						model = model[:size]
					} else {
						model = append(model, make([]byte, size-len(model))...)
					}
					if got := img.Size(); got != uint64(size) {
						t.Fatalf("%s: size %d after resize to %d", name, got, size)
					}
				}
			}
			// Another opener sees the same bytes and size.
			again, err := p.Open(ctx, name, rbd.OpenOptions{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, len(model))
			if err := again.ReadAt(ctx, buf, 0); err != nil || !bytes.Equal(buf, model) || again.Size() != uint64(len(model)) {
				t.Fatalf("%s: the whole image differs from the model (%v)", name, err)
			}
			for _, i := range []*rbd.Image{img, again} {
				if err := i.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Remove(ctx, name); err != nil {
				t.Fatal(err)
			}
			for _, pool := range []string{"rbd", "data"} {
				if left := objects(t, conn, pool, "rbd_data."+info.ID); len(left) > 0 {
					t.Fatalf("%s: objects left after remove: %v", name, left)
				}
			}
			if left := objects(t, conn, "rbd", "rbd_"); !slices.Equal(left, []string{"rbd_directory"}) {
				t.Fatalf("%s: objects left after remove: %v", name, left)
			}
			if _, err := p.Open(ctx, name, rbd.OpenOptions{}); !errors.Is(err, rbd.ErrNotFound) {
				t.Fatalf("open of a removed image: %v", err)
			}
		}
	})
}

package striper_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// cluster starts a monitor and three OSDs in the simulator with a pool
// "data" of size 3, and returns an I/O context on it.
func cluster(t *testing.T) *rados.IOContext {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 3, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "data", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	io, err := c.Client("client.striper").OpenIOContext("data")
	if err != nil {
		t.Fatal(err)
	}
	return io
}

// objects lists the pool's objects, sorted.
func objects(t *testing.T, io *rados.IOContext) []string {
	t.Helper()
	var names []string
	for e, err := range io.Objects(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name)
	}
	slices.Sort(names)
	return names
}

// Random writes, reads, truncates and removes of files striped with
// several layouts, checked byte for byte against a model of each file.
func TestStriperAgainstModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := cluster(t)
		ctx := context.Background()
		layouts := []layout.Layout{
			{ObjectSize: 64 * kib, StripeUnit: 64 * kib, StripeCount: 1},
			{ObjectSize: 256 * kib, StripeUnit: 64 * kib, StripeCount: 3},
			{ObjectSize: 128 * kib, StripeUnit: 128 * kib, StripeCount: 4},
			{ObjectSize: 192 * kib, StripeUnit: 64 * kib, StripeCount: 2},
		}
		for li, l := range layouts {
			l.Pool = io.PoolID()
			s, err := striper.New(io, l, striper.Options{MaxInFlight: 4})
			if err != nil {
				t.Fatal(err)
			}
			ino := uint64(0x10000000000 + li)
			rng := rand.New(rand.NewPCG(uint64(li), 1))
			var model []byte
			maxSize := int(3*l.Period() + 100)
			for op := range 40 {
				switch k := rng.IntN(10); {
				case k < 5: // write
					off := rng.IntN(maxSize)
					n := 1 + rng.IntN(min(maxSize-off, int(l.Period())))
					data := make([]byte, n)
					for i := range data {
						data[i] = byte(rng.Uint32()) | 1
					}
					if err := s.WriteAt(ctx, ino, data, uint64(off)); err != nil {
						t.Fatal(err)
					}
					if len(model) < off+n {
						model = append(model, make([]byte, off+n-len(model))...)
					}
					copy(model[off:], data)
				case k < 8: // read, past the end too
					off := rng.IntN(maxSize)
					buf := bytes.Repeat([]byte{0xee}, 1+rng.IntN(int(l.Period())))
					n, err := s.Read(ctx, ino, buf, uint64(off), uint64(len(model)))
					if err != nil {
						t.Fatal(err)
					}
					want := []byte{}
					if off < len(model) {
						want = model[off:min(len(model), off+len(buf))]
					}
					if !bytes.Equal(buf[:n], want) {
						t.Fatalf("%v op %d: read [%d,+%d) of a %d-byte file: %d bytes differ from the model's %d", l, op, off, len(buf), len(model), n, len(want))
					}
				default: // truncate, down or up
					size := rng.IntN(maxSize)
					if err := s.Truncate(ctx, ino, uint64(len(model)), uint64(size)); err != nil {
						t.Fatal(err)
					}
					if size < len(model) {
						model = model[:size]
					} else {
						model = append(model, make([]byte, size-len(model))...)
					}
				}
			}
			buf := make([]byte, len(model))
			if err := s.ReadAt(ctx, ino, buf, 0); err != nil || !bytes.Equal(buf, model) {
				t.Fatalf("%v: whole file differs from the model (%v)", l, err)
			}
			// No object beyond the file's objects exists.
			prefix := fmt.Sprintf("%x.", ino)
			for _, name := range objects(t, io) {
				var no uint64
				if _, err := fmt.Sscanf(strings.TrimPrefix(name, prefix), "%x", &no); strings.HasPrefix(name, prefix) && (err != nil || no >= l.ObjectCount(uint64(len(model)))) {
					t.Fatalf("%v: object %s outlives the file's %d bytes", l, name, len(model))
				}
			}
			if err := s.Remove(ctx, ino, uint64(len(model))); err != nil {
				t.Fatal(err)
			}
			for _, name := range objects(t, io) {
				if strings.HasPrefix(name, prefix) {
					t.Fatalf("%v: object %s left after remove", l, name)
				}
			}
		}
	})
}

// Ceph's example layout (1 MiB units, 3 stripes, 4 MiB objects): a 12 MiB
// write lands as three full objects with the units round-robin.
func TestStriperCephExampleObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := cluster(t)
		ctx := context.Background()
		l := layout.Layout{ObjectSize: 4 * mib, StripeUnit: mib, StripeCount: 3, Pool: io.PoolID()}
		s, err := striper.New(io, l, striper.Options{})
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, 12*mib+1)
		for i := range data {
			data[i] = byte(i / mib) // the unit's number
		}
		if err := s.WriteAt(ctx, 0x1234, data, 0); err != nil {
			t.Fatal(err)
		}
		want := []string{"1234.00000000", "1234.00000001", "1234.00000002", "1234.00000003"}
		if got := objects(t, io); !slices.Equal(got, want) {
			t.Fatalf("objects %v, want %v", got, want)
		}
		obj1, err := io.Read(ctx, "1234.00000001", 0, 0)
		if err != nil || len(obj1) != 4*mib {
			t.Fatalf("object 1: %d bytes, %v", len(obj1), err)
		}
		for k, unit := range []byte{1, 4, 7, 10} {
			if obj1[k*mib] != unit || obj1[(k+1)*mib-1] != unit {
				t.Fatalf("object 1 unit %d holds file unit %d, want %d", k, obj1[k*mib], unit)
			}
		}
		if err := s.Truncate(ctx, 0x1234, uint64(len(data)), 4*mib+5); err != nil {
			t.Fatal(err)
		}
		// Units 0-3 and 5 bytes of unit 4: object 0 keeps units 0 and 3,
		// object 1 unit 1 and 5 bytes of unit 4, object 2 unit 2.
		for name, size := range map[string]uint64{"1234.00000000": 2 * mib, "1234.00000001": mib + 5, "1234.00000002": mib} {
			if st, err := io.Stat(ctx, name); err != nil || st.Size != size {
				t.Errorf("%s after truncate: %+v %v, want size %d", name, st, err, size)
			}
		}
		if _, err := io.Stat(ctx, "1234.00000003"); !errors.Is(err, rados.ErrNotFound) {
			t.Errorf("object 3 after truncate: %v", err)
		}
	})
}

func TestNewRefusesBadLayouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := cluster(t)
		if _, err := striper.New(io, layout.Layout{ObjectSize: mib, StripeUnit: 3 * 64 * kib, StripeCount: 1, Pool: io.PoolID()}, striper.Options{}); !errors.Is(err, layout.ErrInvalid) {
			t.Errorf("bad layout: %v", err)
		}
		if _, err := striper.New(io, layout.Default(io.PoolID()+1), striper.Options{}); !errors.Is(err, layout.ErrInvalid) || !strings.Contains(err.Error(), "open an I/O context") {
			t.Errorf("another pool's layout: %v", err)
		}
	})
}

// A cancelled call returns the context's error once its object ops have
// ended.
func TestCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := cluster(t)
		s, err := striper.New(io, layout.Layout{ObjectSize: 64 * kib, StripeUnit: 64 * kib, StripeCount: 2, Pool: io.PoolID()}, striper.Options{MaxInFlight: 2})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.WriteAt(ctx, 1, make([]byte, mib), 0); !errors.Is(err, context.Canceled) {
			t.Errorf("write: %v", err)
		}
		if err := s.ReadAt(ctx, 1, make([]byte, mib), 0); !errors.Is(err, context.Canceled) {
			t.Errorf("read: %v", err)
		}
	})
}

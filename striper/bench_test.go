package striper_test

import (
	"context"
	"testing"

	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// benchStriper starts a monitor and three OSDs (memstores) on loopback
// TCP, in real time, and returns a striper of layout l over a pool of
// size 3.
func benchStriper(b *testing.B, l layout.Layout) *striper.Striper {
	c := sim.New(b, sim.Options{TCP: true})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "data", "pg_num", "32", "size", "3")
	c.WaitForEpoch(c.Epoch())
	io, err := c.Client("client.bench").OpenIOContext("data")
	if err != nil {
		b.Fatal(err)
	}
	l.Pool = io.PoolID()
	s, err := striper.New(io, l, striper.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

var benchLayouts = []struct {
	name string
	l    layout.Layout
}{
	{"4MiBx1", layout.Layout{ObjectSize: 4 << 20, StripeUnit: 4 << 20, StripeCount: 1}},
	{"1MiBx4", layout.Layout{ObjectSize: 4 << 20, StripeUnit: 1 << 20, StripeCount: 4}},
}

// 4 MiB sequential writes, each returned once committed on every replica.
func BenchmarkSequentialWrite4MiB(b *testing.B) {
	for _, bl := range benchLayouts {
		b.Run(bl.name, func(b *testing.B) {
			s := benchStriper(b, bl.l)
			data := make([]byte, 4<<20)
			b.SetBytes(int64(len(data)))
			ctx := context.Background()
			var off uint64
			for b.Loop() {
				if err := s.WriteAt(ctx, 0x100, data, off); err != nil {
					b.Fatal(err)
				}
				off += uint64(len(data))
			}
		})
	}
}

// 4 MiB sequential reads of a file written first.
func BenchmarkSequentialRead4MiB(b *testing.B) {
	for _, bl := range benchLayouts {
		b.Run(bl.name, func(b *testing.B) {
			s := benchStriper(b, bl.l)
			ctx := context.Background()
			const fileSize = 64 << 20
			data := make([]byte, fileSize)
			for i := range data {
				data[i] = byte(i)
			}
			if err := s.WriteAt(ctx, 0x100, data, 0); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 4<<20)
			b.SetBytes(int64(len(buf)))
			var off uint64
			for b.Loop() {
				if err := s.ReadAt(ctx, 0x100, buf, off%fileSize); err != nil {
					b.Fatal(err)
				}
				off += uint64(len(buf))
			}
		})
	}
}

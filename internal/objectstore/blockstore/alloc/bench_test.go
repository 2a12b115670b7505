package alloc

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkAllocateRelease measures one Release of a random object plus one
// Allocate of a new one (4 KiB to 1 MiB, half of them hinted at the end of
// another object) on a 1 TiB device with 4 KiB units, in a steady state:
//
//   - empty: one object at a time, no fragmentation;
//   - fragmented: filled to 90% with objects of 4 KiB to 1 MiB, then a
//     random half of them freed, leaving about a million free extents;
//   - full: filled up with objects of 4 KiB to 1 MiB, then 1% of them freed,
//     so that some requests must be split.
//
// It reports the free extents at the end and the extents per Allocate.
func BenchmarkAllocateRelease(b *testing.B) {
	const (
		size = 1 << 40
		unit = 4 << 10
	)
	for _, c := range []struct {
		name      string
		fill      float64 // fraction of the device filled in setup
		keep      float64 // fraction of the objects kept after the fill
		maxObject uint64
	}{
		{name: "empty", fill: 0, keep: 1, maxObject: 1 << 20},
		{name: "fragmented", fill: 0.9, keep: 0.5, maxObject: 1 << 20},
		{name: "full", fill: 1, keep: 0.99, maxObject: 1 << 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			a, err := New(size, unit)
			if err != nil {
				b.Fatal(err)
			}
			objectSize := func() uint64 { return (1 + rng.Uint64N(c.maxObject/unit)) * unit }
			var objs [][]Extent
			for float64(a.Free()) > (1-c.fill)*size {
				o, err := a.Allocate(min(objectSize(), a.Free()), 0)
				if err != nil {
					b.Fatal(err)
				}
				objs = append(objs, o)
			}
			rng.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
			for _, o := range objs[int(c.keep*float64(len(objs))):] {
				if err := a.Release(o...); err != nil {
					b.Fatal(err)
				}
			}
			objs = objs[:int(c.keep*float64(len(objs)))]
			for len(objs) < 1024 { // a working set for the empty device
				o, err := a.Allocate(objectSize(), 0)
				if err != nil {
					b.Fatal(err)
				}
				objs = append(objs, o)
			}
			pieces := 0
			b.ReportAllocs()
			for b.Loop() {
				i := rng.IntN(len(objs))
				if err := a.Release(objs[i]...); err != nil {
					b.Fatal(err)
				}
				var hint uint64
				if rng.IntN(2) == 0 {
					o := objs[rng.IntN(len(objs))]
					hint = o[len(o)-1].End()
				}
				o, err := a.Allocate(objectSize(), hint)
				if err != nil {
					b.Fatal(err)
				}
				objs[i] = o
				pieces += len(o)
			}
			b.ReportMetric(float64(a.Fragments()), "fragments")
			b.ReportMetric(float64(pieces)/float64(b.N), "extents/alloc")
		})
	}
}

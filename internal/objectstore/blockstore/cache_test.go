package blockstore

import (
	"fmt"
	"runtime"
	"testing"
)

// TestRecordCacheAccounting fills the record cache with records shaped
// like the 1,000,000-object benchmark's (one unit, one attribute) and
// like a 4 MiB object's (64 units of 16 checksums), and checks that
// what the cache counts against its budget is close to the Go heap the
// entries really hold: an undercount lets the cache grow past
// CacheBytes.
func TestRecordCacheAccounting(t *testing.T) {
	shapes := []struct {
		name        string
		units, sums int
		attr        int
	}{
		{"small", 1, 1, 64},
		{"4MiB", 64, 16, 0},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			const n = 20000
			c := newRecordCache(1 << 40)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := range n {
				rec := &onode{Nid: uint64(i), Size: 1024, Pages: []span{{0, 4096}}}
				if sh.attr > 0 {
					rec.Attrs = map[string][]byte{"_": make([]byte, sh.attr)}
				}
				for u := range sh.units {
					rec.Units = append(rec.Units, unit{LU: uint64(u), Dev: uint64(u) << 16, Csums: make([]uint32, sh.sums)})
				}
				c.put(fmt.Sprintf("O\x00\x00\x00\x01obj%07d\x00", i), rec)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			real := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			counted := float64(c.usedBytes())
			t.Logf("%s: %.0f bytes a record on the heap, %.0f counted", sh.name, real/n, counted/n)
			if counted < 0.8*real || counted > 1.5*real {
				t.Errorf("%s: the cache counts %.0f bytes a record, the heap holds %.0f", sh.name, counted/n, real/n)
			}
			runtime.KeepAlive(c)
		})
	}
}

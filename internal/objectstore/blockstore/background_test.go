package blockstore

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// holdCounter is a Background that counts holds and checks they pair.
type holdCounter struct {
	mu              sync.Mutex
	holds, releases int
	negative        bool
}

func (h *holdCounter) Hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holds++
}

func (h *holdCounter) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releases++
	h.negative = h.negative || h.releases > h.holds
}

// TestBackgroundHoldsFlushesAndCompactions: the store holds its
// Background over each flush and compaction, and releases every hold.
func TestBackgroundHoldsFlushesAndCompactions(t *testing.T) {
	h := &holdCounter{}
	opts := testOptions(vfs.NewMem())
	opts.Background = h
	s := mkfsOpen(t, opts)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	for round := range 3 {
		for i := range 50 {
			apply(t, s, new(objectstore.Transaction).Write(pg, objid.Object(1, "", fmt.Sprint("obj", round, i)), 0, make([]byte, 4096)))
		}
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.db.Compact(t.Context(), []byte{0}, []byte{0xff}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Three flushes and at least one compaction.
	if h.holds < 4 || h.holds != h.releases || h.negative {
		t.Fatalf("%d holds, %d releases (released before held: %v); want at least 4, paired", h.holds, h.releases, h.negative)
	}
}

func TestSpreadMemTable(t *testing.T) {
	for _, tc := range []struct {
		size uint64
		u    float64
		want uint64
	}{
		{16 << 20, 0, 12 << 20},
		{16 << 20, 0.5, 14 << 20},
		{16 << 20, 0.999999, 16<<20 - 4<<10},
		{16<<20 + 100, 0, 12 << 20}, // rounded down to 4 KiB
		{1 << 20, 0, 1 << 20},       // never under 1 MiB
	} {
		if got := spreadMemTable(tc.size, tc.u); got != tc.want {
			t.Errorf("spreadMemTable(%d, %v) = %d, want %d", tc.size, tc.u, got, tc.want)
		}
	}
}

package journal

import (
	"context"
	"errors"

	"github.com/cuttlestore/cuttle/striper/layout"
)

// KillForTest stops w as if its MDS died mid-flush and returns what it
// had appended but not flushed, its position and the journal's layout,
// for the tests (package journal_test, which the simulator's imports keep
// outside the package) to land a random part of it.
func (w *Writer) KillForTest() (pending []byte, pos uint64, l layout.Layout) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = errors.New("killed")
	return w.pending, w.pendingPos, w.s.Layout()
}

// PendingForTest returns what w has appended and not yet flushed.
func (w *Writer) PendingForTest() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending
}

// WriteRawForTest writes bytes at a journal position, under no frame:
// what a half-finished flush leaves.
func (w *Writer) WriteRawForTest(ctx context.Context, b []byte, pos uint64) error {
	return w.s.WriteAt(ctx, w.cfg.Ino, b, pos)
}

package rbd

import (
	"context"
	"fmt"
)

// copyChunk is the most bytes Copy reads at once.
const copyChunk = 4 << 20

// Copy copies the image (as it is, or at the snapshot it is open at) to a
// new image name in pool dst, with the source's object size and striping
// unless o says otherwise. Ranges that read as zeros are not written, so
// the copy is as sparse as its source (or sparser).
func (img *Image) Copy(ctx context.Context, dst *Pool, name string, o CreateOptions) error {
	img.mu.RLock()
	defer img.mu.RUnlock()
	h := img.h
	if o.Order == 0 {
		o.Order, o.StripeUnit, o.StripeCount = h.Order, h.StripeUnit, h.StripeCount
	}
	size := img.size()
	if err := dst.Create(ctx, name, size, o); err != nil {
		return err
	}
	out, err := dst.Open(ctx, name, OpenOptions{})
	if err != nil {
		return err
	}
	buf := make([]byte, copyChunk)
	for off := uint64(0); off < size; off += copyChunk {
		b := buf[:min(copyChunk, size-off)]
		if err := img.st.ReadAt(ctx, img.ino, b, off); err != nil {
			return fmt.Errorf("rbd: copy %q to %q: %w", img.name, name, classify(err))
		}
		if allZero(b) {
			continue
		}
		if err := out.WriteAt(ctx, b, off); err != nil {
			return fmt.Errorf("rbd: copy %q to %q: %w", img.name, name, err)
		}
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

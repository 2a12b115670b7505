package rbd

import (
	"context"
	"errors"
	"fmt"
)

// copyChunk is the most bytes Copy reads at once: a multiple of every
// stripe unit (which divides the largest object size).
const copyChunk = 32 << 20

// Copy copies the image (as it is, or at the snapshot it is open at) to a
// new image name in pool dst, with the source's object size and striping
// unless o says otherwise. Stripe units that read as zeros are not
// written, so the copy is as sparse as its source (or sparser).
func (img *Image) Copy(ctx context.Context, dst *Pool, name string, o CreateOptions) (err error) {
	if err := img.writeBackDirty(ctx); err != nil { // the objects are read: cached writes first
		return err
	}
	leave, err := img.enter(ctx, false, false)
	if err != nil {
		return err
	}
	defer leave()
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
	defer func() { err = errors.Join(err, out.Close(ctx)) }()
	buf := make([]byte, min(copyChunk, size))
	for off := uint64(0); off < size; off += copyChunk {
		b := buf[:min(copyChunk, size-off)]
		if err := img.readData(ctx, b, off); err != nil {
			return fmt.Errorf("rbd: copy %q to %q: %w", img.name, name, err)
		}
		// Write the runs of stripe units that are not all zeros.
		su := h.StripeUnit
		for i := uint64(0); i < uint64(len(b)); {
			n := min(su-(off+i)%su, uint64(len(b))-i)
			if allZero(b[i : i+n]) {
				i += n
				continue
			}
			j := i + n
			for j < uint64(len(b)) {
				m := min(su, uint64(len(b))-j)
				if allZero(b[j : j+m]) {
					break
				}
				j += m
			}
			if err := out.WriteAt(ctx, b[i:j], off+i); err != nil {
				return fmt.Errorf("rbd: copy %q to %q: %w", img.name, name, err)
			}
			i = j
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

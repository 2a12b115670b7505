package rbd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cuttlestore/cuttle/rados"
)

// StatExtent is a run of an image's bytes, by offset and length.
type StatExtent struct {
	Offset, Length uint64
}

// StatExtents returns the runs of [off, off+length) that the image's
// data objects hold (at the snapshot, for an image opened at one), in
// order and merged: bytes outside them read as zeros without any data
// object behind them (never written, or discarded whole). It stats each
// data object the range spans, at most MaxInFlight at a time, so it
// costs one round trip per object; a range past the end is ErrInvalid.
// (It answers NBD's block status until the object map gives the same
// without a stat per object.)
func (img *Image) StatExtents(ctx context.Context, off, length uint64) ([]StatExtent, error) {
	if err := img.gate.rlock(ctx); err != nil {
		return nil, err
	}
	defer img.gate.runlock()
	img.hmu.Lock()
	err := img.checkRange("stat", off, length)
	img.hmu.Unlock()
	if err != nil {
		return nil, err
	}
	l := img.st.Layout()
	pieces := l.Pieces(off, length)
	var objs []uint64
	for _, p := range pieces {
		objs = append(objs, p.ObjectNo)
	}
	slices.Sort(objs)
	objs = slices.Compact(objs)
	// The length of each object, -1 for none.
	sizes := make(map[uint64]int64, len(objs))
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	sem := make(chan struct{}, img.pool.opts.MaxInFlight)
	for _, no := range objs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, err := img.data.Stat(ctx, dataObject(img.h.ObjectPrefix, no))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, rados.ErrNotFound):
				sizes[no] = -1
			case err != nil:
				if first == nil {
					first = fmt.Errorf("rbd: image %q: stat data object %d: %w", img.name, no, classify(err))
				}
			default:
				sizes[no] = int64(st.Size)
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	var out []StatExtent
	for _, p := range pieces {
		size := sizes[p.ObjectNo]
		if size <= int64(p.ObjectOff) {
			continue // no object, or it ends before the piece
		}
		n := min(p.Length, uint64(size)-p.ObjectOff)
		if k := len(out) - 1; k >= 0 && out[k].Offset+out[k].Length == p.FileOff {
			out[k].Length += n
		} else {
			out = append(out, StatExtent{Offset: p.FileOff, Length: n})
		}
	}
	return out, nil
}

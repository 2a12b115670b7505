package rbd

import (
	"context"
	"errors"
	"fmt"
	"sync"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
)

// Extent is a run of an image's bytes: [Offset, Offset+Length).
type Extent struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// AllocatedExtents returns the runs of [off, off+length) that may hold
// data, in order, disjoint and not adjacent (two touching runs are one).
// Every byte outside them reads as zeros; a byte inside may read as zeros
// too (a run is allocated, not known to be non-zero). It is what an NBD
// server answers to a block status query (base:allocation) and what
// export skips: a never-written or discarded range is a hole.
//
// The runs are found by asking each data object the range touches for
// its size: an object that does not exist is a hole, one that does
// holds its bytes [0, size). With a trusted object map, only the objects
// it says exist are asked. For an image opened at a snapshot, the
// objects (and map) as they were then. A range past the image's end is
// ErrInvalid.
func (img *Image) AllocatedExtents(ctx context.Context, off, length uint64) ([]Extent, error) {
	if err := img.writeBackDirty(ctx); err != nil { // the objects are asked: cached writes first
		return nil, err
	}
	leave, err := img.enter(ctx, false, false)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := img.checkRange("allocated extents of", off, length); err != nil {
		return nil, err
	}
	return img.allocatedExtents(ctx, off, length)
}

// allocatedExtents is AllocatedExtents with the gate held and the range
// checked. A clone's objects that do not exist are the parent's extents
// there, within the overlap (clone.go).
func (img *Image) allocatedExtents(ctx context.Context, off, length uint64) ([]Extent, error) {
	l := img.st.Layout()
	pieces := l.Pieces(off, length)
	// The objects the range touches, each asked once: those the object
	// map (if trusted) does not say are nonexistent.
	om, useMap := img.trustedObjectMap(ctx)
	var nos []uint64
	seen := map[uint64]bool{}
	for _, p := range pieces {
		if !seen[p.ObjectNo] {
			seen[p.ObjectNo] = true
			if !useMap || om.State(p.ObjectNo) != clsrbd.ObjectNonexistent {
				nos = append(nos, p.ObjectNo)
			}
		}
	}
	sizes := make(map[uint64]uint64, len(nos)) // object → its size; absent: no object
	var mu sync.Mutex
	err := img.parallel(ctx, len(nos), func(ctx context.Context, i int) error {
		st, err := img.data.Stat(ctx, dataObject(img.h.ObjectPrefix, nos[i]))
		if errors.Is(err, rados.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("object %d: %w", nos[i], err)
		}
		mu.Lock()
		sizes[nos[i]] = st.Size
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rbd: allocated extents of %q: %w", img.name, classify(err))
	}
	if img.parent != nil {
		return img.cloneExtents(ctx, pieces, sizes)
	}
	out := []Extent{}
	for _, p := range pieces { // in file order
		size, ok := sizes[p.ObjectNo]
		if !ok || size <= p.ObjectOff {
			continue
		}
		// A piece lies within one stripe unit, so the part of it below
		// the object's size is one run of the image.
		out = appendExtent(out, Extent{Offset: p.FileOff, Length: min(p.Length, size-p.ObjectOff)})
	}
	return out, nil
}

// appendExtent appends e to runs in order, merging it with the last run
// when they touch.
func appendExtent(runs []Extent, e Extent) []Extent {
	if e.Length == 0 {
		return runs
	}
	if n := len(runs); n > 0 && runs[n-1].Offset+runs[n-1].Length == e.Offset {
		runs[n-1].Length += e.Length
		return runs
	}
	return append(runs, e)
}

// parallel runs f(ctx, i) for i from 0 to n-1, at most MaxInFlight at a
// time, and returns the first error (cancelling the calls still to run).
func (img *Image) parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, img.pool.opts.MaxInFlight)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := 0; i < n && ctx.Err() == nil; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

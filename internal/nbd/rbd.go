package nbd

import (
	"context"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
	"github.com/cuttlestore/cuttle/rbd"
)

// RBD serves an image (or a snapshot of one, read-only).
type RBD struct {
	img      *rbd.Image
	readOnly bool
}

// NewRBD returns a Backend over img; readOnly refuses writes even if img
// was opened for them.
func NewRBD(img *rbd.Image, readOnly bool) *RBD {
	return &RBD{img: img, readOnly: readOnly || img.Stat().ReadOnly}
}

// Size is the image's size when asked: an export started before a
// resize shows the new size to clients that connect after it only once
// the image is refreshed.
func (r *RBD) Size() uint64   { return r.img.Size() }
func (r *RBD) ReadOnly() bool { return r.readOnly }

func (r *RBD) ReadAt(ctx context.Context, p []byte, off uint64) error {
	return r.img.ReadAt(ctx, p, off)
}

// WriteAt writes p. Without the image's cache a write is durable on
// every replica when it returns; with it, fua writes p through the cache
// (FLUSH writes back the rest).
func (r *RBD) WriteAt(ctx context.Context, p []byte, off uint64, fua bool) error {
	if fua {
		return r.img.WriteAtFUA(ctx, p, off)
	}
	return r.img.WriteAt(ctx, p, off)
}

func (r *RBD) Flush(ctx context.Context) error { return r.img.Flush(ctx) }

func (r *RBD) Trim(ctx context.Context, off, length uint64) error {
	return r.img.Discard(ctx, off, length)
}

// zeroChunk bounds the zeros one write of Zero without mayTrim sends.
const zeroChunk = 4 << 20

// Zero discards the range when it may (a discarded range reads as zeros);
// otherwise it writes zeros, so the range stays allocated (NO_HOLE).
func (r *RBD) Zero(ctx context.Context, off, length uint64, mayTrim bool) error {
	if mayTrim {
		return r.img.WriteZeroes(ctx, off, length)
	}
	zeros := make([]byte, min(length, zeroChunk))
	for length > 0 {
		n := min(length, uint64(len(zeros)))
		if err := r.img.WriteAt(ctx, zeros[:n], off); err != nil {
			return err
		}
		off += n
		length -= n
	}
	return nil
}

// Allocated answers base:allocation from the image's allocated extents
// (its object map, or a stat of each data object the range spans).
func (r *RBD) Allocated(ctx context.Context, off, length uint64) ([]proto.Span, error) {
	ext, err := r.img.AllocatedExtents(ctx, off, length)
	if err != nil {
		return nil, err
	}
	out := make([]proto.Span, len(ext))
	for i, e := range ext {
		out[i] = proto.Span{Off: e.Offset, Len: e.Length}
	}
	return out, nil
}

// Close closes the image: it releases the exclusive lock, if held, and
// the header watch. The server must be shut down first.
func (r *RBD) Close(ctx context.Context) error { return r.img.Close(ctx) }

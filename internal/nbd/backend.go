package nbd

import (
	"context"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// Backend is what an export serves. Its methods are called concurrently.
// Offsets and lengths are within Size (the server checks).
type Backend interface {
	// Size is the export's size in bytes.
	Size() uint64
	// ReadOnly refuses WRITE, TRIM and WRITE_ZEROES (EPERM).
	ReadOnly() bool
	ReadAt(ctx context.Context, p []byte, off uint64) error
	// WriteAt writes p at off; with fua, it returns only once the data
	// is durable (forced unit access).
	WriteAt(ctx context.Context, p []byte, off uint64, fua bool) error
	// Flush returns once every write completed before it is durable.
	Flush(ctx context.Context) error
	// Trim discards [off, off+length): it may read back as anything
	// (here: zeros) and frees space.
	Trim(ctx context.Context, off, length uint64) error
	// Zero makes [off, off+length) read as zeros; mayTrim lets it free
	// the space (NBD_CMD_WRITE_ZEROES without NO_HOLE).
	Zero(ctx context.Context, off, length uint64, mayTrim bool) error
}

// Allocator is a Backend that knows which of its bytes hold data: the
// base:allocation block status. A Backend without it reports all data.
type Allocator interface {
	// Allocated returns the spans of [off, off+length) that hold data,
	// sorted; the rest reads as zeros.
	Allocated(ctx context.Context, off, length uint64) ([]proto.Span, error)
}

// Export is a named Backend.
type Export struct {
	Name        string
	Description string
	Backend     Backend
}

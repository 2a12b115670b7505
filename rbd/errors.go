package rbd

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// Error classes; test for them with errors.Is.
var (
	// ErrNotFound: no such image or snapshot (ENOENT).
	ErrNotFound = errors.New("rbd: not found")
	// ErrExists: an image or snapshot of that name exists (EEXIST).
	ErrExists = errors.New("rbd: already exists")
	// ErrInvalid: a bad argument: a range past the image's end, a bad
	// size, order or stripe, a shrink without AllowShrink (EINVAL).
	ErrInvalid = errors.New("rbd: invalid argument")
	// ErrReadOnly: a change to an image opened read-only or at a
	// snapshot (EROFS).
	ErrReadOnly = errors.New("rbd: read-only image")
	// ErrBusy: the snapshot is protected or has clones, or the image
	// has snapshots and cannot be removed (EBUSY).
	ErrBusy = errors.New("rbd: busy")
	// ErrUnsupported: the image has features this version does not know
	// (ENOTSUP).
	ErrUnsupported = errors.New("rbd: unsupported image features")
)

// classify wraps err, a failure of the cluster, with the class of its
// errno: the one translation point from rados errors to this package's.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var class error
	var oe *rados.OpError
	switch {
	case errors.As(err, &oe) && oe.Errno == wire.EBUSY:
		class = ErrBusy
	case errors.Is(err, rados.ErrNotFound):
		class = ErrNotFound
	case errors.Is(err, rados.ErrExists):
		class = ErrExists
	case errors.Is(err, rados.ErrInvalid):
		class = ErrInvalid
	case errors.Is(err, rados.ErrReadOnly):
		class = ErrReadOnly
	default:
		return err
	}
	return fmt.Errorf("%w: %w", class, err)
}

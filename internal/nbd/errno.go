package nbd

import (
	"context"
	"errors"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

// errnoOf is the one translation of a backend's errors to the protocol's
// error values (proto.md "Error values").
func errnoOf(err error) proto.Errno {
	switch {
	case errors.Is(err, rbd.ErrReadOnly), errors.Is(err, rados.ErrReadOnly), errors.Is(err, rados.ErrPermission):
		return proto.EPERM
	case errors.Is(err, rbd.ErrInvalid):
		return proto.EINVAL
	case errors.Is(err, rados.ErrNoSpace):
		return proto.ENOSPC
	case errors.Is(err, context.Canceled), errors.Is(err, rados.ErrClosed):
		return proto.ESHUTDOWN
	}
	return proto.EIO
}

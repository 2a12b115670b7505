package nbd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

// The one table from the library's errors to the protocol's.
func TestErrnoOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want proto.Errno
	}{
		{fmt.Errorf("%w: write: image %q is open read-only (EROFS)", rbd.ErrReadOnly, "x"), proto.EPERM},
		{rados.ErrPermission, proto.EPERM},
		{fmt.Errorf("%w: read past the end (EINVAL)", rbd.ErrInvalid), proto.EINVAL},
		{fmt.Errorf("rbd: image: %w", rados.ErrNoSpace), proto.ENOSPC},
		{context.Canceled, proto.ESHUTDOWN},
		{rados.ErrClosed, proto.ESHUTDOWN},
		{errors.New("anything else"), proto.EIO},
		{rados.ErrTimedOut, proto.EIO},
	} {
		if got := errnoOf(tc.err); got != tc.want {
			t.Errorf("errnoOf(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

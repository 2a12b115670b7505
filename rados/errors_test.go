package rados_test

import (
	"errors"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// The one errno table: each errno an OSD or monitor returns maps to its
// class, and every other errno stays an *OpError of no class.
func TestErrnoClasses(t *testing.T) {
	for _, tc := range []struct {
		errno int
		class error
	}{
		{wire.ENOENT, rados.ErrNotFound},
		{wire.EEXIST, rados.ErrExists},
		{wire.ENODATA, rados.ErrNoAttr},
		{wire.ERANGE, rados.ErrVersionMismatch},
		{wire.EOVERFLOW, rados.ErrVersionMismatch},
		{wire.ECANCELED, rados.ErrCompareFailed},
		{wire.EPERM, rados.ErrPermission},
		{wire.EACCES, rados.ErrPermission},
		{wire.EINVAL, rados.ErrInvalid},
		{wire.ENOTSUP, rados.ErrNotSupported},
		{wire.ETIMEDOUT, rados.ErrTimedOut},
		{wire.EIO, nil},
		{wire.ENOSPC, rados.ErrNoSpace},
	} {
		err := error(&rados.OpError{Op: "write", Object: "o", Errno: tc.errno, Index: 0})
		if got := errors.Unwrap(err); got != tc.class {
			t.Errorf("errno %d: class %v, want %v", tc.errno, got, tc.class)
		}
		if tc.class != nil && !errors.Is(err, tc.class) {
			t.Errorf("errno %d: not %v", tc.errno, tc.class)
		}
		if err.Error() == "" {
			t.Errorf("errno %d: empty message", tc.errno)
		}
	}
}

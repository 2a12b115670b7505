package fsclient

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/cuttlestore/cuttle/rados"
)

// Errors. Every error of a call that failed in the file system wraps a
// syscall.Errno (errors.As finds it, and errors.Is(err, fs.ErrNotExist)
// works as for package os's errors), so a FUSE layer maps it to its
// errno; calls on a path return an *fs.PathError with the operation and
// path.

// errnoErr turns an MDS reply's negative result into its errno.
func errnoErr(result int32) error {
	if result >= 0 {
		return nil
	}
	return syscall.Errno(-result)
}

// pathErr wraps err with the operation and path, as os does.
func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// osdErr gives a failed data operation on the OSDs the errno a POSIX
// caller expects: ENOSPC when the cluster refused a write for lack of
// space (a full pool or OSD), EIO when this
// client was blocklisted (evicted: it must mount again). The RADOS error
// stays wrapped, with its explanation.
func osdErr(err error) error {
	var errno syscall.Errno
	switch {
	case err == nil || errors.As(err, &errno):
		return err
	case errors.Is(err, rados.ErrNoSpace):
		return &errnoWrap{err, syscall.ENOSPC}
	case errors.Is(err, rados.ErrBlocklisted):
		return &errnoWrap{err, syscall.EIO}
	}
	return err
}

// errnoWrap is an error that is both its cause and an errno.
type errnoWrap struct {
	err   error
	errno syscall.Errno
}

func (e *errnoWrap) Error() string   { return e.err.Error() }
func (e *errnoWrap) Unwrap() []error { return []error{e.err, e.errno} }

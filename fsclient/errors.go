package fsclient

import (
	"io/fs"
	"syscall"
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

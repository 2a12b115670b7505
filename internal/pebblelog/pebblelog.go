// Package pebblelog connects Pebble to the stores built on it (the
// object store's metadata, the monitor store): Pebble's log lines go to
// slog, and Pebble's fatal errors — an I/O error in its commit pipeline
// that it cannot continue after — become errors the store fails with
// instead of ending the process.
//
// It knows nothing of the stores beyond the prefix that names them in
// errors. A Logger is a plain value, safe for concurrent use as its slog
// logger is; Recover guards one call on the calling goroutine.
package pebblelog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Logger is a pebble.Logger writing to slog; Prefix names the store in
// fatal errors ("blockstore").
type Logger struct {
	Log    *slog.Logger
	Prefix string
}

// Infof logs Pebble's routine messages at debug level.
func (l Logger) Infof(format string, args ...any) {
	l.Log.Debug(fmt.Sprintf(format, args...))
}

// Errorf logs Pebble's errors.
func (l Logger) Errorf(format string, args ...any) {
	l.Log.Error(fmt.Sprintf(format, args...))
}

// Fatalf is called by Pebble on a broken invariant or an I/O error it
// cannot recover from (a failed WAL write or sync, a failed MANIFEST
// write); it must not return. It panics with a *FatalError, which Recover
// turns back into an error around the store's calls into Pebble.
func (l Logger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.Log.Log(context.Background(), slog.LevelError+4, msg)
	panic(&FatalError{errors.New(l.Prefix + ": pebble fatal: " + msg)})
}

// FatalError is what Logger.Fatalf panics with.
type FatalError struct{ err error }

func (e *FatalError) Error() string { return e.err.Error() }
func (e *FatalError) Unwrap() error { return e.err }

// Recover runs f, a call into Pebble, and returns a Fatalf raised inside
// it as an error. Pebble is unusable afterwards: the caller fails its
// store. Other panics propagate.
func Recover(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(*FatalError)
			if !ok {
				panic(r)
			}
			err = fe
		}
	}()
	return f()
}

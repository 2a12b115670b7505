package blockstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// pebbleLogger sends Pebble's log output to slog.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...))
}

// Fatalf is called by Pebble on a broken invariant or an I/O error it
// cannot recover from (a failed WAL write or sync in the commit pipeline,
// a failed MANIFEST write); it must not return. It panics with a
// *pebbleFatalError, which the committer recovers from around its Pebble
// commits (pebbleCommit) to fail the store instead of the process.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.Log(context.Background(), slog.LevelError+4, msg)
	panic(&pebbleFatalError{errors.New("blockstore: pebble fatal: " + msg)})
}

// pebbleFatalError is what pebbleLogger.Fatalf panics with.
type pebbleFatalError struct{ err error }

func (e *pebbleFatalError) Error() string { return e.err.Error() }
func (e *pebbleFatalError) Unwrap() error { return e.err }

// pebbleCommit runs f, a call into Pebble's commit pipeline, and returns
// a Fatalf it raises as an error. Pebble's commit pipeline is unusable
// afterwards; the caller fails the store.
func pebbleCommit(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(*pebbleFatalError)
			if !ok {
				panic(r)
			}
			err = fe
		}
	}()
	return f()
}

package monstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// pebbleLogger sends Pebble's messages to slog.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...))
}

// Fatalf is Pebble's report of an error it cannot continue after, such as
// a failed WAL write or sync in the commit pipeline; it must not return.
// It panics with a *pebbleFatal, which apply recovers from so that the
// store fails (ErrFailed) instead of the process.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.Log(context.Background(), slog.LevelError+4, msg)
	panic(&pebbleFatal{errors.New("monstore: pebble fatal: " + msg)})
}

// pebbleFatal is what pebbleLogger.Fatalf panics with.
type pebbleFatal struct{ err error }

func (e *pebbleFatal) Error() string { return e.err.Error() }
func (e *pebbleFatal) Unwrap() error { return e.err }

// recoverFatal runs f, a call into Pebble's commit pipeline, and returns a
// Fatalf raised inside it as an error. Other panics propagate.
func recoverFatal(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(*pebbleFatal)
			if !ok {
				panic(r)
			}
			err = fe
		}
	}()
	return f()
}

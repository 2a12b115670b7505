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

// Fatalf is called by Pebble on a broken invariant; it must not return.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.Log(context.Background(), slog.LevelError+4, msg)
	panic(errors.New("blockstore: pebble fatal: " + msg))
}

package monstore

import (
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Options configure a Store.
type Options struct {
	// FS is the file system holding the store: vfs.Default in daemons, a
	// vfs.MemFS or an errorfs wrapper in tests. Required.
	FS vfs.FS
	// Dir is the store's directory (Pebble's database directory), created
	// if missing. Required.
	Dir string
	// Logger receives the store's and Pebble's messages. Default: discard.
	Logger *slog.Logger
	// EntryCacheBytes bounds the memory held by the cache of the newest log
	// entries, which serves Term and Entries for followers that keep up
	// without reading Pebble. Default 4 MiB; negative disables the cache.
	EntryCacheBytes int64
	// MaxSnapshotBytes bounds the size of a snapshot payload, both the one
	// Snapshot builds and one received for installation. Default 256 MiB.
	MaxSnapshotBytes int64
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.EntryCacheBytes == 0 {
		o.EntryCacheBytes = 4 << 20
	}
	if o.EntryCacheBytes < 0 {
		o.EntryCacheBytes = 0
	}
	if o.MaxSnapshotBytes == 0 {
		o.MaxSnapshotBytes = 256 << 20
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.FS == nil:
		return fmt.Errorf("%w: Options.FS is required", ErrInvalid)
	case o.Dir == "":
		return fmt.Errorf("%w: Options.Dir is required", ErrInvalid)
	case o.MaxSnapshotBytes < 0:
		return fmt.Errorf("%w: Options.MaxSnapshotBytes is negative", ErrInvalid)
	}
	return nil
}

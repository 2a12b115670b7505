//go:build !(linux && (amd64 || arm64))

package dio

import (
	"errors"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// AIO is implemented on Linux (amd64, arm64) only: NewAIO and
// NewSyncAIO return nil here, and callers take their other ways.
type AIO struct{}

// ErrBusy is every AIO request's result here: read or write another way.
var ErrBusy = errors.New("aio unavailable")

// NewAIO returns nil: there is no Linux AIO here.
func NewAIO(*os.File) *AIO { return nil }

// NewSyncAIO returns nil: there is no Linux AIO here.
func NewSyncAIO() *AIO { return nil }

// ReadAt returns ErrBusy.
func (*AIO) ReadAt([]byte, int64) (int, error) { return 0, ErrBusy }

// WriteAll returns ErrBusy for every write.
func (*AIO) WriteAll(ws []Write) []error {
	errs := make([]error, len(ws))
	for i := range errs {
		errs[i] = ErrBusy
	}
	return errs
}

// SyncData returns ErrBusy.
func (*AIO) SyncData(uintptr) error { return ErrBusy }

// Syncs returns 0.
func (*AIO) Syncs() uint64 { return 0 }

// Close does nothing.
func (*AIO) Close() {}

func appendRaw(uintptr, []byte) (int, error) { panic("dio: appendRaw without Linux AIO") }

// NewDirectWAL returns f: WALs go through the page cache here.
func NewDirectWAL(f vfs.File, _ string, _ *AIO) vfs.File { return f }

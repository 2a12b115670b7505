//go:build !(linux && (amd64 || arm64))

package blockstore

import (
	"errors"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
)

// aioReader is implemented on Linux (amd64, arm64) only.
type aioReader struct{}

var errAIOBusy = errors.New("aio unavailable")

func newAIO(*os.File) *aioReader { return nil }

func (*aioReader) readAt([]byte, int64) (int, error) { return 0, errAIOBusy }

func (*aioReader) writeAll(ws []format.DeferredWrite) []error {
	errs := make([]error, len(ws))
	for i := range errs {
		errs[i] = errAIOBusy
	}
	return errs
}

func newSyncAIO() *aioReader { return nil }

func (*aioReader) syncData(uintptr) error { return errAIOBusy }

func (*aioReader) close() {}

func appendRaw(uintptr, []byte) (int, error) { panic("blockstore: appendRaw without Linux AIO") }

// newDirectWAL returns f: WALs go through the page cache here.
func newDirectWAL(f vfs.File, _ string, _ *aioReader) vfs.File { return f }

package dio

import (
	"errors"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// syncFile is a file whose data syncs go through an AIO context when
// the kernel takes them, else through fdatasync. A goroutine in
// fdatasync holds its thread, and its P until the runtime's monitor
// takes the P back; the group commit's sync, several hundred a second
// under small writes, then costs two thread switches and keeps the
// monitor waking every 20 µs. Through AIO the kernel syncs on one of its
// workers and the caller parks until the completion arrives.
type syncFile struct {
	vfs.File
	syncer *AIO
}

// WithAIOSync returns f with its data syncs run through a, and its
// appends made with raw system calls, or f itself if a is nil.
func WithAIOSync(f vfs.File, a *AIO) vfs.File {
	if a == nil {
		return f
	}
	return syncFile{File: f, syncer: a}
}

// Write appends with raw system calls when f has a descriptor: the
// file is where the AIO syncs go, and an ordinary write after the OSD
// idled would wake the Go runtime's monitor thread, as the syncs did.
func (f syncFile) Write(p []byte) (int, error) {
	if fd := f.Fd(); fd != vfs.InvalidFd && len(p) > 0 {
		return appendRaw(fd, p)
	}
	return f.File.Write(p)
}

// SyncData syncs through the AIO context, or with the file's own
// SyncData where the context turns the sync away.
func (f syncFile) SyncData() error {
	if fd := f.Fd(); fd != vfs.InvalidFd {
		if err := f.syncer.SyncData(fd); !errors.Is(err, ErrBusy) {
			return err
		}
	}
	return f.File.SyncData()
}

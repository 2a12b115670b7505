package blockstore

import (
	"fmt"
	"path"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/internal/pebblelog"
)

// Pebble's commit pipeline panics, holding its commit lock, when a batch
// is written to a WAL whose background flush has failed before; Pebble is
// wedged after that (even Close waits for the lock). The failure reaches
// the store through the failed batch's sync only later, so the committer
// could start one more batch into the broken WAL. walWatch notices the
// failure where it happens, in the file system under Pebble, and the
// store checks it before every batch (walHealth.check): the failing
// write returns before the WAL writer records its error, which happens
// before any later batch can see that error.

// walHealth records the first failed write or sync of a WAL file.
type walHealth struct {
	err atomic.Pointer[error]
}

func (h *walHealth) record(name string, err error) error {
	if err != nil {
		werr := fmt.Errorf("pebble WAL %s: %w", path.Base(name), err)
		h.err.CompareAndSwap(nil, &werr)
	}
	return err
}

// check returns the WAL's first failure, if any.
func (h *walHealth) check() error {
	if p := h.err.Load(); p != nil {
		return *p
	}
	return nil
}

// walWatch is the file system Pebble sees: fs, with its WAL files'
// writes and syncs reported to health, their syncs run through syncer
// when it is not nil, and the WALs keeper holds not removed or reused.
type walWatch struct {
	vfs.FS
	health *walHealth
	syncer *dio.AIO
	keeper *walKeeper
}

func isWAL(name string) bool { return strings.HasSuffix(name, ".log") }

// wrap wraps f, just opened as name, if it is a WAL. A WAL written from
// its start (created, or recycled) is written around the page cache
// where the file system allows (dio.NewDirectWAL).
func (w walWatch) wrap(name string, f vfs.File, fromStart bool, err error) (vfs.File, error) {
	if err != nil || !isWAL(name) {
		return f, err
	}
	if fromStart && w.syncer != nil {
		if d := dio.NewDirectWAL(f, name, w.syncer); d != f {
			return walFile{File: d, name: name, health: w.health}, nil
		}
	}
	return walFile{File: dio.WithAIOSync(f, w.syncer), name: name, health: w.health}, nil
}

func (w walWatch) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := w.FS.Create(name, c)
	w.started(name, err)
	return w.wrap(name, f, true, err)
}

func (w walWatch) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if isWAL(oldname) && w.keeper != nil && w.keeper.keep(oldname) {
		return w.Create(newname, c)
	}
	f, err := w.FS.ReuseForWrite(oldname, newname, c)
	w.started(newname, err)
	return w.wrap(newname, f, true, err)
}

// started counts a WAL Pebble has started writing.
func (w walWatch) started(name string, err error) {
	if err == nil && isWAL(name) && w.keeper != nil {
		w.keeper.started(name)
	}
}

func (w walWatch) Remove(name string) error {
	if isWAL(name) && w.keeper != nil && w.keeper.keep(name) {
		return nil
	}
	return w.FS.Remove(name)
}

func (w walWatch) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := w.FS.OpenReadWrite(name, c, opts...)
	return w.wrap(name, f, false, err)
}

// walFile reports a WAL file's failed writes and syncs.
type walFile struct {
	vfs.File
	name   string
	health *walHealth
}

func (f walFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, f.health.record(f.name, err)
}

func (f walFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.health.record(f.name, err)
}

func (f walFile) Sync() error { return f.health.record(f.name, f.File.Sync()) }

func (f walFile) SyncData() error { return f.health.record(f.name, f.File.SyncData()) }

func (f walFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.health.record(f.name, err)
}

// applyBatch commits b unless the WAL has failed; with wait false it
// does not wait for the sync it asks for (ApplyNoSyncWait). A fatal
// error inside Pebble comes back as an error (pebblelog.Recover).
func (pl *pipeline) applyBatch(b *pebble.Batch, wo *pebble.WriteOptions, wait bool) error {
	if err := pl.wal.check(); err != nil {
		return err
	}
	return pebblelog.Recover(func() error {
		if wait {
			return pl.db.Apply(b, wo)
		}
		return pl.db.ApplyNoSyncWait(b, wo)
	})
}

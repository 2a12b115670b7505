package fsclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// O_LAZY opens a file for lazy I/O (relaxed coherence between writers;
// see LazyIO). It is the bit Linux once reserved; combine it with the
// os.O_* flags.
const O_LAZY = 0x40000000

// File is an open file. Its methods are safe for concurrent use; Read,
// Write and Seek share one offset.
type File struct {
	c     *Client
	ino   uint64
	path  string
	flags int
	mode  locker.OpenMode
	data  *fileData

	mu     sync.Mutex
	off    int64
	closed bool
}

// Open opens p for reading.
func (c *Client) Open(ctx context.Context, p string) (*File, error) {
	return c.OpenFile(ctx, p, os.O_RDONLY, 0)
}

// Create creates or truncates p, open for reading and writing.
func (c *Client) Create(ctx context.Context, p string, mode uint32) (*File, error) {
	return c.OpenFile(ctx, p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, mode)
}

// truncates reports whether an open with flags empties the file: its
// request waits for the safe reply, before which the MDS cuts the data
// (nothing written after can be cut).
func truncates(flags int) bool { return flags&os.O_TRUNC != 0 }

// openMode is what flags open for.
func openMode(flags int) locker.OpenMode {
	var m locker.OpenMode
	switch flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		m = locker.OpenRead
	case os.O_WRONLY:
		m = locker.OpenWrite
	default:
		m = locker.OpenRead | locker.OpenWrite
	}
	if flags&O_LAZY != 0 {
		m |= locker.OpenLazy
	}
	return m
}

// OpenFile opens p with flags (os.O_*, and O_LAZY), creating it with
// permissions mode under os.O_CREATE.
func (c *Client) OpenFile(ctx context.Context, p string, flags int, mode uint32) (*File, error) {
	om := openMode(flags)
	want := uint32(locker.WantedFor(om))
	var r *wire.ClientReply
	var err error
	if flags&os.O_CREATE != 0 {
		r, err = c.create(ctx, "open", p, &wire.ClientRequest{Op: wire.MetaCreate, OpFlags: uint32(flags),
			Mode: mode&0o7777 | syscall.S_IFREG, WantCaps: want})
		if err != nil {
			return nil, err
		}
	} else {
		ino, st, err := c.walk(ctx, p, flags&syscall.O_NOFOLLOW == 0)
		if err != nil {
			return nil, pathErr("open", p, err)
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			return nil, pathErr("open", p, syscall.ELOOP)
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR && om&locker.OpenWrite != 0 {
			return nil, pathErr("open", p, syscall.EISDIR)
		}
		r, err = c.do(ctx, &wire.ClientRequest{Op: wire.MetaOpen, Path: wire.FilePath{Ino: ino}, OpFlags: uint32(flags),
			WantCaps: want}, truncates(flags))
		if err != nil {
			return nil, pathErr("open", p, err)
		}
	}
	return c.opened(r, p, flags, om)
}

// opened makes the File an open or create reply gave (p names it in
// errors).
func (c *Client) opened(r *wire.ClientReply, p string, flags int, om locker.OpenMode) (*File, error) {
	st, err := target(r)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	f := &File{c: c, ino: st.Ino, path: p, flags: flags, mode: om}
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		if f.data, err = c.openData(&st, om); err != nil {
			return nil, pathErr("open", p, err)
		}
	} else {
		c.mu.Lock()
		c.caps.Open(st.Ino, om)
		if in := c.inodes[st.Ino]; in != nil {
			in.opens++
		}
		c.mu.Unlock()
	}
	return f, nil
}

// openData counts an open of a regular file and returns its data,
// made at its first open.
func (c *Client) openData(st *wire.InodeStat, om locker.OpenMode) (*fileData, error) {
	s, err := c.striperFor(st)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.inodes[st.Ino]
	if in == nil {
		in = &inode{stat: *st}
		c.inodes[st.Ino] = in
	}
	c.caps.Open(st.Ino, om)
	in.opens++
	if in.data == nil {
		issued, lazy := c.caps.Issued(st.Ino)
		in.data = newFileData(s, st.Ino, in.stat.Size, in.stat.Mtime.Time(), issued, lazy, c.clock, c.opts.Data)
	}
	return in.data, nil
}

// Name returns the path the file was opened by.
func (f *File) Name() string { return f.path }

// Ino returns the file's inode number.
func (f *File) Ino() uint64 { return f.ino }

func (f *File) check(op string, write bool) error {
	if f.closed {
		return pathErr(op, f.path, os.ErrClosed)
	}
	if f.data == nil {
		return pathErr(op, f.path, syscall.EISDIR)
	}
	if write && f.mode&locker.OpenWrite == 0 || !write && f.mode&locker.OpenRead == 0 {
		return pathErr(op, f.path, syscall.EBADF)
	}
	return nil
}

// ReadAt reads len(p) bytes at off (io.ReaderAt: io.EOF with fewer at
// the end of the file).
func (f *File) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.path, syscall.EINVAL)
	}
	issued, _, err := f.c.waitCaps(ctx, f.ino, locker.FileRead)
	if err != nil {
		return 0, pathErr("read", f.path, err)
	}
	if issued&(locker.FileShared|locker.FileExcl) == 0 && uint64(off)+uint64(len(p)) > f.data.Size() {
		// Without Fs the size the client knows may be stale (another
		// client extended the file): a read past it asks the MDS,
		// which collects the size from the writers.
		st, err := f.c.getattr(ctx, f.ino, wire.AttrSize)
		if err != nil {
			return 0, pathErr("read", f.path, err)
		}
		f.data.SetAttr(st.Size, st.Mtime.Time())
	}
	n, err := f.data.ReadAt(ctx, p, uint64(off))
	if err != nil && !errors.Is(err, io.EOF) {
		return n, pathErr("read", f.path, err)
	}
	return n, err
}

// Read reads from the file's offset and advances it.
func (f *File) Read(ctx context.Context, p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.ReadAt(ctx, p, f.off)
	f.off += int64(n)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// WriteAt writes p at off.
func (f *File) WriteAt(ctx context.Context, p []byte, off int64) (int, error) {
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.path, syscall.EINVAL)
	}
	if _, _, err := f.c.waitCaps(ctx, f.ino, locker.FileWrite); err != nil {
		return 0, pathErr("write", f.path, err)
	}
	// A full pool refuses the write now, as Ceph's client does, rather
	// than accept it into the buffer and fail its write-back.
	if pool := f.data.st.Layout().Pool; f.c.conn.PoolFull(pool) {
		name, _ := f.c.conn.PoolName(pool)
		return 0, pathErr("write", f.path, fmt.Errorf("data pool %q is full: delete files or add OSDs: %w", name, syscall.ENOSPC))
	}
	n, err := f.data.WriteAt(ctx, p, uint64(off))
	if err != nil {
		return n, pathErr("write", f.path, err)
	}
	f.c.mu.Lock()
	f.c.caps.MarkDirty(f.ino, locker.FileWrite)
	f.c.mu.Unlock()
	return n, nil
}

// Write writes p at the file's offset (the end under os.O_APPEND) and
// advances it.
func (f *File) Write(ctx context.Context, p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flags&os.O_APPEND != 0 && f.data != nil {
		f.off = int64(f.data.Size())
	}
	n, err := f.WriteAt(ctx, p, f.off)
	f.off += int64(n)
	return n, err
}

// Seek sets the offset for the next Read or Write (io.Seeker's whence).
func (f *File) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		if f.data == nil {
			return 0, pathErr("seek", f.path, syscall.EINVAL)
		}
		offset += int64(f.data.Size())
	default:
		return 0, pathErr("seek", f.path, syscall.EINVAL)
	}
	if offset < 0 {
		return 0, pathErr("seek", f.path, syscall.EINVAL)
	}
	f.off = offset
	return offset, nil
}

// Sync writes the file's buffered data to the OSDs and its size and
// mtime to the MDS, and returns when both are durable (fsync).
func (f *File) Sync(ctx context.Context) error {
	if f.data == nil {
		return nil
	}
	if err := f.data.Flush(ctx); err != nil {
		return pathErr("fsync", f.path, err)
	}
	return pathErr("fsync", f.path, f.c.flushAttrs(ctx, f.ino))
}

// flushAttrs sends ino's dirty attributes to the MDS and waits for the
// ack.
func (c *Client) flushAttrs(ctx context.Context, ino uint64) error {
	c.mu.Lock()
	tid := c.caps.Flush(ino)
	c.runLocked()
	c.mu.Unlock()
	if tid == 0 {
		return nil
	}
	for {
		c.mu.Lock()
		pending, ended, ch := c.caps.Flushing(ino, tid), c.ended, c.changed
		c.mu.Unlock()
		if !pending {
			return nil
		}
		if ended != nil {
			return fmt.Errorf("flushing attributes: %w", ended)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Truncate sets the file's size.
func (f *File) Truncate(ctx context.Context, size int64) error {
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.path, syscall.EINVAL)
	}
	f.c.mu.Lock()
	st := f.c.inodes[f.ino].stat
	f.c.mu.Unlock()
	return pathErr("truncate", f.path, f.c.truncate(ctx, f.ino, st, uint64(size)))
}

// Stat returns the file's attributes.
func (f *File) Stat(ctx context.Context) (*Stat, error) {
	st, err := f.c.getattr(ctx, f.ino, wire.AttrSize|wire.AttrMtime)
	if err != nil {
		return nil, pathErr("stat", f.path, err)
	}
	return statOf(&st), nil
}

// Close writes back the file's data and attributes and closes it; its
// cap is released after the release delay.
func (f *File) Close(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return pathErr("close", f.path, os.ErrClosed)
	}
	f.closed = true
	var err error
	if f.data != nil {
		err = f.data.Flush(ctx)
	}
	c := f.c
	c.mu.Lock()
	c.caps.Flush(f.ino)
	c.runLocked() // the flush takes its size and mtime from the data
	c.caps.Close(f.ino, f.mode, c.clock.Now())
	if in := c.inodes[f.ino]; in != nil {
		in.opens--
		if in.opens <= 0 {
			in.opens = 0
			if in.data != nil {
				size, mtime, _, _ := in.data.DirtyAttrs()
				in.stat.Size, in.stat.Mtime = size, wire.FSTimeOf(mtime)
			}
			in.data = nil
		}
	}
	c.runLocked()
	c.mu.Unlock()
	return pathErr("close", f.path, err)
}

// LazyIO turns lazy I/O on or off for the file (O_LAZY after open): with
// it, several writers may each cache and buffer, and the application
// orders their views with Propagate and Synchronize.
func (f *File) LazyIO(ctx context.Context, on bool) error {
	var flag uint32
	if on {
		flag = 1
	}
	_, err := f.c.do(ctx, &wire.ClientRequest{Op: wire.MetaLazyIO, Path: wire.FilePath{Ino: f.ino}, OpFlags: flag}, false)
	return pathErr("lazyio", f.path, err)
}

// Propagate writes the file's buffered data back to the OSDs, where
// other clients' Synchronize will see it (lazyio_propagate).
func (f *File) Propagate(ctx context.Context) error {
	if f.data == nil {
		return nil
	}
	if err := f.data.Flush(ctx); err != nil {
		return pathErr("lazyio_propagate", f.path, err)
	}
	return pathErr("lazyio_propagate", f.path, f.c.flushAttrs(ctx, f.ino))
}

// Synchronize drops the file's cached data, so that the next reads see
// what other clients propagated (lazyio_synchronize).
func (f *File) Synchronize(ctx context.Context) error {
	if f.data == nil {
		return nil
	}
	f.data.DropCache()
	st, err := f.c.getattr(ctx, f.ino, wire.AttrSize|wire.AttrMtime)
	if err != nil {
		return pathErr("lazyio_synchronize", f.path, err)
	}
	f.data.SetAttr(st.Size, st.Mtime.Time())
	return nil
}

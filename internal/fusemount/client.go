package fusemount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"syscall"

	"github.com/cuttlestore/cuttle/fsclient"
	"github.com/cuttlestore/cuttle/internal/wire"
	"golang.org/x/sys/unix"
)

// ClientFS serves a mount from a Cuttle file-system client through its
// inode-level API.
//
// Attributes and names are given to the kernel for as long as the
// client's caps and leases keep them exact (fsclient.Stat's AttrValid
// and EntryValid: a directory's attributes and names for the MDS's
// dentry lease, a file's attributes while it is open under shared caps),
// and the client makes the kernel drop them (SetInvalidator) before it
// acks their revocation, so what the kernel shows is what the caps make
// exact (a change on another mount is seen once it returns there).
type ClientFS struct {
	c  *fsclient.Client
	in fsclient.Inodes

	mu    sync.Mutex
	next  Handle
	files map[Handle]*fsclient.File
	dirs  map[Handle]*dirHandle
	// lazy: the inodes whose opens through this mount use lazy I/O
	// (cuttle.lazyio set to 1).
	lazy map[uint64]bool
	// invalData drops an inode's attributes and pages from the
	// kernel's cache (SetInvalidator's), or nil.
	invalData func(ino uint64, off int64)
}

type dirHandle struct {
	ino     uint64
	parent  uint64
	entries []DirEntry // "." and ".." first; offsets are positions + 1
}

// NewClientFS returns the mount's FS over c.
func NewClientFS(c *fsclient.Client) *ClientFS {
	return &ClientFS{c: c, in: c.Inodes(), files: map[Handle]*fsclient.File{}, dirs: map[Handle]*dirHandle{}, lazy: map[uint64]bool{}}
}

// withCaller makes the client's requests as the calling process.
func withCaller(ctx context.Context, c Caller) context.Context {
	return fsclient.WithCaller(ctx, fsclient.Caller{UID: c.UID, GID: c.GID, Groups: c.Groups})
}

func attrOf(s *fsclient.Stat) Attr {
	return Attr{Ino: s.Ino, Mode: s.Mode, Nlink: s.Nlink, UID: s.UID, GID: s.GID, Rdev: uint32(s.Rdev),
		Size: s.Size, Blocks: s.Blocks, Atime: s.Atime, Mtime: s.Mtime, Ctime: s.Ctime,
		Valid: s.AttrValid, EntryValid: s.EntryValid}
}

// SetInvalidator implements Invalidator: the client calls these when
// the caps or leases under which the kernel caches are revoked.
func (fs *ClientFS) SetInvalidator(attrs func(ino uint64), data func(ino uint64, off int64), entry func(dir uint64, name string)) {
	fs.mu.Lock()
	fs.invalData = data
	fs.mu.Unlock()
	fs.c.SetInvalidate(fsclient.Invalidate{Inode: attrs, Data: data, Entry: entry})
}

func attrErr(s *fsclient.Stat, err error) (Attr, error) {
	if err != nil {
		return Attr{}, err
	}
	return attrOf(s), nil
}

func (fs *ClientFS) Root() uint64 { return fs.in.Root() }

func (fs *ClientFS) Lookup(ctx context.Context, c Caller, parent uint64, name string) (Attr, error) {
	a, err := attrErr(fs.in.Lookup(withCaller(ctx, c), parent, name))
	if errors.Is(err, syscall.ENOENT) {
		if d := fs.in.NegativeValid(parent, name); d > 0 {
			return Attr{EntryValid: d}, nil // absent, and leased so
		}
	}
	return a, err
}

// Forget is a hint the client does not need: it releases the caps of
// files not open after its own delay.
func (fs *ClientFS) Forget(ino, n uint64) {}

func (fs *ClientFS) Getattr(ctx context.Context, c Caller, ino uint64) (Attr, error) {
	return attrErr(fs.in.Getattr(withCaller(ctx, c), ino))
}

func (fs *ClientFS) Setattr(ctx context.Context, c Caller, ino uint64, in SetAttrIn) (Attr, error) {
	s := fsclient.SetAttr{Mode: in.Mode, UID: in.UID, GID: in.GID, Size: in.Size, Atime: in.Atime, Mtime: in.Mtime, Ctime: in.Ctime}
	bits := []struct{ ours, wire uint32 }{
		{SetMode, wire.AttrMode}, {SetUID, wire.AttrUID}, {SetGID, wire.AttrGID}, {SetSize, wire.AttrSize},
		{SetAtime, wire.AttrAtime}, {SetMtime, wire.AttrMtime}, {SetAtimeNow, wire.AttrAtime | wire.AttrAtimeNow},
		{SetMtimeNow, wire.AttrMtime | wire.AttrMtimeNow}, {SetCtime, wire.AttrCtime}, {SetKillSuidGid, wire.AttrKillSguid},
	}
	for _, b := range bits {
		if in.Valid&b.ours != 0 {
			s.Mask |= b.wire
		}
	}
	// A truncate through an open file writes its buffers back first:
	// the client's truncate path does that for any open of the inode.
	a, err := attrErr(fs.in.Setattr(withCaller(ctx, c), ino, s))
	// The kernel takes a setattr's attributes whatever happened while
	// it waited (unlike a getattr's, which it drops when an
	// invalidation came meanwhile): the caps they were read under may
	// have been revoked, and the kernel told to drop them, before the
	// reply. Given for no time, they are asked for again at their next
	// use.
	a.Valid = 0
	return a, err
}

func (fs *ClientFS) Readlink(ctx context.Context, c Caller, ino uint64) (string, error) {
	return fs.in.Readlink(withCaller(ctx, c), ino)
}

func (fs *ClientFS) Mknod(ctx context.Context, c Caller, parent uint64, name string, mode, rdev uint32) (Attr, error) {
	return attrErr(fs.in.Mknod(withCaller(ctx, c), parent, name, mode, uint64(rdev)))
}

func (fs *ClientFS) Mkdir(ctx context.Context, c Caller, parent uint64, name string, mode uint32) (Attr, error) {
	return attrErr(fs.in.Mkdir(withCaller(ctx, c), parent, name, mode))
}

func (fs *ClientFS) Symlink(ctx context.Context, c Caller, parent uint64, name, target string) (Attr, error) {
	return attrErr(fs.in.Symlink(withCaller(ctx, c), parent, name, target))
}

func (fs *ClientFS) Link(ctx context.Context, c Caller, ino, newParent uint64, newName string) (Attr, error) {
	return attrErr(fs.in.Link(withCaller(ctx, c), ino, newParent, newName))
}

func (fs *ClientFS) Unlink(ctx context.Context, c Caller, parent uint64, name string) error {
	return fs.in.Unlink(withCaller(ctx, c), parent, name)
}

func (fs *ClientFS) Rmdir(ctx context.Context, c Caller, parent uint64, name string) error {
	return fs.in.Rmdir(withCaller(ctx, c), parent, name)
}

func (fs *ClientFS) Rename(ctx context.Context, c Caller, op uint64, oldName string, np uint64, newName string, flags uint32) error {
	return fs.in.Rename(withCaller(ctx, c), op, oldName, np, newName, flags)
}

func (fs *ClientFS) addFile(f *fsclient.File) Handle {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.next++
	fs.files[fs.next] = f
	return fs.next
}

func (fs *ClientFS) file(h Handle) (*fsclient.File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.files[h]
	if !ok {
		return nil, syscall.EBADF
	}
	return f, nil
}

func (fs *ClientFS) Open(ctx context.Context, c Caller, ino uint64, flags uint32) (Handle, error) {
	f, err := fs.in.Open(withCaller(ctx, c), ino, fs.openFlags(ino, flags))
	if err != nil {
		return 0, err
	}
	return fs.addFile(f), nil
}

func (fs *ClientFS) Create(ctx context.Context, c Caller, parent uint64, name string, flags, mode uint32) (Attr, Handle, error) {
	f, st, err := fs.in.Create(withCaller(ctx, c), parent, name, int(flags), mode)
	if err != nil {
		return Attr{}, 0, err
	}
	return attrOf(st), fs.addFile(f), nil
}

func (fs *ClientFS) Read(ctx context.Context, h Handle, p []byte, off int64) (int, error) {
	f, err := fs.file(h)
	if err != nil {
		return 0, err
	}
	n, err := f.ReadAt(ctx, p, off)
	if n > 0 || isEOF(err) {
		// A short read at the end of the file is no error to the kernel.
		return n, nil
	}
	return n, err
}

func (fs *ClientFS) Write(ctx context.Context, h Handle, p []byte, off int64) (int, error) {
	f, err := fs.file(h)
	if err != nil {
		return 0, err
	}
	return f.WriteAt(ctx, p, off)
}

// Flush writes the file's data back at each close(2), so another client
// opening it next reads it (close-to-open consistency) and write errors
// reach close.
func (fs *ClientFS) Flush(ctx context.Context, h Handle) error {
	f, err := fs.file(h)
	if err != nil {
		return err
	}
	return f.Sync(ctx)
}

func (fs *ClientFS) Fsync(ctx context.Context, h Handle, dataOnly bool) error {
	return fs.Flush(ctx, h)
}

func (fs *ClientFS) Release(ctx context.Context, h Handle) error {
	fs.mu.Lock()
	f, ok := fs.files[h]
	delete(fs.files, h)
	fs.mu.Unlock()
	if !ok {
		return syscall.EBADF
	}
	return f.Close(ctx)
}

// Fallocate: space is not reserved in RADOS, so plain fallocate only
// grows the size; punching a hole or zeroing a range writes zeros (the
// objects stay, as zeros, until a truncate).
func (fs *ClientFS) Fallocate(ctx context.Context, h Handle, mode uint32, off, length int64) error {
	f, err := fs.file(h)
	if err != nil {
		return err
	}
	if mode&^(unix.FALLOC_FL_KEEP_SIZE|unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_ZERO_RANGE) != 0 {
		return syscall.EOPNOTSUPP
	}
	st, err := f.Stat(ctx)
	if err != nil {
		return err
	}
	if mode&(unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_ZERO_RANGE) != 0 {
		// Zeros are written within the file; past its end it reads as
		// zeros already, and the truncate below extends it if asked.
		if end := min(off+length, int64(st.Size)); off < end {
			if err := writeZeros(ctx, f, off, end); err != nil {
				return err
			}
		}
	}
	if mode&unix.FALLOC_FL_KEEP_SIZE == 0 && uint64(off+length) > st.Size {
		return f.Truncate(ctx, off+length)
	}
	return nil
}

func writeZeros(ctx context.Context, f *fsclient.File, from, to int64) error {
	zeros := make([]byte, min(to-from, 1<<20))
	for from < to {
		n := min(int64(len(zeros)), to-from)
		if _, err := f.WriteAt(ctx, zeros[:n], from); err != nil {
			return err
		}
		from += n
	}
	return nil
}

func (fs *ClientFS) OpenDir(ctx context.Context, c Caller, ino uint64) (Handle, error) {
	if _, err := fs.in.Getattr(withCaller(ctx, c), ino); err != nil {
		return 0, err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.next++
	fs.dirs[fs.next] = &dirHandle{ino: ino, parent: ino}
	return fs.next, nil
}

// ReadDir lists the whole directory when the kernel starts (offset 0,
// also after a rewinddir) and serves the rest from that listing: one
// consistent view per pass, as POSIX allows.
func (fs *ClientFS) ReadDir(ctx context.Context, h Handle, offset uint64, plus bool) ([]DirEntry, error) {
	fs.mu.Lock()
	d, ok := fs.dirs[h]
	fs.mu.Unlock()
	if !ok {
		return nil, syscall.EBADF
	}
	if offset == 0 || d.entries == nil {
		ents, err := fs.in.ReadDir(ctx, d.ino, plus)
		if err != nil {
			return nil, err
		}
		list := make([]DirEntry, 0, len(ents)+2)
		list = append(list, DirEntry{Name: ".", Ino: d.ino, Mode: unix.S_IFDIR}, DirEntry{Name: "..", Ino: d.parent, Mode: unix.S_IFDIR})
		for _, e := range ents {
			de := DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode}
			if e.Stat != nil {
				a := attrOf(e.Stat)
				de.Attr = &a
			}
			list = append(list, de)
		}
		for i := range list {
			list[i].Offset = uint64(i) + 1
		}
		fs.mu.Lock()
		d.entries = list
		fs.mu.Unlock()
	}
	if offset >= uint64(len(d.entries)) {
		return nil, nil
	}
	return d.entries[offset:], nil
}

func (fs *ClientFS) ReleaseDir(h Handle) {
	fs.mu.Lock()
	delete(fs.dirs, h)
	fs.mu.Unlock()
}

func (fs *ClientFS) Getxattr(ctx context.Context, c Caller, ino uint64, name string) ([]byte, error) {
	if v := parseVxattr(name); v != vxNone {
		return fs.getVxattr(withCaller(ctx, c), ino, v)
	}
	return fs.in.Getxattr(withCaller(ctx, c), ino, name)
}

func (fs *ClientFS) Listxattr(ctx context.Context, c Caller, ino uint64) ([]string, error) {
	return fs.in.Listxattr(withCaller(ctx, c), ino)
}

func (fs *ClientFS) Setxattr(ctx context.Context, c Caller, ino uint64, name string, value []byte, flags uint32) error {
	if v := parseVxattr(name); v != vxNone {
		return fs.setVxattr(withCaller(ctx, c), ino, v, value)
	}
	return fs.in.Setxattr(withCaller(ctx, c), ino, name, value, flags)
}

func (fs *ClientFS) Removexattr(ctx context.Context, c Caller, ino uint64, name string) error {
	if parseVxattr(name) != vxNone {
		return fmt.Errorf("removexattr %s: a virtual attribute, set it instead: %w", name, syscall.EINVAL)
	}
	return fs.in.Removexattr(withCaller(ctx, c), ino, name)
}

func (fs *ClientFS) Statfs(ctx context.Context) (Statfs, error) {
	s, err := fs.c.Statfs(ctx)
	if err != nil {
		return Statfs{}, err
	}
	return Statfs{Blocks: s.Blocks, BlocksFree: s.Bfree, BlocksAvail: s.Bavail, Files: s.Files, FilesFree: s.Ffree,
		BlockSize: s.Bsize, NameLen: 255}, nil
}

// lockOf converts a kernel lock (inclusive end) to the client's (start
// and length, 0 meaning to the end).
func lockOf(lk Lock) fsclient.Lock {
	l := fsclient.Lock{Start: lk.Start, PID: uint64(lk.PID)}
	if lk.End != math.MaxUint64 && lk.End != math.MaxInt64 {
		l.Length = lk.End - lk.Start + 1
	}
	switch lk.Type {
	case unix.F_RDLCK:
		l.Type = wire.LockShared
	case unix.F_WRLCK:
		l.Type = wire.LockExclusive
	default:
		l.Type = wire.LockUnlock
	}
	return l
}

func (fs *ClientFS) GetLock(ctx context.Context, h Handle, owner uint64, lk Lock) (Lock, error) {
	f, err := fs.file(h)
	if err != nil {
		return Lock{}, err
	}
	got, err := f.GetLock(ctx, owner, lockOf(lk))
	if err != nil {
		return Lock{}, err
	}
	out := Lock{Start: got.Start, End: math.MaxInt64, PID: uint32(got.PID), Type: unix.F_UNLCK}
	if got.Length != 0 {
		out.End = got.Start + got.Length - 1
	}
	switch got.Type {
	case wire.LockShared:
		out.Type = unix.F_RDLCK
	case wire.LockExclusive:
		out.Type = unix.F_WRLCK
	}
	return out, nil
}

func (fs *ClientFS) SetLock(ctx context.Context, h Handle, owner uint64, lk Lock, wait bool) error {
	f, err := fs.file(h)
	if err != nil {
		return err
	}
	l := lockOf(lk)
	if lk.Flock {
		return f.Flock(ctx, l.Type, wait)
	}
	return f.Fcntl(ctx, owner, l, wait)
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

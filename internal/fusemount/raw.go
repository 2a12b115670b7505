package fusemount

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// blockSize is the st_blksize the mount reports: the default object
// size, as CephFS does, so cp and friends move data in large pieces.
const blockSize = 4 << 20

// raw serves the kernel's FUSE requests from an FS. Methods it does not
// define answer ENOSYS (the embedded default), which makes the kernel
// fall back where it can (statx, lseek).
type raw struct {
	fuse.RawFileSystem
	fs     FS
	root   uint64
	base   context.Context
	log    *slog.Logger
	limits timeouts
}

func newRaw(base context.Context, fs FS, log *slog.Logger, limits timeouts) *raw {
	return &raw{RawFileSystem: fuse.NewDefaultRawFileSystem(), fs: fs, root: fs.Root(), base: base, log: log, limits: limits}
}

// timeouts bound what the kernel is told it may cache (the mount's
// attr_timeout, entry_timeout and negative_timeout options): 0 leaves
// the client's caps and leases the only bound; negative caches nothing.
type timeouts struct {
	attrMax, entryMax, negativeMax time.Duration
}

func bound(d, limit time.Duration) time.Duration {
	switch {
	case limit < 0 || d < 0:
		return 0
	case limit > 0 && d > limit:
		return limit
	}
	return d
}

func (t timeouts) attr(d time.Duration) time.Duration { return bound(d, t.attrMax) }

func (t timeouts) entry(d time.Duration, negative bool) time.Duration {
	if negative {
		return bound(d, t.negativeMax)
	}
	return bound(d, t.entryMax)
}

func (r *raw) String() string { return "cuttle" }

// The kernel's root is node 1; the client's root is whatever inode the
// mount starts at.
func (r *raw) ino(node uint64) uint64 {
	if node == fuse.FUSE_ROOT_ID {
		return r.root
	}
	return node
}

func (r *raw) node(ino uint64) uint64 {
	if ino == r.root {
		return fuse.FUSE_ROOT_ID
	}
	return ino
}

// reqCtx is a request's context: the mount's values, done when the
// kernel interrupts the request.
type reqCtx struct {
	context.Context
	done <-chan struct{}
}

func (c reqCtx) Done() <-chan struct{} { return c.done }

func (c reqCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// ctx is a request's context. The kernel's interrupts (FUSE_INTERRUPT,
// sent whenever the calling thread takes a signal, even one its runtime
// sends itself and restarts after) are not passed on: a namespace change
// the MDS may already have made must not be reported as EINTR. Only a
// wait for a lock (SetLkw) ends on one: see lockCtx.
func (r *raw) ctx(cancel <-chan struct{}) context.Context { return r.base }

// lockCtx is a lock wait's context: it ends when the kernel interrupts
// the request (a signal to the waiting process), as fcntl(F_SETLKW)
// returns EINTR.
func (r *raw) lockCtx(cancel <-chan struct{}) context.Context { return reqCtx{r.base, cancel} }

// caller reads who made a request; an unprivileged caller's groups come
// from /proc, since FUSE does not carry them.
func caller(h *fuse.InHeader) Caller {
	c := Caller{UID: h.Uid, GID: h.Gid, PID: h.Pid}
	if c.UID != 0 && c.PID != 0 {
		c.Groups = procGroups(c.PID)
	}
	return c
}

// procGroups reads a thread's supplementary groups from /proc (nil if it
// is gone: the request then carries none, which only narrows access).
func procGroups(pid uint32) []uint32 {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/status")
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "Groups:")
		if !ok {
			continue
		}
		var gs []uint32
		for _, f := range strings.Fields(line) {
			if g, err := strconv.ParseUint(f, 10, 32); err == nil {
				gs = append(gs, uint32(g))
			}
		}
		return gs
	}
	return nil
}

// status turns a client error into the kernel's: the errno it is, or
// wraps; EINTR for an interrupted request; EIO (logged) for anything else.
func (r *raw) status(op string, err error) fuse.Status {
	if err == nil {
		return fuse.OK
	}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return fuse.Status(errno)
	case errors.Is(err, context.Canceled):
		return fuse.EINTR
	}
	r.log.Warn("fuse request failed without an errno; answering EIO", "op", op, "err", err)
	return fuse.EIO
}

func fillAttr(out *fuse.Attr, a *Attr) {
	out.Ino = a.Ino
	out.Size = a.Size
	out.Blocks = a.Blocks
	// Times before 1970 travel as their two's complement; the kernel
	// reads the field as signed.
	out.Atime, out.Atimensec = uint64(a.Atime.Unix()), uint32(a.Atime.Nanosecond())
	out.Mtime, out.Mtimensec = uint64(a.Mtime.Unix()), uint32(a.Mtime.Nanosecond())
	out.Ctime, out.Ctimensec = uint64(a.Ctime.Unix()), uint32(a.Ctime.Nanosecond())
	out.Mode = a.Mode
	out.Nlink = a.Nlink
	out.Uid, out.Gid = a.UID, a.GID
	out.Rdev = a.Rdev
	out.Blksize = blockSize
}

func (r *raw) fillEntry(out *fuse.EntryOut, a *Attr) {
	if a.Ino == 0 {
		// A name known absent: the kernel caches the negative entry.
		*out = fuse.EntryOut{}
		out.SetEntryTimeout(r.limits.entry(a.EntryValid, true))
		return
	}
	out.NodeId = r.node(a.Ino)
	out.Generation = 1
	out.SetEntryTimeout(r.limits.entry(a.EntryValid, false))
	out.SetAttrTimeout(r.limits.attr(a.Valid))
	fillAttr(&out.Attr, a)
}

func (r *raw) entry(op string, out *fuse.EntryOut, a Attr, err error) fuse.Status {
	if err != nil {
		return r.status(op, err)
	}
	r.fillEntry(out, &a)
	return fuse.OK
}

func (r *raw) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	a, err := r.fs.Lookup(r.ctx(cancel), caller(h), r.ino(h.NodeId), name)
	if err == nil && a.Ino == 0 && r.limits.entry(a.EntryValid, true) == 0 {
		return fuse.ENOENT
	}
	return r.entry("lookup", out, a, err)
}

func (r *raw) Forget(node, n uint64) { r.fs.Forget(r.ino(node), n) }

func (r *raw) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	a, err := r.fs.Getattr(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId))
	if err != nil {
		return r.status("getattr", err)
	}
	out.SetTimeout(r.limits.attr(a.Valid))
	fillAttr(&out.Attr, &a)
	return fuse.OK
}

// setAttrIn translates the kernel's setattr.
func setAttrIn(in *fuse.SetAttrIn) SetAttrIn {
	var s SetAttrIn
	v := in.Valid
	bits := []struct {
		fuse uint32
		ours uint32
	}{
		{fuse.FATTR_MODE, SetMode}, {fuse.FATTR_UID, SetUID}, {fuse.FATTR_GID, SetGID},
		{fuse.FATTR_SIZE, SetSize}, {fuse.FATTR_ATIME, SetAtime}, {fuse.FATTR_MTIME, SetMtime},
		{fuse.FATTR_CTIME, SetCtime}, {fuse.FATTR_KILL_SUIDGID, SetKillSuidGid},
	}
	for _, b := range bits {
		if v&b.fuse != 0 {
			s.Valid |= b.ours
		}
	}
	if v&fuse.FATTR_ATIME_NOW != 0 {
		s.Valid = s.Valid&^SetAtime | SetAtimeNow
	}
	if v&fuse.FATTR_MTIME_NOW != 0 {
		s.Valid = s.Valid&^SetMtime | SetMtimeNow
	}
	s.Mode = in.Mode
	s.UID, s.GID = in.Uid, in.Gid
	s.Size = in.Size
	s.Atime = time.Unix(int64(in.Atime), int64(in.Atimensec))
	s.Mtime = time.Unix(int64(in.Mtime), int64(in.Mtimensec))
	s.Ctime = time.Unix(int64(in.Ctime), int64(in.Ctimensec))
	if v&fuse.FATTR_FH != 0 {
		s.Handle = Handle(in.Fh)
	}
	return s
}

func (r *raw) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	a, err := r.fs.Setattr(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId), setAttrIn(in))
	if err != nil {
		return r.status("setattr", err)
	}
	out.SetTimeout(r.limits.attr(a.Valid))
	fillAttr(&out.Attr, &a)
	return fuse.OK
}

func (r *raw) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	a, err := r.fs.Mknod(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId), name, in.Mode, in.Rdev)
	return r.entry("mknod", out, a, err)
}

func (r *raw) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	a, err := r.fs.Mkdir(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId), name, in.Mode&07777)
	return r.entry("mkdir", out, a, err)
}

func (r *raw) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return r.status("unlink", r.fs.Unlink(r.ctx(cancel), caller(h), r.ino(h.NodeId), name))
}

func (r *raw) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return r.status("rmdir", r.fs.Rmdir(r.ctx(cancel), caller(h), r.ino(h.NodeId), name))
}

func (r *raw) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	err := r.fs.Rename(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId), oldName, r.ino(in.Newdir), newName, in.Flags)
	return r.status("rename", err)
}

func (r *raw) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	a, err := r.fs.Link(r.ctx(cancel), caller(&in.InHeader), r.ino(in.Oldnodeid), r.ino(in.NodeId), name)
	return r.entry("link", out, a, err)
}

func (r *raw) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	a, err := r.fs.Symlink(r.ctx(cancel), caller(h), r.ino(h.NodeId), name, target)
	return r.entry("symlink", out, a, err)
}

func (r *raw) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	s, err := r.fs.Readlink(r.ctx(cancel), caller(h), r.ino(h.NodeId))
	if err != nil {
		return nil, r.status("readlink", err)
	}
	return []byte(s), fuse.OK
}

// Access is asked only without default_permissions: answer from the
// attributes as the kernel would.
func (r *raw) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	c := caller(&in.InHeader)
	a, err := r.fs.Getattr(r.ctx(cancel), c, r.ino(in.NodeId))
	if err != nil {
		return r.status("access", err)
	}
	if !permits(&a, c, in.Mask) {
		return fuse.EACCES
	}
	return fuse.OK
}

// permits reports whether c may access a for mask (R_OK, W_OK, X_OK) by
// its mode bits: root may do anything but execute a file no one may.
func permits(a *Attr, c Caller, mask uint32) bool {
	mode := a.Mode
	if c.UID == 0 {
		return mask&fuse.X_OK == 0 || mode&0o111 != 0 || mode&unix.S_IFMT == unix.S_IFDIR
	}
	var bits uint32
	switch {
	case c.UID == a.UID:
		bits = mode >> 6 & 7
	case c.GID == a.GID || containsGroup(c.Groups, a.GID):
		bits = mode >> 3 & 7
	default:
		bits = mode & 7
	}
	return bits&mask == mask
}

func containsGroup(gs []uint32, g uint32) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

func (r *raw) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, name string, dest []byte) (uint32, fuse.Status) {
	v, err := r.fs.Getxattr(r.ctx(cancel), caller(h), r.ino(h.NodeId), name)
	if err != nil {
		return 0, r.status("getxattr", err)
	}
	return fitBuffer(dest, v)
}

// fitBuffer copies v into dest as the xattr calls want: asked with no
// buffer, the size; with one too small, ERANGE and the size.
func fitBuffer(dest, v []byte) (uint32, fuse.Status) {
	if len(dest) == 0 {
		return uint32(len(v)), fuse.OK
	}
	if len(dest) < len(v) {
		return uint32(len(v)), fuse.ERANGE
	}
	return uint32(copy(dest, v)), fuse.OK
}

func (r *raw) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	names, err := r.fs.Listxattr(r.ctx(cancel), caller(h), r.ino(h.NodeId))
	if err != nil {
		return 0, r.status("listxattr", err)
	}
	var b []byte
	for _, n := range names {
		b = append(append(b, n...), 0)
	}
	return fitBuffer(dest, b)
}

func (r *raw) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, name string, data []byte) fuse.Status {
	err := r.fs.Setxattr(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId), name, data, in.Flags)
	return r.status("setxattr", err)
}

func (r *raw) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return r.status("removexattr", r.fs.Removexattr(r.ctx(cancel), caller(h), r.ino(h.NodeId), name))
}

func (r *raw) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	a, fh, err := r.fs.Create(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId), name, in.Flags, in.Mode)
	if err != nil {
		return r.status("create", err)
	}
	r.fillEntry(&out.EntryOut, &a)
	out.Fh = uint64(fh)
	return fuse.OK
}

// Open answers without FOPEN_KEEP_CACHE: the kernel drops its cached
// pages of the file at each open, so a file opened after another
// client's close reads that client's data (close-to-open consistency);
// while it is open, the client invalidates pages when its caps say so.
func (r *raw) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	fh, err := r.fs.Open(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId), in.Flags)
	if err != nil {
		return r.status("open", err)
	}
	out.Fh = uint64(fh)
	return fuse.OK
}

func (r *raw) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	n, err := r.fs.Read(r.ctx(cancel), Handle(in.Fh), buf[:min(len(buf), int(in.Size))], int64(in.Offset))
	if err != nil {
		return nil, r.status("read", err)
	}
	return fuse.ReadResultData(buf[:n]), fuse.OK
}

func (r *raw) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	n, err := r.fs.Write(r.ctx(cancel), Handle(in.Fh), data, int64(in.Offset))
	if err != nil {
		return uint32(n), r.status("write", err)
	}
	return uint32(n), fuse.OK
}

func (r *raw) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	return r.status("flush", r.fs.Flush(r.ctx(cancel), Handle(in.Fh)))
}

func (r *raw) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return r.status("fsync", r.fs.Fsync(r.ctx(cancel), Handle(in.Fh), in.FsyncFlags&1 != 0))
}

func (r *raw) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	if err := r.fs.Release(r.ctx(cancel), Handle(in.Fh)); err != nil {
		// close(2) has returned already; the error has nowhere to go.
		r.log.Warn("release of a file failed", "ino", r.ino(in.NodeId), "err", err)
	}
}

func (r *raw) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	err := r.fs.Fallocate(r.ctx(cancel), Handle(in.Fh), in.Mode, int64(in.Offset), int64(in.Length))
	return r.status("fallocate", err)
}

func (r *raw) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	fh, err := r.fs.OpenDir(r.ctx(cancel), caller(&in.InHeader), r.ino(in.NodeId))
	if err != nil {
		return r.status("opendir", err)
	}
	out.Fh = uint64(fh)
	return fuse.OK
}

func (r *raw) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.readDir(cancel, in, out, false)
}

func (r *raw) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.readDir(cancel, in, out, true)
}

// readDir fills the kernel's buffer from the entries after the offset;
// those that do not fit are asked for again from the last one that did.
func (r *raw) readDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	ents, err := r.fs.ReadDir(r.ctx(cancel), Handle(in.Fh), in.Offset, plus)
	if err != nil {
		return r.status("readdir", err)
	}
	for i := range ents {
		e := &ents[i]
		de := fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode, Off: e.Offset}
		if !plus {
			if !out.AddDirEntry(de) {
				break
			}
			continue
		}
		eo := out.AddDirLookupEntry(de)
		if eo == nil {
			break
		}
		// "." and ".." are not looked up (node id 0); the others are,
		// with their attributes, saving a lookup each.
		if e.Attr != nil && e.Name != "." && e.Name != ".." {
			r.fillEntry(eo, e.Attr)
		}
	}
	return fuse.OK
}

func (r *raw) ReleaseDir(in *fuse.ReleaseIn) { r.fs.ReleaseDir(Handle(in.Fh)) }

func (r *raw) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	// Every namespace change is journaled by the MDS before it is
	// answered: there is nothing to make durable.
	return fuse.OK
}

func (r *raw) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	s, err := r.fs.Statfs(r.ctx(cancel))
	if err != nil {
		return r.status("statfs", err)
	}
	out.Blocks, out.Bfree, out.Bavail = s.Blocks, s.BlocksFree, s.BlocksAvail
	out.Files, out.Ffree = s.Files, s.FilesFree
	out.Bsize, out.Frsize = s.BlockSize, s.BlockSize
	out.NameLen = s.NameLen
	return fuse.OK
}

func lockIn(in *fuse.LkIn) Lock {
	return Lock{Type: in.Lk.Typ, Start: in.Lk.Start, End: in.Lk.End, PID: in.Lk.Pid, Flock: in.LkFlags&fuse.LK_FLOCK != 0}
}

func (r *raw) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	lk, err := r.fs.GetLock(r.ctx(cancel), Handle(in.Fh), in.Owner, lockIn(in))
	if err != nil {
		return r.status("getlk", err)
	}
	out.Lk = fuse.FileLock{Start: lk.Start, End: lk.End, Typ: lk.Type, Pid: lk.PID}
	return fuse.OK
}

func (r *raw) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	return r.status("setlk", r.fs.SetLock(r.ctx(cancel), Handle(in.Fh), in.Owner, lockIn(in), false))
}

func (r *raw) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	return r.status("setlkw", r.fs.SetLock(r.lockCtx(cancel), Handle(in.Fh), in.Owner, lockIn(in), true))
}

package fusemount

import (
	"context"
	"math"
	"sort"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// memFS is an in-memory FS for this package's tests only: it lets the
// FUSE translation be checked on a real mount (the kernel, go-fuse and
// this package) without a cluster. It keeps POSIX's namespace rules the
// kernel leaves to a file system (link counts, times, setgid
// inheritance, rename's cases); permission bits are the kernel's to check
// (default_permissions). Cuttle's real client is tested on the mount in
// internal/cli.
type memFS struct {
	mu      sync.Mutex
	nodes   map[uint64]*memNode
	next    uint64
	handles map[Handle]uint64
	nextFH  Handle
	locks   map[uint64][]memLock
}

type memNode struct {
	attr    Attr
	data    []byte
	target  string
	entries map[string]uint64 // directories
	parent  uint64
	xattrs  map[string][]byte
	opens   int
}

type memLock struct {
	owner uint64
	lk    Lock
}

func newMemFS() *memFS {
	fs := &memFS{nodes: map[uint64]*memNode{}, next: 2, handles: map[Handle]uint64{}, locks: map[uint64][]memLock{}}
	now := time.Now()
	fs.nodes[1] = &memNode{attr: Attr{Ino: 1, Mode: unix.S_IFDIR | 0o755, Nlink: 2, Atime: now, Mtime: now, Ctime: now},
		entries: map[string]uint64{}, parent: 1, xattrs: map[string][]byte{}}
	return fs
}

func (fs *memFS) Root() uint64 { return 1 }

func (fs *memFS) dir(ino uint64) (*memNode, error) {
	n, ok := fs.nodes[ino]
	if !ok {
		return nil, syscall.ENOENT
	}
	if n.entries == nil {
		return nil, syscall.ENOTDIR
	}
	return n, nil
}

func checkName(name string) error {
	if len(name) > 255 {
		return syscall.ENAMETOOLONG
	}
	return nil
}

func (fs *memFS) Lookup(ctx context.Context, c Caller, parent uint64, name string) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := checkName(name); err != nil {
		return Attr{}, err
	}
	d, err := fs.dir(parent)
	if err != nil {
		return Attr{}, err
	}
	ino, ok := d.entries[name]
	if !ok {
		return Attr{}, syscall.ENOENT
	}
	return fs.nodes[ino].attr, nil
}

func (fs *memFS) Forget(ino, n uint64) {}

func (fs *memFS) Getattr(ctx context.Context, c Caller, ino uint64) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, ok := fs.nodes[ino]
	if !ok {
		return Attr{}, syscall.ENOENT
	}
	return n.attr, nil
}

// resize sets the size; data holds only the bytes up to the last one
// written, the rest reads as zeros (a sparse 5 GiB file costs nothing).
func (n *memNode) resize(size uint64) {
	if size < uint64(len(n.data)) {
		n.data = n.data[:size]
	}
	n.attr.Size = size
	n.attr.Blocks = (size + 511) / 512
}

func (fs *memFS) Setattr(ctx context.Context, c Caller, ino uint64, in SetAttrIn) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, ok := fs.nodes[ino]
	if !ok {
		return Attr{}, syscall.ENOENT
	}
	now := time.Now()
	a := &n.attr
	if in.Valid&SetMode != 0 {
		a.Mode = a.Mode&unix.S_IFMT | in.Mode&0o7777
	}
	if in.Valid&(SetUID|SetGID) != 0 {
		if in.Valid&SetUID != 0 {
			a.UID = in.UID
		}
		if in.Valid&SetGID != 0 {
			a.GID = in.GID
		}
		if a.Mode&unix.S_IFMT != unix.S_IFDIR {
			a.Mode &^= unix.S_ISUID
			if a.Mode&0o010 != 0 {
				a.Mode &^= unix.S_ISGID
			}
		}
	}
	if in.Valid&SetKillSuidGid != 0 {
		a.Mode &^= unix.S_ISUID
		if a.Mode&0o010 != 0 {
			a.Mode &^= unix.S_ISGID
		}
	}
	if in.Valid&SetSize != 0 {
		if a.Mode&unix.S_IFMT == unix.S_IFDIR {
			return Attr{}, syscall.EISDIR
		}
		n.resize(in.Size)
		a.Mtime = now
	}
	switch {
	case in.Valid&SetAtimeNow != 0:
		a.Atime = now
	case in.Valid&SetAtime != 0:
		a.Atime = in.Atime
	}
	switch {
	case in.Valid&SetMtimeNow != 0:
		a.Mtime = now
	case in.Valid&SetMtime != 0:
		a.Mtime = in.Mtime
	}
	a.Ctime = now
	return *a, nil
}

func (fs *memFS) Readlink(ctx context.Context, c Caller, ino uint64) (string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, ok := fs.nodes[ino]
	if !ok || n.attr.Mode&unix.S_IFMT != unix.S_IFLNK {
		return "", syscall.EINVAL
	}
	return n.target, nil
}

// add makes a node in parent, with setgid directories' inheritance.
func (fs *memFS) add(c Caller, parent uint64, name string, mode uint32) (*memNode, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	d, err := fs.dir(parent)
	if err != nil {
		return nil, err
	}
	if _, ok := d.entries[name]; ok {
		return nil, syscall.EEXIST
	}
	now := time.Now()
	n := &memNode{attr: Attr{Ino: fs.next, Mode: mode, Nlink: 1, UID: c.UID, GID: c.GID, Atime: now, Mtime: now, Ctime: now},
		xattrs: map[string][]byte{}, parent: parent}
	if d.attr.Mode&unix.S_ISGID != 0 {
		n.attr.GID = d.attr.GID
		if mode&unix.S_IFMT == unix.S_IFDIR {
			n.attr.Mode |= unix.S_ISGID
		}
	} else if mode&unix.S_ISGID != 0 && c.UID != 0 && n.attr.GID != c.GID && !containsGroup(c.Groups, n.attr.GID) {
		n.attr.Mode &^= unix.S_ISGID
	}
	if mode&unix.S_IFMT == unix.S_IFREG && n.attr.Mode&unix.S_ISGID != 0 && c.UID != 0 &&
		n.attr.GID != c.GID && !containsGroup(c.Groups, n.attr.GID) {
		n.attr.Mode &^= unix.S_ISGID
	}
	fs.next++
	fs.nodes[n.attr.Ino] = n
	d.entries[name] = n.attr.Ino
	d.attr.Mtime, d.attr.Ctime = now, now
	return n, nil
}

func (fs *memFS) Mknod(ctx context.Context, c Caller, parent uint64, name string, mode, rdev uint32) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.add(c, parent, name, mode)
	if err != nil {
		return Attr{}, err
	}
	n.attr.Rdev = rdev
	return n.attr, nil
}

func (fs *memFS) Mkdir(ctx context.Context, c Caller, parent uint64, name string, mode uint32) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.add(c, parent, name, unix.S_IFDIR|mode)
	if err != nil {
		return Attr{}, err
	}
	n.entries = map[string]uint64{}
	n.attr.Nlink = 2
	fs.nodes[parent].attr.Nlink++
	return n.attr, nil
}

func (fs *memFS) Symlink(ctx context.Context, c Caller, parent uint64, name, target string) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(target) >= 4096 {
		return Attr{}, syscall.ENAMETOOLONG
	}
	n, err := fs.add(c, parent, name, unix.S_IFLNK|0o777)
	if err != nil {
		return Attr{}, err
	}
	n.target = target
	n.attr.Size = uint64(len(target))
	return n.attr, nil
}

func (fs *memFS) Link(ctx context.Context, c Caller, ino, newParent uint64, newName string) (Attr, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := checkName(newName); err != nil {
		return Attr{}, err
	}
	n, ok := fs.nodes[ino]
	if !ok {
		return Attr{}, syscall.ENOENT
	}
	if n.entries != nil {
		return Attr{}, syscall.EPERM
	}
	d, err := fs.dir(newParent)
	if err != nil {
		return Attr{}, err
	}
	if _, ok := d.entries[newName]; ok {
		return Attr{}, syscall.EEXIST
	}
	now := time.Now()
	d.entries[newName] = ino
	d.attr.Mtime, d.attr.Ctime = now, now
	n.attr.Nlink++
	n.attr.Ctime = now
	return n.attr, nil
}

// drop removes a name's reference to a node.
func (fs *memFS) drop(ino uint64, now time.Time) {
	n := fs.nodes[ino]
	if n.entries != nil {
		n.attr.Nlink = 0
	} else {
		n.attr.Nlink--
	}
	n.attr.Ctime = now
	if n.attr.Nlink == 0 && n.opens == 0 {
		delete(fs.nodes, ino)
	}
}

func (fs *memFS) Unlink(ctx context.Context, c Caller, parent uint64, name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, err := fs.dir(parent)
	if err != nil {
		return err
	}
	ino, ok := d.entries[name]
	if !ok {
		return syscall.ENOENT
	}
	if fs.nodes[ino].entries != nil {
		return syscall.EISDIR
	}
	now := time.Now()
	delete(d.entries, name)
	d.attr.Mtime, d.attr.Ctime = now, now
	fs.drop(ino, now)
	return nil
}

func (fs *memFS) Rmdir(ctx context.Context, c Caller, parent uint64, name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, err := fs.dir(parent)
	if err != nil {
		return err
	}
	ino, ok := d.entries[name]
	if !ok {
		return syscall.ENOENT
	}
	n := fs.nodes[ino]
	if n.entries == nil {
		return syscall.ENOTDIR
	}
	if len(n.entries) > 0 {
		return syscall.ENOTEMPTY
	}
	now := time.Now()
	delete(d.entries, name)
	d.attr.Nlink--
	d.attr.Mtime, d.attr.Ctime = now, now
	fs.drop(ino, now)
	return nil
}

// under reports whether dir is anc or below it.
func (fs *memFS) under(dir, anc uint64) bool {
	for {
		if dir == anc {
			return true
		}
		if dir == 1 {
			return false
		}
		dir = fs.nodes[dir].parent
	}
}

func (fs *memFS) Rename(ctx context.Context, c Caller, op uint64, oldName string, np uint64, newName string, flags uint32) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := checkName(newName); err != nil {
		return err
	}
	od, err := fs.dir(op)
	if err != nil {
		return err
	}
	nd, err := fs.dir(np)
	if err != nil {
		return err
	}
	src, ok := od.entries[oldName]
	if !ok {
		return syscall.ENOENT
	}
	sn := fs.nodes[src]
	dst, exists := nd.entries[newName]
	if sn.entries != nil && fs.under(np, src) {
		return syscall.EINVAL
	}
	now := time.Now()
	switch {
	case flags&unix.RENAME_EXCHANGE != 0:
		if !exists {
			return syscall.ENOENT
		}
		od.entries[oldName], nd.entries[newName] = dst, src
		fs.nodes[dst].parent, sn.parent = op, np
		od.attr.Mtime, od.attr.Ctime, nd.attr.Mtime, nd.attr.Ctime = now, now, now, now
		return nil
	case exists && flags&unix.RENAME_NOREPLACE != 0:
		return syscall.EEXIST
	}
	if exists {
		if dst == src {
			return nil
		}
		dn := fs.nodes[dst]
		switch {
		case sn.entries == nil && dn.entries != nil:
			return syscall.EISDIR
		case sn.entries != nil && dn.entries == nil:
			return syscall.ENOTDIR
		case len(dn.entries) > 0:
			return syscall.ENOTEMPTY
		}
		if dn.entries != nil {
			nd.attr.Nlink--
		}
		fs.drop(dst, now)
	}
	delete(od.entries, oldName)
	nd.entries[newName] = src
	if sn.entries != nil && op != np {
		od.attr.Nlink--
		nd.attr.Nlink++
	}
	sn.parent = np
	sn.attr.Ctime = now
	od.attr.Mtime, od.attr.Ctime, nd.attr.Mtime, nd.attr.Ctime = now, now, now, now
	return nil
}

func (fs *memFS) open(ino uint64) Handle {
	fs.nextFH++
	fs.handles[fs.nextFH] = ino
	fs.nodes[ino].opens++
	return fs.nextFH
}

func (fs *memFS) Open(ctx context.Context, c Caller, ino uint64, flags uint32) (Handle, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, ok := fs.nodes[ino]
	if !ok {
		return 0, syscall.ENOENT
	}
	if flags&unix.O_TRUNC != 0 && n.attr.Size > 0 {
		n.resize(0)
		n.attr.Mtime, n.attr.Ctime = time.Now(), time.Now()
	}
	return fs.open(ino), nil
}

func (fs *memFS) Create(ctx context.Context, c Caller, parent uint64, name string, flags, mode uint32) (Attr, Handle, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if d, err := fs.dir(parent); err == nil {
		if ino, ok := d.entries[name]; ok {
			if flags&unix.O_EXCL != 0 {
				return Attr{}, 0, syscall.EEXIST
			}
			return fs.nodes[ino].attr, fs.open(ino), nil
		}
	}
	n, err := fs.add(c, parent, name, unix.S_IFREG|mode&0o7777)
	if err != nil {
		return Attr{}, 0, err
	}
	return n.attr, fs.open(n.attr.Ino), nil
}

func (fs *memFS) node(h Handle) (*memNode, error) {
	ino, ok := fs.handles[h]
	if !ok {
		return nil, syscall.EBADF
	}
	return fs.nodes[ino], nil
}

func (fs *memFS) Read(ctx context.Context, h Handle, p []byte, off int64) (int, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.node(h)
	if err != nil {
		return 0, err
	}
	if off >= int64(n.attr.Size) {
		return 0, nil
	}
	p = p[:min(int64(len(p)), int64(n.attr.Size)-off)]
	k := 0
	if off < int64(len(n.data)) {
		k = copy(p, n.data[off:])
	}
	clear(p[k:])
	return len(p), nil
}

func (fs *memFS) Write(ctx context.Context, h Handle, p []byte, off int64) (int, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.node(h)
	if err != nil {
		return 0, err
	}
	end := uint64(off) + uint64(len(p))
	if end > uint64(len(n.data)) {
		n.data = append(n.data, make([]byte, end-uint64(len(n.data)))...)
	}
	n.attr.Size = max(n.attr.Size, end)
	n.attr.Blocks = (n.attr.Size + 511) / 512
	copy(n.data[off:], p)
	n.attr.Mtime, n.attr.Ctime = time.Now(), time.Now()
	return len(p), nil
}

func (fs *memFS) Flush(ctx context.Context, h Handle) error { return nil }

func (fs *memFS) Fsync(ctx context.Context, h Handle, dataOnly bool) error { return nil }

func (fs *memFS) Release(ctx context.Context, h Handle) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ino, ok := fs.handles[h]
	if !ok {
		return syscall.EBADF
	}
	delete(fs.handles, h)
	n := fs.nodes[ino]
	n.opens--
	if n.opens == 0 && n.attr.Nlink == 0 {
		delete(fs.nodes, ino)
	}
	return nil
}

func (fs *memFS) Fallocate(ctx context.Context, h Handle, mode uint32, off, length int64) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.node(h)
	if err != nil {
		return err
	}
	end := uint64(off + length)
	switch {
	case mode&unix.FALLOC_FL_PUNCH_HOLE != 0, mode&unix.FALLOC_FL_ZERO_RANGE != 0:
		stop := min(end, uint64(len(n.data)))
		if uint64(off) < stop {
			clear(n.data[off:stop])
		}
	}
	if mode&unix.FALLOC_FL_KEEP_SIZE == 0 && end > n.attr.Size {
		n.resize(end)
	}
	return nil
}

func (fs *memFS) OpenDir(ctx context.Context, c Caller, ino uint64) (Handle, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.dir(ino); err != nil {
		return 0, err
	}
	return fs.open(ino), nil
}

// ReadDir lists in name order; an entry's offset is its position + 1.
func (fs *memFS) ReadDir(ctx context.Context, h Handle, offset uint64, plus bool) ([]DirEntry, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, err := fs.node(h)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(d.entries))
	for name := range d.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	all := []DirEntry{{Name: ".", Ino: d.attr.Ino, Mode: unix.S_IFDIR}, {Name: "..", Ino: d.parent, Mode: unix.S_IFDIR}}
	for _, name := range names {
		n := fs.nodes[d.entries[name]]
		e := DirEntry{Name: name, Ino: n.attr.Ino, Mode: n.attr.Mode}
		if plus {
			a := n.attr
			e.Attr = &a
		}
		all = append(all, e)
	}
	if d.attr.Nlink == 0 {
		all = nil
	}
	var out []DirEntry
	for i := range all {
		if uint64(i) >= offset {
			all[i].Offset = uint64(i) + 1
			out = append(out, all[i])
		}
	}
	return out, nil
}

func (fs *memFS) ReleaseDir(h Handle) { fs.Release(context.Background(), h) }

func (fs *memFS) Getxattr(ctx context.Context, c Caller, ino uint64, name string) ([]byte, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	v, ok := fs.nodes[ino].xattrs[name]
	if !ok {
		return nil, syscall.ENODATA
	}
	return v, nil
}

func (fs *memFS) Listxattr(ctx context.Context, c Caller, ino uint64) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var names []string
	for n := range fs.nodes[ino].xattrs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (fs *memFS) Setxattr(ctx context.Context, c Caller, ino uint64, name string, value []byte, flags uint32) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	x := fs.nodes[ino].xattrs
	_, exists := x[name]
	switch {
	case flags&unix.XATTR_CREATE != 0 && exists:
		return syscall.EEXIST
	case flags&unix.XATTR_REPLACE != 0 && !exists:
		return syscall.ENODATA
	}
	x[name] = append([]byte(nil), value...)
	return nil
}

func (fs *memFS) Removexattr(ctx context.Context, c Caller, ino uint64, name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	x := fs.nodes[ino].xattrs
	if _, ok := x[name]; !ok {
		return syscall.ENODATA
	}
	delete(x, name)
	return nil
}

func (fs *memFS) Statfs(ctx context.Context) (Statfs, error) {
	return Statfs{Blocks: 1 << 20, BlocksFree: 1 << 19, BlocksAvail: 1 << 19, Files: 1 << 20, FilesFree: 1 << 19,
		BlockSize: 4096, NameLen: 255}, nil
}

func overlaps(a, b Lock) bool { return a.Start <= b.End && b.Start <= a.End }

func (fs *memFS) conflict(ino, owner uint64, lk Lock) (Lock, bool) {
	for _, l := range fs.locks[ino] {
		if l.owner != owner && overlaps(l.lk, lk) && (l.lk.Type == unix.F_WRLCK || lk.Type == unix.F_WRLCK) {
			return l.lk, true
		}
	}
	return Lock{}, false
}

func (fs *memFS) GetLock(ctx context.Context, h Handle, owner uint64, lk Lock) (Lock, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if l, ok := fs.conflict(fs.handles[h], owner, lk); ok {
		return l, nil
	}
	return Lock{Type: unix.F_UNLCK}, nil
}

// SetLock keeps whole ranges per owner (no splitting): enough for the
// mount's tests, which take and release whole ranges.
func (fs *memFS) SetLock(ctx context.Context, h Handle, owner uint64, lk Lock, wait bool) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ino := fs.handles[h]
	var kept []memLock
	for _, l := range fs.locks[ino] {
		if l.owner != owner {
			kept = append(kept, l)
		}
	}
	if lk.Type == unix.F_UNLCK {
		fs.locks[ino] = kept
		return nil
	}
	if _, ok := fs.conflict(ino, owner, lk); ok {
		return syscall.EAGAIN
	}
	if lk.End == 0 {
		lk.End = math.MaxUint64
	}
	fs.locks[ino] = append(kept, memLock{owner, lk})
	return nil
}

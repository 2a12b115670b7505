// Package fusemount is the FUSE front end of a Cuttle file system: it
// serves the kernel's FUSE requests on a mount point (through go-fuse's
// raw protocol layer) from a file-system client, and mounts and unmounts.
//
// FUSE names files by node ids; Cuttle's client names them by inode
// numbers. The mount uses the inode number as the node id, so the
// kernel's view maps one to one onto the MDS's and no tree is kept here:
// this package only translates requests, attributes and errors. What the
// client must offer is the FS interface; fsclient's Mount provides it.
//
// Permission checks: the kernel checks mode bits (the default_permissions
// mount option, on by default as ceph-fuse has it) and the client sends
// every request with the caller's uid, gid and groups, so the MDS checks
// them too and a library client gets the same answers as the mount.
package fusemount

import (
	"context"
	"time"
)

// Caller is the process a request comes from, as the kernel reports it.
type Caller struct {
	UID, GID uint32
	// Groups: the caller's supplementary groups (read from /proc for an
	// unprivileged caller; nil for root, who needs none).
	Groups []uint32
	PID    uint32
}

// Attr is an inode's attributes and how long the kernel may cache them.
type Attr struct {
	Ino    uint64
	Mode   uint32 // file type and permission bits, as st_mode
	Nlink  uint32
	UID    uint32
	GID    uint32
	Rdev   uint32
	Size   uint64
	Blocks uint64 // 512-byte blocks
	Atime  time.Time
	Mtime  time.Time
	Ctime  time.Time
	// Valid is how long the kernel may keep the attributes without
	// asking again, EntryValid (lookups, creates, readdirplus entries)
	// the name: the client's caps and leases say; 0 asks every time.
	// A lookup that answers Ino 0 says the name does not exist, for
	// EntryValid.
	Valid, EntryValid time.Duration
}

// SetAttr bits: which fields of a SetAttrIn to change.
const (
	SetMode = 1 << iota
	SetUID
	SetGID
	SetSize
	SetAtime
	SetMtime
	SetAtimeNow
	SetMtimeNow
	SetCtime
	// SetKillSuidGid: clear setuid and setgid (a write or chown by a
	// non-owner, as the kernel asks).
	SetKillSuidGid
)

// SetAttrIn is a setattr: the fields Valid names.
type SetAttrIn struct {
	Valid        uint32
	Mode         uint32
	UID, GID     uint32
	Size         uint64
	Atime, Mtime time.Time
	Ctime        time.Time
	// Handle is the open file the setattr came through (ftruncate,
	// futimens), or 0.
	Handle Handle
}

// Handle is an open file or directory of the client.
type Handle uint64

// DirEntry is one directory entry. Offset is where a listing continues
// after it (opaque to the mount, never 0). Attr is filled for
// ReadDirPlus.
type DirEntry struct {
	Name   string
	Ino    uint64
	Mode   uint32 // at least the file type bits
	Offset uint64
	Attr   *Attr
}

// Statfs is the file system's capacity, as statfs(2) reports it.
type Statfs struct {
	Blocks, BlocksFree, BlocksAvail uint64
	Files, FilesFree                uint64
	BlockSize                       uint32
	NameLen                         uint32
}

// Lock is a POSIX record lock or a flock lock.
type Lock struct {
	Type  uint32 // unix.F_RDLCK, F_WRLCK or F_UNLCK
	Start uint64
	End   uint64 // inclusive; math.MaxUint64 to the end of the file
	PID   uint32
	Flock bool // a flock(2) lock: the whole file, owned by the open file
}

// FS is what the mount serves from: a file-system client that names
// inodes by number. Every error is a syscall.Errno, or wraps one
// (anything else is reported to the kernel as EIO).
type FS interface {
	// Root is the inode number of the mount's root directory.
	Root() uint64

	Lookup(ctx context.Context, c Caller, parent uint64, name string) (Attr, error)
	// Forget: the kernel dropped n references to ino (from lookups,
	// creates and readdirplus entries); the client may release its caps
	// once none are left.
	Forget(ino uint64, n uint64)
	Getattr(ctx context.Context, c Caller, ino uint64) (Attr, error)
	Setattr(ctx context.Context, c Caller, ino uint64, in SetAttrIn) (Attr, error)
	Readlink(ctx context.Context, c Caller, ino uint64) (string, error)

	Mknod(ctx context.Context, c Caller, parent uint64, name string, mode, rdev uint32) (Attr, error)
	Mkdir(ctx context.Context, c Caller, parent uint64, name string, mode uint32) (Attr, error)
	Symlink(ctx context.Context, c Caller, parent uint64, name, target string) (Attr, error)
	Link(ctx context.Context, c Caller, ino, newParent uint64, newName string) (Attr, error)
	Unlink(ctx context.Context, c Caller, parent uint64, name string) error
	Rmdir(ctx context.Context, c Caller, parent uint64, name string) error
	// Rename: flags are renameat2's (RENAME_NOREPLACE, RENAME_EXCHANGE).
	Rename(ctx context.Context, c Caller, oldParent uint64, oldName string, newParent uint64, newName string, flags uint32) error

	// Open and Create: flags are open(2)'s.
	Open(ctx context.Context, c Caller, ino uint64, flags uint32) (Handle, error)
	Create(ctx context.Context, c Caller, parent uint64, name string, flags, mode uint32) (Attr, Handle, error)
	Read(ctx context.Context, h Handle, p []byte, off int64) (int, error)
	Write(ctx context.Context, h Handle, p []byte, off int64) (int, error)
	// Flush: a close(2) of one descriptor of h (there may be others).
	Flush(ctx context.Context, h Handle) error
	Fsync(ctx context.Context, h Handle, dataOnly bool) error
	// Release: the last descriptor of h is gone.
	Release(ctx context.Context, h Handle) error
	// Fallocate: mode is fallocate(2)'s.
	Fallocate(ctx context.Context, h Handle, mode uint32, off, length int64) error

	OpenDir(ctx context.Context, c Caller, ino uint64) (Handle, error)
	// ReadDir returns entries after offset (0: from the start, "." and
	// ".." included), as many as the client likes; none at the end.
	ReadDir(ctx context.Context, h Handle, offset uint64, plus bool) ([]DirEntry, error)
	ReleaseDir(h Handle)

	Getxattr(ctx context.Context, c Caller, ino uint64, name string) ([]byte, error)
	Listxattr(ctx context.Context, c Caller, ino uint64) ([]string, error)
	// Setxattr: flags are setxattr(2)'s (XATTR_CREATE, XATTR_REPLACE).
	Setxattr(ctx context.Context, c Caller, ino uint64, name string, value []byte, flags uint32) error
	Removexattr(ctx context.Context, c Caller, ino uint64, name string) error

	Statfs(ctx context.Context) (Statfs, error)

	// GetLock returns a lock that would conflict with lk (Type F_UNLCK
	// if none); SetLock takes or releases lk for owner, waiting for
	// conflicting locks to go if wait.
	GetLock(ctx context.Context, h Handle, owner uint64, lk Lock) (Lock, error)
	SetLock(ctx context.Context, h Handle, owner uint64, lk Lock, wait bool) error
}

package fsclient

import (
	"io/fs"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Stat is an inode's attributes, as stat(2) reports them.
type Stat struct {
	Ino      uint64
	Mode     uint32 // type and permission bits, as st_mode
	Nlink    uint32
	UID, GID uint32
	Rdev     uint64
	Size     uint64
	Blksize  uint32 // the layout's stripe unit: the I/O size that fills objects
	Blocks   uint64 // 512-byte blocks (the size rounded up)
	Atime    time.Time
	Mtime    time.Time
	Ctime    time.Time
	Btime    time.Time // birth time
	// Approx names the Attr* fields a Statlite did not ask for and that
	// may be stale.
	Approx uint32
	// Directories: entries, and the recursive bytes and files below.
	Files, Subdirs  uint64
	RBytes, RFiles  uint64
	Symlink         string // a symlink's target
	ChangeAttribute uint64
	// AttrValid is how long these attributes stay exact without
	// asking again (the caps or the lease the client holds: a kernel
	// may cache them that long); EntryValid, for what Inodes' Lookup
	// and the calls that create a name return, how long the name does.
	// The client revokes both from the kernel through SetInvalidate.
	AttrValid, EntryValid time.Duration
}

func statOf(s *wire.InodeStat) *Stat {
	st := &Stat{Ino: s.Ino, Mode: s.Mode, Nlink: s.Nlink, UID: s.UID, GID: s.GID, Rdev: s.Rdev, Size: s.Size,
		Blksize: s.Layout.StripeUnit, Blocks: (s.Size + 511) / 512,
		Atime: s.Atime.Time(), Mtime: s.Mtime.Time(), Ctime: s.Ctime.Time(), Btime: s.Btime.Time(),
		Files: s.Files, Subdirs: s.Subdirs, RBytes: s.RBytes, RFiles: s.RFiles, Symlink: s.Symlink,
		ChangeAttribute: s.ChangeAttr}
	if st.Blksize == 0 {
		st.Blksize = 4 << 20
	}
	return st
}

// IsDir reports whether the inode is a directory.
func (s *Stat) IsDir() bool { return s.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// FileMode returns Mode as an fs.FileMode.
func (s *Stat) FileMode() fs.FileMode {
	m := fs.FileMode(s.Mode & 0o777)
	switch s.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	}
	if s.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

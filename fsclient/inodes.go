package fsclient

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Inodes is the client's inode-level API: every call names files by
// inode number (a directory and a name for what it creates or removes),
// as the kernel's FUSE requests do and libcephfs's ll_ calls. The mount
// (internal/fusemount) is built on it; applications use the path API.
// Errors wrap a syscall.Errno.
type Inodes struct{ c *Client }

// Inodes returns the inode-level API of c.
func (c *Client) Inodes() Inodes { return Inodes{c} }

// Root is the inode number of the mount's root directory.
func (n Inodes) Root() uint64 { return n.c.rootIno }

func inoErr(op string, ino uint64, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("fsclient: %s of inode %#x: %w", op, ino, err)
}

// Lookup returns the attributes of name in directory dir.
func (n Inodes) Lookup(ctx context.Context, dir uint64, name string) (*Stat, error) {
	st, err := n.c.lookup(ctx, dir, name)
	if err != nil {
		return nil, inoErr("lookup "+name, dir, err)
	}
	return n.c.kernelStat(dir, name, &st), nil
}

// NegativeValid is how long name is known absent from dir (a lease on
// the absence, after a Lookup that failed with ENOENT): a kernel may
// cache the absence that long.
func (n Inodes) NegativeValid(dir uint64, name string) time.Duration {
	n.c.mu.Lock()
	defer n.c.mu.Unlock()
	now := n.c.clock.Now()
	if d, ok := n.c.dentries[dentryKey{dir, name}]; ok && d.ino == 0 && now.Before(d.until) {
		return d.until.Sub(now)
	}
	return 0
}

// Getattr returns ino's attributes, exact (size and mtime collected from
// writers when other clients write).
func (n Inodes) Getattr(ctx context.Context, ino uint64) (*Stat, error) {
	st, err := n.c.getattr(ctx, ino, wire.AttrSize|wire.AttrMtime)
	if err != nil {
		return nil, inoErr("getattr", ino, err)
	}
	return n.c.kernelStat(0, "", &st), nil
}

// Statlite is Client.Statlite by inode number: ino's attributes, of
// which only those in mask (wire.Attr* bits) must be exact; the others
// come back at once without revoking writers, flagged in Stat.Approx
// when they may be stale.
func (n Inodes) Statlite(ctx context.Context, ino uint64, mask uint32) (*Stat, error) {
	r, err := n.c.do(ctx, &wire.ClientRequest{Op: wire.MetaStatlite, Path: wire.FilePath{Ino: ino}, Mask: mask}, false)
	if err != nil {
		return nil, inoErr("statlite", ino, err)
	}
	st, err := target(r)
	if err != nil {
		return nil, inoErr("statlite", ino, err)
	}
	s := statOf(&st)
	s.Approx = r.Approx
	return s, nil
}

// SetAttr is what a Setattr changes: the fields Mask names (wire.Attr*
// bits: AttrMode, AttrUID, AttrGID, AttrSize, AttrAtime, AttrMtime, with
// AttrAtimeNow/AttrMtimeNow for the MDS's now, AttrCtime, AttrKillSguid).
type SetAttr struct {
	Mask         uint32
	Mode         uint32
	UID, GID     uint32
	Size         uint64
	Atime, Mtime time.Time
	Ctime        time.Time
}

// Setattr changes ino's attributes and returns them, for a kernel to
// keep for no time (see kernelStatFor). A size change goes
// through the truncate path (buffers written back, the MDS records the
// size, then the objects past it are cut).
func (n Inodes) Setattr(ctx context.Context, ino uint64, s SetAttr) (*Stat, error) {
	if s.Mask&wire.AttrSize != 0 {
		st, err := n.c.getattr(ctx, ino, 0)
		if err != nil {
			return nil, inoErr("truncate", ino, err)
		}
		if err := n.c.truncate(ctx, ino, st, s.Size); err != nil {
			return nil, inoErr("truncate", ino, err)
		}
		s.Mask &^= wire.AttrSize
	}
	if s.Mask != 0 {
		req := &wire.ClientRequest{Op: wire.MetaSetattr, Path: wire.FilePath{Ino: ino}, Mask: s.Mask,
			Mode: s.Mode & 0o7777, SetUID: s.UID, SetGID: s.GID,
			Atime: wire.FSTimeOf(s.Atime), Mtime: wire.FSTimeOf(s.Mtime), Ctime: wire.FSTimeOf(s.Ctime)}
		if _, err := n.c.do(ctx, req, false); err != nil {
			return nil, inoErr("setattr", ino, err)
		}
	}
	st, err := n.c.getattr(ctx, ino, wire.AttrSize|wire.AttrMtime)
	if err != nil {
		return nil, inoErr("getattr", ino, err)
	}
	return n.c.kernelStatFor(0, "", &st, false), nil
}

// make sends a request that creates name in dir and returns what it
// made.
func (n Inodes) make(ctx context.Context, op string, dir uint64, name string, req *wire.ClientRequest) (*Stat, error) {
	req.Path = wire.FilePath{Ino: dir, Path: name}
	n.c.forget(dir, name)
	r, err := n.c.do(ctx, req, false)
	if err != nil {
		return nil, inoErr(op+" "+name, dir, err)
	}
	st, err := target(r)
	if err != nil {
		return nil, inoErr(op+" "+name, dir, err)
	}
	return n.c.kernelStat(dir, name, &st), nil
}

// Mknod makes a special file (or a regular one) name in dir.
func (n Inodes) Mknod(ctx context.Context, dir uint64, name string, mode uint32, rdev uint64) (*Stat, error) {
	return n.make(ctx, "mknod", dir, name, &wire.ClientRequest{Op: wire.MetaMknod, Mode: mode, Rdev: rdev})
}

// Mkdir makes directory name in dir.
func (n Inodes) Mkdir(ctx context.Context, dir uint64, name string, mode uint32) (*Stat, error) {
	return n.make(ctx, "mkdir", dir, name, &wire.ClientRequest{Op: wire.MetaMkdir, Mode: mode&0o7777 | syscall.S_IFDIR})
}

// Symlink makes name in dir a symlink to target.
func (n Inodes) Symlink(ctx context.Context, dir uint64, name, target string) (*Stat, error) {
	return n.make(ctx, "symlink", dir, name, &wire.ClientRequest{Op: wire.MetaSymlink, Target: target})
}

// Link makes name in dir a new name of ino.
func (n Inodes) Link(ctx context.Context, ino, dir uint64, name string) (*Stat, error) {
	return n.make(ctx, "link", dir, name, &wire.ClientRequest{Op: wire.MetaLink, Path2: wire.FilePath{Ino: ino}})
}

func (n Inodes) remove(ctx context.Context, op string, meta wire.MetaOp, dir uint64, name string) error {
	n.c.forget(dir, name)
	_, err := n.c.do(ctx, &wire.ClientRequest{Op: meta, Path: wire.FilePath{Ino: dir, Path: name}}, false)
	return inoErr(op+" "+name, dir, err)
}

// Unlink removes name (not a directory) from dir.
func (n Inodes) Unlink(ctx context.Context, dir uint64, name string) error {
	return n.remove(ctx, "unlink", wire.MetaUnlink, dir, name)
}

// Rmdir removes the empty directory name from dir.
func (n Inodes) Rmdir(ctx context.Context, dir uint64, name string) error {
	return n.remove(ctx, "rmdir", wire.MetaRmdir, dir, name)
}

// Rename moves oldDir/oldName to newDir/newName; flags are renameat2's
// (RENAME_NOREPLACE 1, RENAME_EXCHANGE 2).
func (n Inodes) Rename(ctx context.Context, oldDir uint64, oldName string, newDir uint64, newName string, flags uint32) error {
	n.c.forget(oldDir, oldName)
	n.c.forget(newDir, newName)
	_, err := n.c.do(ctx, &wire.ClientRequest{Op: wire.MetaRename, Path: wire.FilePath{Ino: newDir, Path: newName},
		Path2: wire.FilePath{Ino: oldDir, Path: oldName}, OpFlags: flags}, false)
	return inoErr("rename "+oldName, oldDir, err)
}

// Readlink returns symlink ino's target.
func (n Inodes) Readlink(ctx context.Context, ino uint64) (string, error) {
	st, err := n.c.getattr(ctx, ino, 0)
	if err != nil {
		return "", inoErr("readlink", ino, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		return "", inoErr("readlink", ino, syscall.EINVAL)
	}
	return st.Symlink, nil
}

// Open opens ino with flags (os.O_*, O_LAZY; O_TRUNC empties it).
func (n Inodes) Open(ctx context.Context, ino uint64, flags int) (*File, error) {
	om := openMode(flags)
	r, err := n.c.do(ctx, &wire.ClientRequest{Op: wire.MetaOpen, Path: wire.FilePath{Ino: ino}, OpFlags: uint32(flags),
		WantCaps: uint32(locker.WantedFor(om))}, truncates(flags))
	if err != nil {
		return nil, inoErr("open", ino, err)
	}
	return n.c.opened(r, fmt.Sprintf("inode %#x", ino), flags, om)
}

// Create opens name in dir, creating it with mode under O_CREAT (and
// failing with EEXIST under O_EXCL), and returns it with its attributes.
func (n Inodes) Create(ctx context.Context, dir uint64, name string, flags int, mode uint32) (*File, *Stat, error) {
	om := openMode(flags)
	n.c.forget(dir, name)
	r, err := n.c.do(ctx, &wire.ClientRequest{Op: wire.MetaCreate, Path: wire.FilePath{Ino: dir, Path: name},
		OpFlags: uint32(flags | os.O_CREATE), Mode: mode&0o7777 | syscall.S_IFREG, WantCaps: uint32(locker.WantedFor(om))}, truncates(flags))
	if err != nil {
		return nil, nil, inoErr("create "+name, dir, err)
	}
	f, err := n.c.opened(r, name, flags, om)
	if err != nil {
		return nil, nil, err
	}
	st, _ := target(r)
	return f, n.c.kernelStat(dir, name, &st), nil
}

// ReadDir lists directory ino whole (without "." and ".."), with every
// entry's attributes if plus.
func (n Inodes) ReadDir(ctx context.Context, ino uint64, plus bool) ([]DirEntry, error) {
	out, err := n.c.listDir(ctx, ino, plus)
	return out, inoErr("readdir", ino, err)
}

// Getxattr returns the value of ino's extended attribute name. POSIX
// ACLs are not supported (EOPNOTSUPP, without asking the MDS: tools
// such as ls ask for them of every file, and stop on EOPNOTSUPP).
func (n Inodes) Getxattr(ctx context.Context, ino uint64, name string) ([]byte, error) {
	if wire.IsPosixACL(name) {
		return nil, inoErr("getxattr "+name, ino, syscall.EOPNOTSUPP)
	}
	r, err := n.c.do(ctx, &wire.ClientRequest{Op: wire.MetaGetxattr, Path: wire.FilePath{Ino: ino}, Name: name}, false)
	if err != nil {
		return nil, inoErr("getxattr "+name, ino, err)
	}
	return r.Data, nil
}

// Setxattr sets ino's extended attribute name (flags XattrCreate,
// XattrReplace).
func (n Inodes) Setxattr(ctx context.Context, ino uint64, name string, value []byte, flags uint32) error {
	_, err := n.c.do(ctx, &wire.ClientRequest{Op: wire.MetaSetxattr, Path: wire.FilePath{Ino: ino}, Name: name,
		Value: value, OpFlags: flags}, false)
	return inoErr("setxattr "+name, ino, err)
}

// Listxattr returns the names of ino's extended attributes.
func (n Inodes) Listxattr(ctx context.Context, ino uint64) ([]string, error) {
	r, err := n.c.do(ctx, &wire.ClientRequest{Op: wire.MetaListxattr, Path: wire.FilePath{Ino: ino}}, false)
	if err != nil {
		return nil, inoErr("listxattr", ino, err)
	}
	var names []string
	for _, b := range bytes.Split(r.Data, []byte{0}) {
		if len(b) > 0 {
			names = append(names, string(b))
		}
	}
	return names, nil
}

// Removexattr removes ino's extended attribute name.
func (n Inodes) Removexattr(ctx context.Context, ino uint64, name string) error {
	_, err := n.c.do(ctx, &wire.ClientRequest{Op: wire.MetaRmxattr, Path: wire.FilePath{Ino: ino}, Name: name}, false)
	return inoErr("removexattr "+name, ino, err)
}

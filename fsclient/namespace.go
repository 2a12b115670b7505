package fsclient

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Stat returns the attributes of the file p names, following symlinks.
func (c *Client) Stat(ctx context.Context, p string) (*Stat, error) {
	_, st, err := c.walk(ctx, p, true)
	if err != nil {
		return nil, pathErr("stat", p, err)
	}
	return c.exactStat(ctx, p, st)
}

// Lstat is Stat without following a symlink at the end of p.
func (c *Client) Lstat(ctx context.Context, p string) (*Stat, error) {
	_, st, err := c.walk(ctx, p, false)
	if err != nil {
		return nil, pathErr("lstat", p, err)
	}
	return c.exactStat(ctx, p, st)
}

// exactStat returns st if the caps held keep it exact, else asks the MDS
// (which collects the size and mtime from writers).
func (c *Client) exactStat(ctx context.Context, p string, st wire.InodeStat) (*Stat, error) {
	st, err := c.getattr(ctx, st.Ino, wire.AttrSize|wire.AttrMtime)
	if err != nil {
		return nil, pathErr("stat", p, err)
	}
	return statOf(&st), nil
}

// Statlite returns the attributes of p, of which only those in mask
// (wire.Attr* bits: AttrSize, AttrMtime, ...) must be exact: the MDS
// answers at once without revoking writers, and flags the others that
// may be stale in Stat.Approx (the POSIX HPC extension).
func (c *Client) Statlite(ctx context.Context, p string, mask uint32) (*Stat, error) {
	ino, _, err := c.walk(ctx, p, true)
	if err != nil {
		return nil, pathErr("statlite", p, err)
	}
	r, err := c.do(ctx, &wire.ClientRequest{Op: wire.MetaStatlite, Path: wire.FilePath{Ino: ino}, Mask: mask}, false)
	if err != nil {
		return nil, pathErr("statlite", p, err)
	}
	st, err := target(r)
	if err != nil {
		return nil, pathErr("statlite", p, err)
	}
	s := statOf(&st)
	s.Approx = r.Approx
	return s, nil
}

// create sends a request that makes a name in p's directory.
func (c *Client) create(ctx context.Context, op string, p string, req *wire.ClientRequest) (*wire.ClientReply, error) {
	dir, name, err := c.walkParent(ctx, p)
	if err != nil {
		return nil, pathErr(op, p, err)
	}
	req.Path = wire.FilePath{Ino: dir, Path: name}
	c.forget(dir, name)
	r, err := c.do(ctx, req, req.Op == wire.MetaCreate && truncates(int(req.OpFlags)))
	if err != nil {
		return nil, pathErr(op, p, err)
	}
	return r, nil
}

// forget drops the cached dentry dir/name (before a change to it).
func (c *Client) forget(dir uint64, name string) {
	c.mu.Lock()
	delete(c.dentries, dentryKey{dir, name})
	c.mu.Unlock()
}

// Mkdir makes directory p with permissions mode (less nothing: the
// caller applies its umask).
func (c *Client) Mkdir(ctx context.Context, p string, mode uint32) error {
	_, err := c.create(ctx, "mkdir", p, &wire.ClientRequest{Op: wire.MetaMkdir, Mode: mode&0o7777 | syscall.S_IFDIR})
	return err
}

// Mknod makes a special file (FIFO, socket, device; or a regular file).
func (c *Client) Mknod(ctx context.Context, p string, mode uint32, rdev uint64) error {
	_, err := c.create(ctx, "mknod", p, &wire.ClientRequest{Op: wire.MetaMknod, Mode: mode, Rdev: rdev})
	return err
}

// Symlink makes p a symlink to target.
func (c *Client) Symlink(ctx context.Context, target, p string) error {
	_, err := c.create(ctx, "symlink", p, &wire.ClientRequest{Op: wire.MetaSymlink, Target: target})
	return err
}

// Readlink returns the target of symlink p.
func (c *Client) Readlink(ctx context.Context, p string) (string, error) {
	_, st, err := c.walk(ctx, p, false)
	if err != nil {
		return "", pathErr("readlink", p, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		return "", pathErr("readlink", p, syscall.EINVAL)
	}
	return st.Symlink, nil
}

// Link makes newPath a new name of the file oldPath names (not
// following a symlink there, as linkat without AT_SYMLINK_FOLLOW).
func (c *Client) Link(ctx context.Context, oldPath, newPath string) error {
	ino, _, err := c.walk(ctx, oldPath, false)
	if err != nil {
		return pathErr("link", oldPath, err)
	}
	_, err = c.create(ctx, "link", newPath, &wire.ClientRequest{Op: wire.MetaLink, Path2: wire.FilePath{Ino: ino}})
	return err
}

// remove sends an unlink or rmdir of p.
func (c *Client) remove(ctx context.Context, op string, meta wire.MetaOp, p string) error {
	dir, name, err := c.walkParent(ctx, p)
	if err != nil {
		return pathErr(op, p, err)
	}
	c.forget(dir, name)
	_, err = c.do(ctx, &wire.ClientRequest{Op: meta, Path: wire.FilePath{Ino: dir, Path: name}}, false)
	return pathErr(op, p, err)
}

// Unlink removes the name p (not a directory).
func (c *Client) Unlink(ctx context.Context, p string) error {
	return c.remove(ctx, "unlink", wire.MetaUnlink, p)
}

// Rmdir removes the empty directory p.
func (c *Client) Rmdir(ctx context.Context, p string) error {
	return c.remove(ctx, "rmdir", wire.MetaRmdir, p)
}

// Rename flags (renameat2).
const (
	RenameNoReplace = 1 // RENAME_NOREPLACE: fail with EEXIST if newPath exists
	RenameExchange  = 2 // RENAME_EXCHANGE: swap the two names
)

// Rename renames oldPath to newPath, replacing what newPath named
// (POSIX's rules: a directory only by an empty directory, ...).
func (c *Client) Rename(ctx context.Context, oldPath, newPath string) error {
	return c.Rename2(ctx, oldPath, newPath, 0)
}

// Rename2 is Rename with renameat2's flags.
func (c *Client) Rename2(ctx context.Context, oldPath, newPath string, flags uint32) error {
	odir, oname, err := c.walkParent(ctx, oldPath)
	if err != nil {
		return pathErr("rename", oldPath, err)
	}
	ndir, nname, err := c.walkParent(ctx, newPath)
	if err != nil {
		return pathErr("rename", newPath, err)
	}
	c.forget(odir, oname)
	c.forget(ndir, nname)
	_, err = c.do(ctx, &wire.ClientRequest{Op: wire.MetaRename, Path: wire.FilePath{Ino: ndir, Path: nname},
		Path2: wire.FilePath{Ino: odir, Path: oname}, OpFlags: flags}, false)
	return pathErr("rename", oldPath, err)
}

// setattr changes attributes of the file p names (following symlinks
// unless nofollow).
func (c *Client) setattr(ctx context.Context, op, p string, nofollow bool, req *wire.ClientRequest) error {
	ino, _, err := c.walk(ctx, p, !nofollow)
	if err != nil {
		return pathErr(op, p, err)
	}
	req.Op, req.Path = wire.MetaSetattr, wire.FilePath{Ino: ino}
	_, err = c.do(ctx, req, false)
	return pathErr(op, p, err)
}

// Chmod sets the permission bits (and setuid, setgid, sticky) of p.
func (c *Client) Chmod(ctx context.Context, p string, mode uint32) error {
	return c.setattr(ctx, "chmod", p, false, &wire.ClientRequest{Mask: wire.AttrMode, Mode: mode & 0o7777})
}

// Chown sets the owner and group of p; -1 leaves one as it is.
func (c *Client) Chown(ctx context.Context, p string, uid, gid int) error {
	return c.chown(ctx, "chown", p, false, uid, gid)
}

// Lchown is Chown of a symlink itself.
func (c *Client) Lchown(ctx context.Context, p string, uid, gid int) error {
	return c.chown(ctx, "lchown", p, true, uid, gid)
}

func (c *Client) chown(ctx context.Context, op, p string, nofollow bool, uid, gid int) error {
	req := &wire.ClientRequest{}
	if uid >= 0 {
		req.Mask |= wire.AttrUID
		req.SetUID = uint32(uid)
	}
	if gid >= 0 {
		req.Mask |= wire.AttrGID
		req.SetGID = uint32(gid)
	}
	if req.Mask == 0 {
		return nil
	}
	return c.setattr(ctx, op, p, nofollow, req)
}

// UtimeNow and UtimeOmit are Utimes' special times (utimensat's
// UTIME_NOW and UTIME_OMIT).
var (
	UtimeNow  = time.Unix(0, (1<<30)-1)
	UtimeOmit = time.Unix(0, (1<<30)-2)
)

// Utimes sets the access and modification times of p (UtimeNow: the
// MDS's now; UtimeOmit: unchanged).
func (c *Client) Utimes(ctx context.Context, p string, atime, mtime time.Time) error {
	req := &wire.ClientRequest{}
	switch {
	case atime.Equal(UtimeNow):
		req.Mask |= wire.AttrAtime | wire.AttrAtimeNow
	case !atime.Equal(UtimeOmit):
		req.Mask |= wire.AttrAtime
		req.Atime = wire.FSTimeOf(atime)
	}
	switch {
	case mtime.Equal(UtimeNow):
		req.Mask |= wire.AttrMtime | wire.AttrMtimeNow
	case !mtime.Equal(UtimeOmit):
		req.Mask |= wire.AttrMtime
		req.Mtime = wire.FSTimeOf(mtime)
	}
	if req.Mask == 0 {
		return nil
	}
	return c.setattr(ctx, "utimes", p, false, req)
}

// Truncate sets the size of file p: the MDS checks and records it, then
// the client cuts the objects past it (if the file is open here, its
// buffers too).
func (c *Client) Truncate(ctx context.Context, p string, size uint64) error {
	ino, st, err := c.walk(ctx, p, true)
	if err != nil {
		return pathErr("truncate", p, err)
	}
	return pathErr("truncate", p, c.truncate(ctx, ino, st, size))
}

// truncate sets ino's size at the MDS, then cuts its data.
func (c *Client) truncate(ctx context.Context, ino uint64, st wire.InodeStat, size uint64) error {
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return syscall.EISDIR
	}
	c.mu.Lock()
	var data *fileData
	if in := c.inodes[ino]; in != nil {
		data = in.data
	}
	c.mu.Unlock()
	old := st.Size
	if data != nil {
		// Write back first: the MDS's setattr revokes Fb, and the
		// size it records must not be undone by an older flush.
		if err := data.Flush(ctx); err != nil {
			return err
		}
		old = max(old, data.Size())
	}
	// Wait for the safe reply: the MDS cuts the data past a smaller
	// size before it, so nothing this client writes next can be cut.
	// Always: what looks like an extension here may cut data another
	// client wrote past the size this one knows (without Fs its size
	// may be stale), and a cut that lands after this client's next
	// write would remove that write.
	if _, err := c.do(ctx, &wire.ClientRequest{Op: wire.MetaSetattr, Path: wire.FilePath{Ino: ino},
		Mask: wire.AttrSize, Size: size}, true); err != nil {
		return err
	}
	if data != nil {
		return data.Truncate(ctx, size)
	}
	if size < old {
		s, err := c.striperFor(&st)
		if err != nil {
			return err
		}
		return s.Truncate(ctx, ino, old, size)
	}
	return nil
}

// DirEntry is one entry of a directory listing: its name and inode
// number and type (Mode's type bits), and with ReadDirPlus all its
// attributes.
type DirEntry struct {
	Name string
	Ino  uint64
	Mode uint32
	Stat *Stat // ReadDirPlus only
}

// ReadDir lists directory p (without "." and "..").
func (c *Client) ReadDir(ctx context.Context, p string) ([]DirEntry, error) {
	return c.readDir(ctx, "readdir", p, false)
}

// ReadDirPlus lists directory p with every entry's attributes, in the
// same round trips (NFS's READDIRPLUS; the paper's section 4.1).
func (c *Client) ReadDirPlus(ctx context.Context, p string) ([]DirEntry, error) {
	return c.readDir(ctx, "readdirplus", p, true)
}

func (c *Client) readDir(ctx context.Context, op, p string, plus bool) ([]DirEntry, error) {
	ino, st, err := c.walk(ctx, p, true)
	if err != nil {
		return nil, pathErr(op, p, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return nil, pathErr(op, p, syscall.ENOTDIR)
	}
	out, err := c.listDir(ctx, ino, plus)
	return out, pathErr(op, p, err)
}

// listDir reads directory ino whole, in as many requests as it takes.
func (c *Client) listDir(ctx context.Context, ino uint64, plus bool) ([]DirEntry, error) {
	var out []DirEntry
	req := wire.ClientRequest{Op: wire.MetaReaddir, Path: wire.FilePath{Ino: ino}, MaxEntries: 1024, Plus: plus}
	for {
		q := req
		r, err := c.do(ctx, &q, false)
		if err != nil {
			return nil, err
		}
		for i := range r.Dir.Entries {
			e := &r.Dir.Entries[i]
			de := DirEntry{Name: e.Name, Ino: e.Inode.Ino, Mode: e.Inode.Mode}
			if plus {
				de.Stat = c.kernelStat(ino, e.Name, &e.Inode)
			}
			out = append(out, de)
		}
		if r.Dir.End || len(r.Dir.Entries) == 0 {
			return out, nil
		}
		last := r.Dir.Entries[len(r.Dir.Entries)-1]
		req.Frag, req.StartName, req.Offset = r.Dir.Frag, last.Name, last.Offset
	}
}

// Getxattr returns the value of extended attribute name of p (with
// the virtual ceph.* attributes: layouts, quotas, recursive stats).
func (c *Client) Getxattr(ctx context.Context, p, name string) ([]byte, error) {
	ino, _, err := c.walk(ctx, p, true)
	if err != nil {
		return nil, pathErr("getxattr", p, err)
	}
	v, err := c.Inodes().Getxattr(ctx, ino, name)
	return v, pathErr("getxattr", p, errors.Unwrap(err))
}

// Xattr flags (setxattr's).
const (
	XattrCreate  = 1 // fail with EEXIST if it exists
	XattrReplace = 2 // fail with ENODATA if it does not
)

// Setxattr sets extended attribute name of p to value.
func (c *Client) Setxattr(ctx context.Context, p, name string, value []byte, flags uint32) error {
	ino, _, err := c.walk(ctx, p, true)
	if err != nil {
		return pathErr("setxattr", p, err)
	}
	return pathErr("setxattr", p, errors.Unwrap(c.Inodes().Setxattr(ctx, ino, name, value, flags)))
}

// Listxattr returns the names of p's extended attributes.
func (c *Client) Listxattr(ctx context.Context, p string) ([]string, error) {
	ino, _, err := c.walk(ctx, p, true)
	if err != nil {
		return nil, pathErr("listxattr", p, err)
	}
	names, err := c.Inodes().Listxattr(ctx, ino)
	return names, pathErr("listxattr", p, errors.Unwrap(err))
}

// Removexattr removes extended attribute name of p.
func (c *Client) Removexattr(ctx context.Context, p, name string) error {
	ino, _, err := c.walk(ctx, p, true)
	if err != nil {
		return pathErr("removexattr", p, err)
	}
	return pathErr("removexattr", p, errors.Unwrap(c.Inodes().Removexattr(ctx, ino, name)))
}

package mdcache

import (
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// opCreate makes a file (create, with open), a device, FIFO or socket
// (mknod), a directory (mkdir) or a symlink. The inode number comes from
// the rank's inode table, taken in batches (Config.InoBatch); the
// client's CreatedIno is not used (the engine delegates no ranges yet).
func (c *Cache) opCreate(r *request) (*txn, error) {
	steps, last, err := c.parentOf(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	dir := steps[len(steps)-1].ci
	if dir == nil || !dir.in.IsDir() {
		return nil, syscall.ENOTDIR
	}
	if last.d != nil {
		if r.req.Op == wire.MetaCreate && r.req.OpFlags&syscall.O_EXCL == 0 {
			return c.openExisting(r, append(steps, last), last.ci)
		}
		return nil, syscall.EEXIST
	}
	if dir.in.Nlink == 0 {
		return nil, syscall.ENOENT // a removed directory still open
	}
	if err := access(r.cr, dir.in, permW|permX); err != nil {
		return nil, err
	}
	mode, err := newMode(r.req)
	if err != nil {
		return nil, err
	}
	if err := c.quotaCheck(dir, 0, 1); err != nil {
		return nil, err
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	ino, err := c.allocIno(t)
	if err != nil {
		return nil, err
	}
	now := c.now()
	uid, gid, mode := newOwner(r.cr, dir.in, mode)
	in := &mdtypes.Inode{Ino: ino, Version: 1, Mode: mode, UID: uid, GID: gid, Nlink: 1,
		Atime: now, Mtime: now, Ctime: now, Btime: now}
	switch mode & mdtypes.ModeType {
	case mdtypes.ModeRegular:
		l := c.inheritLayout(dir)
		in.Layout = &l
	case mdtypes.ModeDir:
		in.Nlink = 2
	case mdtypes.ModeSymlink:
		in.Symlink = r.req.Target
		in.Size = uint64(len(r.req.Target))
	case mdtypes.ModeChar, mdtypes.ModeBlock:
		in.Rdev = r.req.Rdev
	}
	t.setDentry(last.frag, &mdtypes.Dentry{Name: last.name, Inode: in})
	if in.IsDir() {
		t.newFrag(ino)
		dir.in.Nlink++
	}
	dir.in.Mtime, dir.in.Ctime = now, now
	t.dirtyInode(dir)
	c.addRStat(t, dir, 0, 1-boolInt(in.IsDir()), boolInt(in.IsDir()))
	c.backtraces[ino] = struct{}{}
	r.rep.CreatedIno = uint64(ino)
	last.d = last.frag.dentries[last.name]
	last.ci = c.inodes[ino]
	trace := append(steps, last)
	if r.req.Op == wire.MetaCreate {
		c.openCaps(r, last.ci, r.req.OpFlags)
	}
	r.rep.Trace = c.trace(r, trace)
	c.leaseStep(r, trace, r.rep.Trace)
	return t, nil
}

// newMode is the mode of what r creates, or its errno.
func newMode(req *wire.ClientRequest) (uint32, error) {
	perm := req.Mode & mdtypes.ModePerm
	switch req.Op {
	case wire.MetaCreate:
		return mdtypes.ModeRegular | perm, nil
	case wire.MetaMkdir:
		return mdtypes.ModeDir | perm&0o7777, nil
	case wire.MetaSymlink:
		switch {
		case req.Target == "":
			return 0, syscall.ENOENT
		case len(req.Target) > mdtypes.MaxSymlinkLen:
			return 0, syscall.ENAMETOOLONG
		}
		return mdtypes.ModeSymlink | 0o777, nil
	}
	// mknod
	switch typ := req.Mode & mdtypes.ModeType; typ {
	case 0:
		return mdtypes.ModeRegular | perm, nil
	case mdtypes.ModeRegular, mdtypes.ModeFIFO, mdtypes.ModeSocket, mdtypes.ModeChar, mdtypes.ModeBlock:
		return typ | perm, nil
	case mdtypes.ModeDir:
		return 0, syscall.EPERM
	}
	return 0, syscall.EINVAL
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// allocIno takes an inode number from the engine's batch, taking a new
// batch from the inode table (journaled in t) when it is empty.
func (c *Cache) allocIno(t *txn) (mdtypes.Ino, error) {
	if len(c.inoPool) == 0 {
		rg, err := c.inotable.Alloc(c.cfg.InoBatch)
		if err != nil {
			return 0, syscall.ENOSPC
		}
		t.ev.InoAlloc = append(t.ev.InoAlloc, rg)
		c.inoPool = append(c.inoPool, rg)
	}
	p := &c.inoPool[0]
	ino := p.Start
	p.Start++
	p.Len--
	if p.Len == 0 {
		c.inoPool = c.inoPool[1:]
	}
	return ino, nil
}

// inheritLayout is the layout a new file in dir gets: the nearest
// directory layout up the tree, else the file system's default.
func (c *Cache) inheritLayout(dir *cinode) layout.Layout {
	for ci, n := dir, 0; ci != nil && n < 4096; n++ {
		if ci.in.Layout != nil {
			return *ci.in.Layout
		}
		if mdtypes.IsBase(ci.in.Ino) {
			break
		}
		ci = c.inodes[ci.parent.dir]
	}
	return layout.Default(c.cfg.DataPool)
}

// opOpen opens an existing file: permission for the access mode, EISDIR
// for writing a directory, O_TRUNC as a change, and the cap (caps.go).
func (c *Cache) opOpen(r *request) (*txn, error) {
	steps, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	return c.openExisting(r, steps, ci)
}

func (c *Cache) openExisting(r *request, steps []step, ci *cinode) (*txn, error) {
	fl := r.req.OpFlags
	var want uint32
	switch fl & syscall.O_ACCMODE {
	case syscall.O_RDONLY:
		want = permR
	case syscall.O_WRONLY:
		want = permW
	default:
		want = permR | permW
	}
	if fl&syscall.O_TRUNC != 0 {
		want |= permW
	}
	if ci.in.IsDir() && (want&permW != 0 || r.req.Op == wire.MetaCreate) {
		return nil, syscall.EISDIR // open(2): O_CREAT or writing on a directory
	}
	// A create that found the file asked for its access mode only, not
	// for the permission to create: the file's own bits decide.
	if err := access(r.cr, ci.in, want); err != nil {
		return nil, err
	}
	var t *txn
	if fl&syscall.O_TRUNC != 0 && ci.in.IsRegular() && ci.in.Size > 0 {
		if err := c.setattrNeedsLocks(r, ci, locker.FieldSize|locker.FieldMtime); err != nil {
			return nil, err
		}
		t = c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
		now := c.now()
		c.truncate(t, ci, 0)
		ci.in.Mtime, ci.in.Ctime = now, now
		if !r.cr.root() && r.cr.uid != ci.in.UID {
			ci.in.Mode = killSuid(ci.in.Mode)
		}
		t.dirtyInode(ci)
	}
	c.openCaps(r, ci, fl)
	r.rep.Trace = c.trace(r, steps)
	return t, nil
}

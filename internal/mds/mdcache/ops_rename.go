package mdcache

import (
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
)

// Rename flags, as renameat2(2)'s.
const (
	renameNoReplace = 1
	renameExchange  = 2
)

// renameFlagCheck is renameat2's first checks, made before a rename
// onto the same file is found to be a no-op: the flags, and what
// RENAME_NOREPLACE and RENAME_EXCHANGE need of the destination.
func renameFlagCheck(flags uint32, dstExists bool) error {
	switch {
	case flags&^(renameNoReplace|renameExchange) != 0, flags == renameNoReplace|renameExchange:
		return syscall.EINVAL
	case flags&renameExchange != 0 && !dstExists:
		return syscall.ENOENT
	case flags&renameNoReplace != 0 && dstExists:
		return syscall.EEXIST
	}
	return nil
}

// renameCheck is rename's pure validation (POSIX rename and Linux's
// renameat2): what the source and the destination (nil if absent) are
// allows, before permissions and the subtree check. dstEmpty says a
// destination directory has no entries.
func renameCheck(flags uint32, src, dst *mdtypes.Inode, dstEmpty bool) error {
	switch {
	case flags&^(renameNoReplace|renameExchange) != 0, flags == renameNoReplace|renameExchange:
		return syscall.EINVAL
	case flags&renameExchange != 0 && dst == nil:
		return syscall.ENOENT
	case dst == nil:
		return nil
	case flags&renameNoReplace != 0:
		return syscall.EEXIST
	case flags&renameExchange != 0:
		return nil
	case src.IsDir() && !dst.IsDir():
		return syscall.ENOTDIR
	case !src.IsDir() && dst.IsDir():
		return syscall.EISDIR
	case dst.IsDir() && !dstEmpty:
		return syscall.ENOTEMPTY
	}
	return nil
}

// opRename renames Path2 to Path.
func (c *Cache) opRename(r *request) (*txn, error) {
	osteps, olast, err := c.parentOf(r, r.req.Path2)
	if err != nil {
		return nil, err
	}
	nsteps, nlast, err := c.parentOf(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	odir, ndir := osteps[len(osteps)-1].ci, nsteps[len(nsteps)-1].ci
	if odir == nil || ndir == nil || !odir.in.IsDir() || !ndir.in.IsDir() {
		return nil, syscall.ENOTDIR
	}
	if olast.d == nil {
		return nil, syscall.ENOENT
	}
	src := olast.ci
	if err := renameFlagCheck(r.req.OpFlags, nlast.d != nil); err != nil {
		return nil, err
	}
	if nlast.d == olast.d || (nlast.ci != nil && nlast.ci.in.Ino == src.in.Ino) {
		// The same dentry, or two links to one file: POSIX says
		// succeed and do nothing.
		return nil, nil
	}
	var dst *mdtypes.Inode
	dstEmpty := true
	if nlast.d != nil {
		dst = nlast.ci.in
		if dst.IsDir() && r.req.OpFlags&renameExchange == 0 {
			if err := c.checkEmpty(r, nlast.ci); err == syscall.ENOTEMPTY {
				dstEmpty = false
			} else if err != nil {
				return nil, err
			}
		}
	}
	if err := renameCheck(r.req.OpFlags, src.in, dst, dstEmpty); err != nil {
		return nil, err
	}
	if err := mayDelete(r.cr, odir.in, src.in); err != nil {
		return nil, err
	}
	if dst != nil {
		if err := mayDelete(r.cr, ndir.in, dst); err != nil {
			return nil, err
		}
	} else if err := access(r.cr, ndir.in, permW|permX); err != nil {
		return nil, err
	}
	moved := odir.in.Ino != ndir.in.Ino
	if moved && src.in.IsDir() {
		if err := access(r.cr, src.in, permW); err != nil {
			return nil, err // to rewrite its ".."
		}
		if err := c.notBelow(r, ndir, src.in.Ino); err != nil {
			return nil, err
		}
	}
	if moved && dst != nil && dst.IsDir() && r.req.OpFlags&renameExchange != 0 {
		if err := access(r.cr, dst, permW); err != nil {
			return nil, err
		}
		if err := c.notBelow(r, odir, dst.Ino); err != nil {
			return nil, err
		}
	}
	if moved && src.in.IsDir() && dst == nil && ndir.in.Nlink >= maxLinks {
		return nil, syscall.EMLINK
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	now := c.now()
	sd := olast.d
	if r.req.OpFlags&renameExchange != 0 {
		dd := nlast.d
		t.setDentry(nlast.frag, renamed(sd, nlast.name))
		t.setDentry(olast.frag, renamed(dd, olast.name))
		c.moveAccounting(t, odir, ndir, src)
		c.moveAccounting(t, ndir, odir, nlast.ci)
		nlast.ci.in.Ctime = now
		nlast.ci.in.Version++
		c.backtraces[dst.Ino] = struct{}{}
	} else {
		if nlast.d != nil {
			if err := c.removeName(r, t, ndir, nlast.frag, nlast.name, now); err != nil {
				return nil, err
			}
		}
		t.removeDentry(olast.frag, olast.name)
		t.setDentry(nlast.frag, renamed(sd, nlast.name))
		c.moveAccounting(t, odir, ndir, src)
	}
	src.in.Ctime = now
	src.in.Version++
	if sd.Inode == nil {
		t.dirtyInode(src) // a hard link renamed: the inode's ctime
	}
	c.backtraces[src.in.Ino] = struct{}{}
	for _, d := range []*cinode{odir, ndir} {
		d.in.Mtime, d.in.Ctime = now, now
		t.dirtyInode(d)
		if !moved {
			break
		}
	}
	nlast.d, nlast.ci = nlast.frag.dentries[nlast.name], src
	r.rep.Trace = c.trace(r, append(nsteps, nlast))
	return t, nil
}

// renamed is d under a new name.
func renamed(d *mdtypes.Dentry, name string) *mdtypes.Dentry {
	return &mdtypes.Dentry{Name: name, Inode: d.Inode, RemoteIno: d.RemoteIno, RemoteType: d.RemoteType}
}

// moveAccounting moves what ci counts (a subdirectory's link, its
// recursive statistics) from directory from to directory to.
func (c *Cache) moveAccounting(t *txn, from, to, ci *cinode) {
	if from.in.Ino == to.in.Ino {
		return
	}
	bytes, files, dirs := int64(ci.in.Size), int64(1), int64(0)
	if ci.in.IsDir() {
		from.in.Nlink--
		to.in.Nlink++
		bytes, files, dirs = int64(ci.in.RStat.Bytes), int64(ci.in.RStat.Files), int64(ci.in.RStat.Subdirs)+1
	}
	c.addRStat(t, from, -bytes, -files, -dirs)
	c.addRStat(t, to, bytes, files, dirs)
}

// notBelow returns EINVAL if directory dir is ino or lies beneath it
// (a directory renamed into its own subtree), walking dir's ancestors
// (loading those not cached).
func (c *Cache) notBelow(r *request, dir *cinode, ino mdtypes.Ino) error {
	for ci, n := dir, 0; n < 1<<16; n++ {
		if ci.in.Ino == ino {
			return syscall.EINVAL
		}
		if mdtypes.IsBase(ci.in.Ino) {
			return nil
		}
		p, err := c.inodeRetry(r, ci.parent.dir)
		if err != nil {
			return err
		}
		ci = p
	}
	return syscall.ELOOP
}

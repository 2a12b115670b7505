package mdcache

import (
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
)

// maxLinks bounds a file's hard links (EMLINK), as ext4's.
const maxLinks = 65000

// opLink makes Path a hard link to Path2's file: a remote dentry naming
// the inode, whose primary dentry stays where it is (docs/NAMESPACE.md:
// remote dentries and backtraces).
func (c *Cache) opLink(r *request) (*txn, error) {
	_, src, err := c.target(r, r.req.Path2)
	if err != nil {
		return nil, err
	}
	steps, last, err := c.parentOf(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	dir := steps[len(steps)-1].ci
	switch {
	case dir == nil || !dir.in.IsDir():
		return nil, syscall.ENOTDIR
	case last.d != nil:
		return nil, syscall.EEXIST
	case src.in.IsDir():
		return nil, syscall.EPERM
	case src.in.Nlink >= maxLinks:
		return nil, syscall.EMLINK
	case src.in.Nlink == 0:
		return nil, syscall.ENOENT // an unlinked file still open (linkat of an O_TMPFILE aside)
	case dir.in.Nlink == 0:
		return nil, syscall.ENOENT
	}
	if err := access(r.cr, dir.in, permW|permX); err != nil {
		return nil, err
	}
	if err := c.quotaCheck(dir, src.in.Size, 1); err != nil {
		return nil, err
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	now := c.now()
	t.setDentry(last.frag, &mdtypes.Dentry{Name: last.name, RemoteIno: src.in.Ino, RemoteType: mdtypes.DType(src.in.Mode)})
	src.in.Nlink++
	src.in.Ctime = now
	t.dirtyInode(src)
	dir.in.Mtime, dir.in.Ctime = now, now
	t.dirtyInode(dir)
	c.addRStat(t, dir, int64(src.in.Size), 1, 0)
	last.d, last.ci = last.frag.dentries[last.name], src
	r.rep.Trace = c.trace(r, append(steps, last))
	return t, nil
}

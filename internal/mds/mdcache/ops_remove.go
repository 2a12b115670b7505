package mdcache

import (
	"fmt"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// opUnlink removes a name (unlink) or an empty directory (rmdir).
func (c *Cache) opUnlink(r *request) (*txn, error) {
	steps, last, err := c.parentOf(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	dir := steps[len(steps)-1].ci
	if dir == nil || !dir.in.IsDir() {
		return nil, syscall.ENOTDIR
	}
	if last.d == nil {
		return nil, syscall.ENOENT
	}
	victim := last.ci
	rmdir := r.req.Op == wire.MetaRmdir
	switch {
	case rmdir && !victim.in.IsDir():
		return nil, syscall.ENOTDIR
	case !rmdir && victim.in.IsDir():
		return nil, syscall.EISDIR
	}
	if err := mayDelete(r.cr, dir.in, victim.in); err != nil {
		return nil, err
	}
	if rmdir {
		if err := c.checkEmpty(r, victim); err != nil {
			return nil, err
		}
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	now := c.now()
	if err := c.removeName(r, t, dir, last.frag, last.name, now); err != nil {
		return nil, err
	}
	dir.in.Mtime, dir.in.Ctime = now, now
	t.dirtyInode(dir)
	// The trace ends with the removed inode, its link count lowered, so a
	// client that holds it open (fstat after unlink) sees nlink change.
	r.rep.Trace = c.trace(r, append(steps, step{name: last.name, ci: victim}))
	return t, nil
}

// checkEmpty returns ENOTEMPTY unless directory ci has no entries
// (loading its fragments first).
func (c *Cache) checkEmpty(r *request, ci *cinode) error {
	for _, fr := range ci.in.Leaves() {
		k := fragKey{ci.in.Ino, fr}
		f := c.frags[k]
		if f == nil {
			if _, err := c.loadFrag(r.ctx, k); err != nil {
				return err
			}
			return errRetry
		}
		if len(f.dentries) > 0 {
			return syscall.ENOTEMPTY
		}
	}
	return nil
}

// strayFrag is the stray directory fragment an unlinked inode goes to,
// loaded with the rank at Open.
func (c *Cache) strayFrag(ino mdtypes.Ino) (*cfrag, error) {
	k := fragKey{mdtypes.StrayIno(c.cfg.Rank, int(uint64(ino)%mdtypes.NumStrays)), mdtypes.RootFrag}
	f := c.frags[k]
	if f == nil {
		return nil, fmt.Errorf("mdcache: stray directory %v not loaded", k.dir)
	}
	return f, nil
}

func strayName(ino mdtypes.Ino) string { return fmt.Sprintf("%x", uint64(ino)) }

// removeName takes name out of dir's fragment f, dropping a link of the
// inode it names: a remote dentry drops the link count of its target; a
// primary dentry of a directory removes the directory (it was checked
// empty); a primary dentry of anything else moves its inode to a stray
// directory, where it waits for its remaining links' dentries, its
// last cap, and then its purge (purge.go).
func (c *Cache) removeName(r *request, t *txn, dir *cinode, f *cfrag, name string, now mdtypes.Time) error {
	d := f.dentries[name]
	var ci *cinode
	if d.Inode != nil {
		ci = c.inodes[d.Inode.Ino]
	} else {
		var err error
		if ci, err = c.dentryInode(r, d); err != nil {
			return err
		}
	}
	in := ci.in
	if in.IsDir() {
		if d.Inode == nil {
			return syscall.EIO // no hard links to directories
		}
		for _, fr := range in.Leaves() {
			if df := c.frags[fragKey{in.Ino, fr}]; df != nil {
				t.removeFrag(df)
			}
		}
		t.removeDentry(f, name)
		dir.in.Nlink--
		in.Nlink = 0
		delete(c.inodes, in.Ino)
		c.addRStat(t, dir, 0, 0, -1)
		return nil
	}
	var stray *cfrag
	if d.Inode != nil {
		var err error
		if stray, err = c.strayFrag(in.Ino); err != nil {
			return err
		}
	}
	t.removeDentry(f, name)
	if in.Nlink > 0 {
		in.Nlink--
	}
	in.Ctime = now
	in.Version++
	if stray != nil {
		t.setDentry(stray, &mdtypes.Dentry{Name: strayName(in.Ino), Inode: in})
		c.backtraces[in.Ino] = struct{}{}
		t.touch(stray.key, strayName(in.Ino))
	} else {
		t.dirtyInode(ci)
	}
	c.addRStat(t, dir, -int64(in.Size), -1, 0)
	t.after = append(t.after, func() { c.maybePurge(in.Ino) })
	return nil
}

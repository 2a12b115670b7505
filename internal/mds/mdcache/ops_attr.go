package mdcache

import (
	"strings"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Setxattr flags, as setxattr(2)'s.
const (
	xattrCreate  = 1
	xattrReplace = 2
)

// opSetattr changes the attributes Mask names, each with POSIX's
// permission rules, and ctime (unless set explicitly).
func (c *Cache) opSetattr(r *request) (*txn, error) {
	steps, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	q, in, m := r.req, ci.in, r.req.Mask
	newMode := in.Mode
	if m&wire.AttrMode != 0 {
		perm, err := chmodCheck(r.cr, in, q.Mode)
		if err != nil {
			return nil, err
		}
		newMode = in.Mode&mdtypes.ModeType | perm
	}
	setUID, setGID := m&wire.AttrUID != 0, m&wire.AttrGID != 0
	if setUID || setGID {
		if err := chownCheck(r.cr, in, setUID, q.SetUID, setGID, q.SetGID); err != nil {
			return nil, err
		}
	}
	if m&wire.AttrSize != 0 {
		switch {
		case in.IsDir():
			return nil, syscall.EISDIR
		case !in.IsRegular():
			return nil, syscall.EINVAL
		case !c.writing(r.client, in.Ino):
			if err := access(r.cr, in, permW); err != nil {
				return nil, err
			}
		}
		if q.Size > in.Size {
			if err := c.quotaCheck(c.parentDir(ci), q.Size-in.Size, 0); err != nil {
				return nil, err
			}
		}
	}
	// A time set to now comes as AttrAtime|AttrAtimeNow (the kernel's and
	// fsclient's utimensat(UTIME_NOW)): only a time given explicitly
	// needs ownership; now needs write permission.
	explicit := m&wire.AttrAtime != 0 && m&wire.AttrAtimeNow == 0 || m&wire.AttrMtime != 0 && m&wire.AttrMtimeNow == 0
	if explicit {
		if err := timesCheck(r.cr, in, true); err != nil {
			return nil, err
		}
	} else if m&(wire.AttrAtimeNow|wire.AttrMtimeNow) != 0 {
		if err := timesCheck(r.cr, in, false); err != nil {
			return nil, err
		}
	}
	if m&(wire.AttrCtime|wire.AttrBtime) != 0 && !r.cr.root() && r.cr.uid != in.UID {
		return nil, syscall.EPERM
	}
	for _, tm := range []wire.FSTime{q.Atime, q.Mtime, q.Ctime, q.Btime} {
		if tm.Nsec >= 1e9 {
			return nil, syscall.EINVAL
		}
	}
	if err := c.setattrNeedsLocks(r, ci, setattrFields(m)); err != nil {
		return nil, err
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	now := c.now()
	in.Mode = newMode
	if setUID {
		in.UID = q.SetUID
	}
	if setGID {
		in.GID = q.SetGID
	}
	if (setUID || setGID) && !in.IsDir() {
		in.Mode = killSuid(in.Mode)
	}
	if m&wire.AttrKillSguid != 0 {
		in.Mode = killSuid(in.Mode)
	}
	if m&wire.AttrSize != 0 {
		if !r.cr.root() && r.cr.uid != in.UID {
			in.Mode = killSuid(in.Mode)
		}
		c.truncate(t, ci, q.Size)
		in.Mtime = now
	}
	switch {
	case m&wire.AttrAtime != 0:
		in.Atime = mdTime(q.Atime)
	case m&wire.AttrAtimeNow != 0:
		in.Atime = now
	}
	switch {
	case m&wire.AttrMtime != 0:
		in.Mtime = mdTime(q.Mtime)
	case m&wire.AttrMtimeNow != 0:
		in.Mtime = now
	}
	if m&wire.AttrBtime != 0 {
		in.Btime = mdTime(q.Btime)
	}
	in.Ctime = now
	if m&wire.AttrCtime != 0 {
		in.Ctime = mdTime(q.Ctime)
	}
	t.dirtyInode(ci)
	r.rep.Trace = c.trace(r, steps)
	return t, nil
}

// writing reports whether client has ino open for writing (its cap
// wants Fw): then a truncate is through its descriptor, which POSIX
// checks at open, not now (ftruncate).
func (c *Cache) writing(client ClientID, ino mdtypes.Ino) bool {
	cp, ok := c.lk.Cap(locker.Ino(ino), locker.ClientID(client))
	return ok && cp.Wanted&locker.FileWrite != 0
}

// parentDir is the directory holding ci's primary dentry (nil for a
// base inode or one whose directory is not cached).
func (c *Cache) parentDir(ci *cinode) *cinode {
	if mdtypes.IsBase(ci.in.Ino) {
		return nil
	}
	return c.inodes[ci.parent.dir]
}

// addRStat adds to the recursive statistics of dir and its cached
// ancestors, journaling each.
func (c *Cache) addRStat(t *txn, dir *cinode, bytes, files, dirs int64) {
	if bytes == 0 && files == 0 && dirs == 0 {
		return
	}
	for ci, n := dir, 0; ci != nil && n < 1<<16; n++ {
		rs := &ci.in.RStat
		rs.Bytes = uint64(max(int64(rs.Bytes)+bytes, 0))
		rs.Files = uint64(max(int64(rs.Files)+files, 0))
		rs.Subdirs = uint64(max(int64(rs.Subdirs)+dirs, 0))
		t.dirtyQuiet(ci)
		ci = c.parentDir(ci)
	}
}

// quotaCheck returns EDQUOT if adding bytes and files beneath dir
// passes a quota of dir or of a cached ancestor.
func (c *Cache) quotaCheck(dir *cinode, bytes, files uint64) error {
	for ci, n := dir, 0; ci != nil && n < 1<<16; n++ {
		q, rs := ci.in.Quota, ci.in.RStat
		if q.MaxFiles > 0 && files > 0 && rs.Files+rs.Subdirs+files > q.MaxFiles {
			return syscall.EDQUOT
		}
		if q.MaxBytes > 0 && bytes > 0 && rs.Bytes+bytes > q.MaxBytes {
			return syscall.EDQUOT
		}
		ci = c.parentDir(ci)
	}
	return nil
}

// opSetxattr sets an extended attribute (XATTR_CREATE: EEXIST if set;
// XATTR_REPLACE: ENODATA if not); ceph.* names are virtual (vxattr.go).
func (c *Cache) opSetxattr(r *request) (*txn, error) {
	steps, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	name, val, fl := r.req.Name, r.req.Value, r.req.OpFlags
	switch {
	case name == "":
		return nil, syscall.EINVAL
	case len(name) > mdtypes.MaxXattrName:
		return nil, syscall.ERANGE
	case len(val) > mdtypes.MaxXattrValue:
		return nil, syscall.E2BIG
	case fl&^(xattrCreate|xattrReplace) != 0:
		return nil, syscall.EINVAL
	}
	if strings.HasPrefix(name, "ceph.") {
		return c.setVxattr(r, steps, ci, name, string(val))
	}
	if err := xattrWriteAccess(r.cr, ci.in, name); err != nil {
		return nil, err
	}
	_, exists := ci.in.Xattrs[name]
	switch {
	case fl&xattrCreate != 0 && exists:
		return nil, syscall.EEXIST
	case fl&xattrReplace != 0 && !exists:
		return nil, syscall.ENODATA
	}
	total := len(name) + len(val)
	for k, v := range ci.in.Xattrs {
		if k != name {
			total += len(k) + len(v)
		}
	}
	if total > mdtypes.MaxXattrsTotal {
		return nil, syscall.ENOSPC
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	if ci.in.Xattrs == nil {
		ci.in.Xattrs = map[string][]byte{}
	}
	ci.in.Xattrs[name] = append([]byte{}, val...)
	ci.in.Ctime = c.now()
	t.dirtyInode(ci)
	r.rep.Trace = c.trace(r, steps)
	return t, nil
}

// opRmxattr removes an extended attribute (ENODATA if not set).
func (c *Cache) opRmxattr(r *request) (*txn, error) {
	steps, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	name := r.req.Name
	if strings.HasPrefix(name, "ceph.") {
		return c.rmVxattr(r, steps, ci, name)
	}
	if err := xattrWriteAccess(r.cr, ci.in, name); err != nil {
		return nil, err
	}
	if _, ok := ci.in.Xattrs[name]; !ok {
		return nil, syscall.ENODATA
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	delete(ci.in.Xattrs, name)
	if len(ci.in.Xattrs) == 0 {
		ci.in.Xattrs = nil
	}
	ci.in.Ctime = c.now()
	t.dirtyInode(ci)
	r.rep.Trace = c.trace(r, steps)
	return t, nil
}

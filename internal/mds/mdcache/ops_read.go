package mdcache

import (
	"slices"
	"strings"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// opLookup answers the trace to Path's target; a missing last name is
// answered with a negative last step (Ino 0), not an error, so the
// client may cache the absence.
func (c *Cache) opLookup(r *request) error {
	steps, err := c.walk(r, r.req.Path)
	if err != nil {
		return err
	}
	r.rep.Trace = c.trace(r, steps)
	c.leaseStep(r, steps, r.rep.Trace)
	if steps[len(steps)-1].ci == nil {
		r.rep.Result = -int32(syscall.ENOENT)
	}
	return nil
}

// opLookupIno finds an inode by number (an NFS-style handle).
func (c *Cache) opLookupIno(r *request) error {
	ci, err := c.inodeRetry(r, mdtypes.Ino(r.req.Path.Ino))
	if err != nil {
		return err
	}
	r.rep.Trace = []wire.TraceStep{{Inode: c.stat(r.client, ci.in)}}
	return nil
}

// opLookupParent answers the parent directory of directory Path.Ino
// (an NFS-style handle's ".."); the root is its own parent.
func (c *Cache) opLookupParent(r *request) error {
	ci, err := c.inodeRetry(r, mdtypes.Ino(r.req.Path.Ino))
	if err != nil {
		return err
	}
	if !ci.in.IsDir() {
		return syscall.ENOTDIR
	}
	parent := ci
	if !mdtypes.IsBase(ci.in.Ino) {
		if parent, err = c.inodeRetry(r, ci.parent.dir); err != nil {
			return err
		}
	}
	r.rep.Trace = []wire.TraceStep{{Inode: c.stat(r.client, parent.in)}, {Name: ci.name, Inode: c.stat(r.client, ci.in)}}
	return nil
}

// opGetattr answers the target's attributes. The size and mtime of a
// file another client writes are collected from the writer first
// (caps.go); a statlite that does not need them exactly answers at once
// and flags them approximate.
func (c *Cache) opGetattr(r *request) error {
	steps, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return err
	}
	if waiting, err := c.statNeedsWriters(r, ci); err != nil || waiting {
		return err
	}
	r.rep.Trace = c.trace(r, steps)
	if ci.in.IsDir() {
		c.leaseStep(r, steps[len(steps)-1:], r.rep.Trace[len(r.rep.Trace)-1:])
	}
	return nil
}

// opReaddir lists a directory fragment in name order from after
// StartName, at most MaxEntries entries (and about MaxBytes bytes), with
// each entry's attributes when Plus.
func (c *Cache) opReaddir(r *request) error {
	steps, ci, err := c.target(r, r.req.Path)
	ci0 := ci
	if err != nil {
		return err
	}
	if !ci.in.IsDir() {
		return syscall.ENOTDIR
	}
	if err := access(r.cr, ci.in, permR); err != nil {
		return err
	}
	leaves := ci.in.Leaves()
	fr := mdtypes.Frag(r.req.Frag)
	idx := slices.Index(leaves, fr)
	if idx < 0 {
		idx, fr = 0, leaves[0]
	}
	f := c.frags[fragKey{ci.in.Ino, fr}]
	if f == nil {
		if _, err := c.loadFrag(r.ctx, fragKey{ci.in.Ino, fr}); err != nil {
			return err
		}
		return errRetry
	}
	// Load the targets of remote dentries first, so the listing is made
	// in one holding of the lock.
	for _, d := range f.dentries {
		if d.Inode == nil && r.req.Plus {
			if _, err := c.inodeRetry(r, d.RemoteIno); err != nil {
				return err
			}
		}
	}
	max := int(r.req.MaxEntries)
	if max <= 0 {
		max = 1024
	}
	names := f.names()
	start, _ := slices.BinarySearch(names, r.req.StartName)
	if start < len(names) && names[start] == r.req.StartName {
		start++
	}
	if r.req.StartName == "" {
		start = 0
	}
	bytes := 0
	ls := wire.DirListing{Frag: uint32(fr)}
	i := start
	for ; i < len(names) && len(ls.Entries) < max; i++ {
		d := f.dentries[names[i]]
		e := wire.DirEntry{Name: d.Name, Offset: uint64(mdtypes.NameHash(d.Name))}
		if r.req.Plus {
			ci := c.inodes[d.Ino()]
			if ci != nil {
				e.Inode = c.stat(r.client, ci.in)
				// The entry is as good as a lookup's: leased.
				e.LeaseMs, _ = c.grantLease(r, leaseKey{ci0.in.Ino, d.Name})
				if ci.in.IsDir() && e.LeaseMs > 0 {
					c.grantLease(r, leaseKey{ci.in.Ino, ""})
				}
			}
		} else if d.Inode != nil {
			e.Inode = wire.InodeStat{Ino: uint64(d.Inode.Ino), Mode: d.Inode.Mode & mdtypes.ModeType}
		} else {
			e.Inode = wire.InodeStat{Ino: uint64(d.RemoteIno), Mode: mdtypes.ModeOfDType(d.RemoteType)}
		}
		bytes += 32 + len(d.Name)
		if r.req.Plus {
			bytes += 160
		}
		ls.Entries = append(ls.Entries, e)
		if r.req.MaxBytes > 0 && bytes >= int(r.req.MaxBytes) {
			i++
			break
		}
	}
	ls.End = i >= len(names)
	ls.Complete = ls.End && start == 0 && len(leaves) == 1
	r.rep.Dir = ls
	r.rep.Trace = c.trace(r, steps)
	return nil
}

// opGetxattr answers one extended attribute (ENODATA if unset); the
// virtual ceph.* ones are computed (vxattr.go).
func (c *Cache) opGetxattr(r *request) error {
	_, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return err
	}
	if v, ok, err := c.getVxattr(ci.in, r.req.Name); ok || err != nil {
		r.rep.Data = v
		return err
	}
	if err := xattrReadAccess(r.cr, ci.in, r.req.Name); err != nil {
		return err
	}
	v, ok := ci.in.Xattrs[r.req.Name]
	if !ok {
		return syscall.ENODATA
	}
	r.rep.Data = slices.Clone(v)
	return nil
}

// opListxattr answers the names of the user's extended attributes, each
// ending in NUL, in order.
func (c *Cache) opListxattr(r *request) error {
	_, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, k := range slices.Sorted(mapsKeys(ci.in.Xattrs)) {
		b.WriteString(k)
		b.WriteByte(0)
	}
	r.rep.Data = []byte(b.String())
	return nil
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// xattrReadAccess: user.* attributes need read permission (trusted.*
// and security.* are root's, system.* the kernel's and passed through).
func xattrReadAccess(cr cred, in *mdtypes.Inode, name string) error {
	switch {
	case strings.HasPrefix(name, "user."):
		return access(cr, in, permR)
	case strings.HasPrefix(name, "trusted."):
		if !cr.root() {
			return syscall.ENODATA
		}
	}
	return nil
}

// xattrWriteAccess: user.* attributes need write permission and a
// regular file or directory (Linux: EPERM on others); trusted.* root;
// POSIX ACLs are not supported.
func xattrWriteAccess(cr cred, in *mdtypes.Inode, name string) error {
	switch {
	case wire.IsPosixACL(name):
		return syscall.EOPNOTSUPP
	case strings.HasPrefix(name, "user."):
		if !in.IsRegular() && !in.IsDir() {
			return syscall.EPERM
		}
		if in.IsDir() && in.Mode&syscall.S_ISVTX != 0 && !cr.root() && cr.uid != in.UID {
			return syscall.EPERM
		}
		return access(cr, in, permW)
	case strings.HasPrefix(name, "trusted."):
		if !cr.root() {
			return syscall.EPERM
		}
	case strings.HasPrefix(name, "security."), strings.HasPrefix(name, "system."):
		if !cr.root() && cr.uid != in.UID {
			return syscall.EPERM
		}
	default:
		return syscall.EOPNOTSUPP
	}
	return nil
}

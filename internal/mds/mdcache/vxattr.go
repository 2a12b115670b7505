package mdcache

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Virtual extended attributes, as CephFS names them: quotas
// (ceph.quota.max_bytes, ceph.quota.max_files) on directories, the
// recursive statistics (ceph.dir.rbytes, rfiles, rsubdirs, entries),
// and layouts (ceph.dir.layout, ceph.file.layout, and their fields).

// getVxattr answers a ceph.* attribute; ok false for other names.
func (c *Cache) getVxattr(in *mdtypes.Inode, name string) (v []byte, ok bool, err error) {
	if !strings.HasPrefix(name, "ceph.") {
		return nil, false, nil
	}
	num := func(n uint64) ([]byte, bool, error) { return []byte(strconv.FormatUint(n, 10)), true, nil }
	dirOnly := strings.HasPrefix(name, "ceph.dir.") || strings.HasPrefix(name, "ceph.quota")
	if dirOnly && !in.IsDir() {
		return nil, true, syscall.ENODATA
	}
	switch name {
	case "ceph.quota.max_bytes":
		return num(in.Quota.MaxBytes)
	case "ceph.quota.max_files":
		return num(in.Quota.MaxFiles)
	case "ceph.quota":
		return []byte(fmt.Sprintf("max_bytes=%d max_files=%d", in.Quota.MaxBytes, in.Quota.MaxFiles)), true, nil
	case "ceph.dir.rbytes":
		return num(in.RStat.Bytes)
	case "ceph.dir.rfiles":
		return num(in.RStat.Files)
	case "ceph.dir.rsubdirs":
		return num(in.RStat.Subdirs)
	case "ceph.dir.rentries":
		return num(in.RStat.Files + in.RStat.Subdirs)
	case "ceph.dir.layout":
		if in.Layout == nil {
			return nil, true, syscall.ENODATA
		}
		return []byte(layoutString(*in.Layout)), true, nil
	case "ceph.file.layout":
		if !in.IsRegular() {
			return nil, true, syscall.ENODATA
		}
		return []byte(layoutString(*in.Layout)), true, nil
	}
	return nil, true, syscall.ENODATA
}

func layoutString(l layout.Layout) string {
	s := fmt.Sprintf("stripe_unit=%d stripe_count=%d object_size=%d pool=%d", l.StripeUnit, l.StripeCount, l.ObjectSize, l.Pool)
	if l.Namespace != "" {
		s += " pool_namespace=" + l.Namespace
	}
	return s
}

// parseLayout reads "key=value ..." over base (ceph.*.layout).
func parseLayout(base layout.Layout, s string) (layout.Layout, error) {
	l := base
	for _, kv := range strings.Fields(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return l, syscall.EINVAL
		}
		if k == "pool_namespace" {
			l.Namespace = v
			continue
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return l, syscall.EINVAL
		}
		switch k {
		case "stripe_unit":
			l.StripeUnit = uint32(n)
		case "stripe_count":
			l.StripeCount = uint32(n)
		case "object_size":
			l.ObjectSize = uint32(n)
		case "pool":
			l.Pool = int64(n)
		default:
			return l, syscall.EINVAL
		}
	}
	if l.Validate() != nil {
		return l, syscall.EINVAL
	}
	return l, nil
}

// setVxattr sets a quota or a layout: the owner or root, on a
// directory (quota, dir layout) or on an empty regular file (file
// layout).
func (c *Cache) setVxattr(r *request, steps []step, ci *cinode, name, val string) (*txn, error) {
	in := ci.in
	if !r.cr.root() && r.cr.uid != in.UID {
		return nil, syscall.EPERM
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	switch name {
	case "ceph.quota.max_bytes", "ceph.quota.max_files":
		if !in.IsDir() {
			return nil, syscall.EINVAL
		}
		n, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return nil, syscall.EINVAL
		}
		if name == "ceph.quota.max_bytes" {
			in.Quota.MaxBytes = n
		} else {
			in.Quota.MaxFiles = n
		}
	case "ceph.dir.layout":
		if !in.IsDir() {
			return nil, syscall.EINVAL
		}
		l, err := parseLayout(c.inheritLayout(ci), val)
		if err != nil {
			return nil, err
		}
		in.Layout = &l
	case "ceph.file.layout":
		if !in.IsRegular() {
			return nil, syscall.EINVAL
		}
		if in.Size > 0 {
			return nil, syscall.ENOTEMPTY
		}
		l, err := parseLayout(*in.Layout, val)
		if err != nil {
			return nil, err
		}
		in.Layout = &l
	default:
		return nil, syscall.EINVAL
	}
	in.Ctime = c.now()
	t.dirtyInode(ci)
	r.rep.Trace = c.trace(r, steps)
	return t, nil
}

// rmVxattr removes a directory's layout (its files inherit again) or
// clears a quota.
func (c *Cache) rmVxattr(r *request, steps []step, ci *cinode, name string) (*txn, error) {
	in := ci.in
	if !r.cr.root() && r.cr.uid != in.UID {
		return nil, syscall.EPERM
	}
	t := c.newTxn(r.client, r.req.Tid, r.req.OldestTid, r.req.Op)
	switch {
	case name == "ceph.dir.layout" && in.IsDir() && in.Layout != nil && in.Ino != mdtypes.RootIno:
		in.Layout = nil
	case name == "ceph.quota.max_bytes" && in.IsDir():
		in.Quota.MaxBytes = 0
	case name == "ceph.quota.max_files" && in.IsDir():
		in.Quota.MaxFiles = 0
	default:
		return nil, syscall.ENODATA
	}
	in.Ctime = c.now()
	t.dirtyInode(ci)
	r.rep.Trace = c.trace(r, steps)
	return t, nil
}

// opSetLayout sets a file's layout (before it has data) or the layout a
// directory's new files inherit, from the request's wire layout.
func (c *Cache) opSetLayout(r *request) (*txn, error) {
	steps, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return nil, err
	}
	w := r.req.Layout
	l := layout.Layout{ObjectSize: w.ObjectSize, StripeUnit: w.StripeUnit, StripeCount: w.StripeCount,
		Pool: w.Pool, Namespace: w.PoolNamespace}
	if l.Validate() != nil {
		return nil, syscall.EINVAL
	}
	name := "ceph.file.layout"
	if r.req.Op == wire.MetaSetDirLayout {
		name = "ceph.dir.layout"
	}
	return c.setVxattr(r, steps, ci, name, layoutString(l))
}

package mdstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Mkfs creates a new file system's first objects: the root directory
// (inode 0x1, with the default layout on dataPool, and its empty
// fragment) and the store's rank's objects (CreateRank). It is
// idempotent: each object is created whole in one operation, or found
// there, so Mkfs run again after a failure completes what is missing and
// changes nothing else.
func (s *Store) Mkfs(ctx context.Context, dataPool int64, now mdtypes.Time) error {
	l := layout.Default(dataPool)
	root := &mdtypes.Inode{Ino: mdtypes.RootIno, Version: 1, Mode: mdtypes.ModeDir | 0o755, Nlink: 2,
		Atime: now, Mtime: now, Ctime: now, Btime: now, Layout: &l}
	if err := s.createDir(ctx, root, nil, nil); err != nil {
		return err
	}
	return s.CreateRank(ctx, now)
}

// CreateRank creates the store's rank's objects, idempotently: its mdsdir
// (~mdsN, inode 0x100+rank) holding the stray directories stray0..stray9
// (inodes 0x600+rank*10+i), their empty fragments, and the inode table
// with all of the rank's numbers free.
func (s *Store) CreateRank(ctx context.Context, now mdtypes.Time) error {
	rank := s.cfg.Rank
	mdsdir := &mdtypes.Inode{Ino: mdtypes.MDSDirIno(rank), Version: 1, Mode: mdtypes.ModeDir | 0o755,
		Nlink: 2 + mdtypes.NumStrays, Atime: now, Mtime: now, Ctime: now, Btime: now}
	var strays []*mdtypes.Dentry
	for i := range mdtypes.NumStrays {
		in := &mdtypes.Inode{Ino: mdtypes.StrayIno(rank, i), Version: 1, Mode: mdtypes.ModeDir | 0o700,
			Nlink: 2, Atime: now, Mtime: now, Ctime: now, Btime: now}
		strays = append(strays, &mdtypes.Dentry{Name: mdtypes.StrayName(i), Version: 1, Inode: in})
	}
	// The strays first: once the mdsdir names them, they exist.
	for _, d := range strays {
		bt := &mdtypes.Backtrace{Ino: d.Inode.Ino, Pool: s.cfg.MetaPool,
			Ancestors: []mdtypes.Ancestor{{DirIno: mdsdir.Ino, Name: d.Name, Version: 1}}}
		if err := s.createDir(ctx, d.Inode, nil, bt); err != nil {
			return err
		}
	}
	if err := s.createDir(ctx, mdsdir, strays, nil); err != nil {
		return err
	}
	obj := mdtypes.InoTableObject(rank)
	t := mdtypes.NewInoTable(rank)
	w := rados.NewWriteOp()
	w.Create(true)
	w.WriteFull(t.Marshal())
	w.SetXattr(GuardXattr, s.stamp(t.Version).bytes())
	if err := createOnce(ctx, s.meta, obj, w); err != nil {
		return err
	}
	s.log.Info("rank's objects created", "mdsdir", mdsdir.Ino)
	return nil
}

// createDir creates a directory's first fragment with dentries (and its
// backtrace, if any) and, for a base inode, the inode's own object.
func (s *Store) createDir(ctx context.Context, in *mdtypes.Inode, dentries []*mdtypes.Dentry, bt *mdtypes.Backtrace) error {
	if err := in.Validate(); err != nil {
		return fmt.Errorf("mdstore: mkfs: %w", err)
	}
	hdr := mdtypes.FragHeader{Version: 1}
	set := map[string][]byte{}
	for _, d := range dentries {
		if d.Inode != nil && d.Inode.IsDir() {
			hdr.Subdirs++
		} else {
			hdr.Files++
		}
		set[mdtypes.DentryKey(d.Name)] = d.MarshalValue()
	}
	obj := mdtypes.DirfragObject(in.Ino, mdtypes.RootFrag)
	w := rados.NewWriteOp()
	w.Create(true)
	w.SetOmapHeader(hdr.Marshal())
	if len(set) > 0 {
		w.SetOmap(set)
	}
	if bt != nil {
		w.SetXattr(mdtypes.BacktraceXattr, bt.Marshal())
	}
	w.SetXattr(GuardXattr, s.stamp(hdr.Version).bytes())
	if err := createOnce(ctx, s.meta, obj, w); err != nil {
		return err
	}
	if !mdtypes.IsBase(in.Ino) {
		return nil
	}
	obj = mdtypes.BaseInodeObject(in.Ino)
	w = rados.NewWriteOp()
	w.Create(true)
	w.WriteFull(mdtypes.MarshalInode(in))
	w.SetXattr(GuardXattr, s.stamp(in.Version).bytes())
	return createOnce(ctx, s.meta, obj, w)
}

// createOnce runs w, which starts with an exclusive create; an object
// already there was created whole before.
func createOnce(ctx context.Context, io *rados.IOContext, obj string, w *rados.WriteOp) error {
	err := io.OperateWrite(ctx, obj, w)
	if err == nil || errors.Is(err, rados.ErrExists) {
		return nil
	}
	return fmt.Errorf("mdstore: mkfs: create %q: %w", obj, err)
}

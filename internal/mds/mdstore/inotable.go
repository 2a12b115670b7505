package mdstore

import (
	"context"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
)

// LoadInoTable reads the store's rank's inode table.
func (s *Store) LoadInoTable(ctx context.Context) (*mdtypes.InoTable, error) {
	obj := mdtypes.InoTableObject(s.cfg.Rank)
	b, err := s.meta.Read(ctx, obj, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("mdstore: read %q: %w", obj, err)
	}
	t, err := mdtypes.UnmarshalInoTable(b)
	if err != nil {
		return nil, s.damage(obj, "", "data", err)
	}
	if t.Rank != s.cfg.Rank {
		return nil, s.damage(obj, "", "data", fmt.Errorf("the table of rank %d", t.Rank))
	}
	return t, nil
}

// SaveInoTable writes t, guarded by the stamp of t.Version: an older
// table (or one of an earlier incarnation) never overwrites a newer one.
// The MDS journals each allocation before it hands the numbers out, so a
// table saved lazily is brought up to date by replay.
func (s *Store) SaveInoTable(ctx context.Context, t *mdtypes.InoTable) error {
	obj := mdtypes.InoTableObject(s.cfg.Rank)
	if t.Rank != s.cfg.Rank {
		return fmt.Errorf("mdstore: save rank %d's inode table as rank %d", t.Rank, s.cfg.Rank)
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("mdstore: save %q: %w", obj, err)
	}
	st := s.stamp(t.Version)
	w := rados.NewWriteOp()
	guard(w, st)
	w.WriteFull(t.Marshal())
	if err := s.meta.OperateWrite(ctx, obj, w); err != nil {
		return s.staleError(ctx, s.meta, obj, st, err)
	}
	return nil
}

// ReadBaseInode reads a base inode (the root's, an mdsdir's) from its own
// object.
func (s *Store) ReadBaseInode(ctx context.Context, ino mdtypes.Ino) (*mdtypes.Inode, error) {
	obj := mdtypes.BaseInodeObject(ino)
	b, err := s.meta.Read(ctx, obj, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("mdstore: read %q: %w", obj, err)
	}
	in, err := mdtypes.UnmarshalInode(b)
	if err != nil {
		return nil, s.damage(obj, "", "data", err)
	}
	if in.Ino != ino {
		return nil, s.damage(obj, "", "data", fmt.Errorf("holds inode %v", in.Ino))
	}
	return in, nil
}

// WriteBaseInode writes a base inode, guarded by the stamp of its
// version.
func (s *Store) WriteBaseInode(ctx context.Context, in *mdtypes.Inode) error {
	obj := mdtypes.BaseInodeObject(in.Ino)
	if !mdtypes.IsBase(in.Ino) {
		return fmt.Errorf("mdstore: inode %v is not a base inode; it lives in its dentry", in.Ino)
	}
	if err := in.Validate(); err != nil {
		return fmt.Errorf("mdstore: write %q: %w", obj, err)
	}
	st := s.stamp(in.Version)
	w := rados.NewWriteOp()
	guard(w, st)
	w.WriteFull(mdtypes.MarshalInode(in))
	if err := s.meta.OperateWrite(ctx, obj, w); err != nil {
		return s.staleError(ctx, s.meta, obj, st, err)
	}
	return nil
}

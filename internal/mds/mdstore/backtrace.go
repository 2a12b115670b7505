package mdstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
)

// backtraceObject is where ino's backtrace lives: a directory's on its
// object "<ino>.00000000" in the metadata pool, a file's on its first data
// object in its data pool (the same name, as Ceph).
func (s *Store) backtraceObject(bt *mdtypes.Backtrace, dir bool) (*rados.IOContext, string, error) {
	if dir {
		return s.meta, mdtypes.FirstDataObject(bt.Ino), nil
	}
	io, err := s.dataPool(bt.Pool)
	return io, mdtypes.FirstDataObject(bt.Ino), err
}

// SetBacktrace writes bt as the "parent" xattr of its inode's first
// object (dir says whether the inode is a directory: then the object is
// in the metadata pool, otherwise in data pool bt.Pool), creating the
// object if it does not exist, as Ceph does when a file is created with no
// data yet. The MDS writes backtraces lazily, after creates and renames
// are journaled; a stale one only costs LookupIno a failed walk. When a
// file's layout moved it to another pool, bt.OldPools names the pools
// whose copies should be updated too (the MDS calls SetBacktrace for
// each).
func (s *Store) SetBacktrace(ctx context.Context, bt *mdtypes.Backtrace, dir bool) error {
	if err := bt.Validate(); err != nil {
		return fmt.Errorf("mdstore: set backtrace: %w", err)
	}
	io, obj, err := s.backtraceObject(bt, dir)
	if err != nil {
		return err
	}
	w := rados.NewWriteOp()
	w.Create(false)
	w.SetXattr(mdtypes.BacktraceXattr, bt.Marshal())
	if err := io.OperateWrite(ctx, obj, w); err != nil {
		return fmt.Errorf("mdstore: set backtrace on %q (pool %d): %w", obj, io.PoolID(), err)
	}
	return nil
}

// ReadBacktrace reads ino's backtrace from its first object in pool (the
// metadata pool for a directory).
func (s *Store) ReadBacktrace(ctx context.Context, ino mdtypes.Ino, pool int64) (*mdtypes.Backtrace, error) {
	io, err := s.dataPool(pool)
	if err != nil {
		return nil, err
	}
	obj := mdtypes.FirstDataObject(ino)
	b, err := io.GetXattr(ctx, obj, mdtypes.BacktraceXattr)
	if err != nil {
		return nil, fmt.Errorf("mdstore: backtrace of %v on %q (pool %d): %w", ino, obj, pool, err)
	}
	bt, err := mdtypes.UnmarshalBacktrace(b)
	if err != nil {
		return nil, &DamageError{Object: obj, Pool: pool, What: "xattr " + mdtypes.BacktraceXattr, Err: err}
	}
	if bt.Ino != ino {
		return nil, &DamageError{Object: obj, Pool: pool, What: "xattr " + mdtypes.BacktraceXattr, Err: fmt.Errorf("names inode %v", bt.Ino)}
	}
	return bt, nil
}

// Location is where LookupIno found an inode's primary dentry.
type Location struct {
	// Path is the names from the root (or from the rank's mdsdir, for a
	// stray) to the dentry.
	Path []string
	// Base is the base directory the path starts at (the root or an
	// mdsdir).
	Base mdtypes.Ino
	// Dir and Frag are the directory fragment holding the dentry.
	Dir  mdtypes.Ino
	Frag mdtypes.Frag
	// Dentry is the primary dentry, with the inode.
	Dentry *mdtypes.Dentry
}

// LookupIno finds inode ino's primary dentry by its backtrace, as a
// CephFS MDS opens an inode by number for a hard link's remote dentry, an
// NFS file handle or fsck. It reads the backtrace from the first of the
// pools that has it (the metadata pool first, where directories keep
// theirs, then the data pools given) and walks it from its base directory
// down, reading each step's dentry from the fragment that holds the name
// and checking that it names the next inode. If a step does not hold (an
// ancestor was renamed after the backtrace was written: renames do not
// rewrite the backtraces of everything below), it finds the inode's
// parent by the parent's own backtrace instead, recursively, and reads
// the inode's dentry there. If that fails too (the inode itself moved or
// was unlinked since its backtrace was written), the error is
// ErrStaleBacktrace. An inode with no backtrace anywhere is
// rados.ErrNotFound.
func (s *Store) LookupIno(ctx context.Context, ino mdtypes.Ino, dataPools ...int64) (*Location, error) {
	return s.lookupIno(ctx, ino, dataPools, maxLookupDepth)
}

// maxLookupDepth bounds how many ancestors LookupIno resolves by number.
const maxLookupDepth = 4096

func (s *Store) lookupIno(ctx context.Context, ino mdtypes.Ino, dataPools []int64, depth int) (*Location, error) {
	var bt *mdtypes.Backtrace
	var errs []error
	for _, pool := range append([]int64{s.cfg.MetaPool}, dataPools...) {
		b, err := s.ReadBacktrace(ctx, ino, pool)
		if err == nil {
			bt = b
			break
		}
		if !errors.Is(err, rados.ErrNotFound) && !errors.Is(err, rados.ErrNoAttr) {
			return nil, err
		}
		errs = append(errs, err)
	}
	if bt == nil {
		return nil, fmt.Errorf("mdstore: lookup %v: no backtrace: %w", ino, errors.Join(errs...))
	}
	loc, err := s.walkBacktrace(ctx, bt)
	if !errors.Is(err, ErrStaleBacktrace) || depth == 0 || len(bt.Ancestors) == 0 {
		return loc, err
	}
	// Find the parent by number, then the inode's dentry in it.
	a := bt.Ancestors[0]
	var dir *mdtypes.Inode
	loc = &Location{Base: a.DirIno}
	if mdtypes.IsBase(a.DirIno) {
		if dir, err = s.ReadBaseInode(ctx, a.DirIno); err != nil {
			return nil, err
		}
	} else {
		ploc, perr := s.lookupIno(ctx, a.DirIno, nil, depth-1)
		if perr != nil {
			return nil, fmt.Errorf("%w; and its parent %v: %w", err, a.DirIno, perr)
		}
		if !ploc.Dentry.Inode.IsDir() {
			return nil, fmt.Errorf("%w: %v's parent %v is not a directory", ErrStaleBacktrace, ino, a.DirIno)
		}
		dir, loc.Base, loc.Path = ploc.Dentry.Inode, ploc.Base, ploc.Path
	}
	f, ferr := mdtypes.FragOf(dir.Leaves(), a.Name)
	if ferr != nil {
		return nil, ferr
	}
	d, derr := s.ReadDentry(ctx, a.DirIno, f, a.Name)
	switch {
	case errors.Is(derr, rados.ErrNotFound):
		return nil, fmt.Errorf("%w: %v: %q is gone from %v: %w", ErrStaleBacktrace, ino, a.Name, a.DirIno, derr)
	case derr != nil:
		return nil, derr
	case d.IsRemote() || d.Inode.Ino != ino:
		return nil, fmt.Errorf("%w: %v: %q in %v names %v", ErrStaleBacktrace, ino, a.Name, a.DirIno, d.Ino())
	}
	loc.Path = append(slices.Clone(loc.Path), a.Name)
	loc.Dir, loc.Frag, loc.Dentry = a.DirIno, f, d
	return loc, nil
}

// walkBacktrace follows bt from its base directory down to the inode.
func (s *Store) walkBacktrace(ctx context.Context, bt *mdtypes.Backtrace) (*Location, error) {
	if len(bt.Ancestors) == 0 {
		return nil, fmt.Errorf("%w: backtrace of %v has no steps", ErrStaleBacktrace, bt.Ino)
	}
	top := bt.Ancestors[len(bt.Ancestors)-1].DirIno
	if !mdtypes.IsBase(top) {
		return nil, fmt.Errorf("%w: backtrace of %v starts at %v, not at the root or an mdsdir", ErrStaleBacktrace, bt.Ino, top)
	}
	dir, err := s.ReadBaseInode(ctx, top)
	if err != nil {
		return nil, err
	}
	loc := &Location{Base: top}
	for i := len(bt.Ancestors) - 1; i >= 0; i-- {
		a := bt.Ancestors[i]
		want := bt.Ino
		if i > 0 {
			want = bt.Ancestors[i-1].DirIno
		}
		if dir.Ino != a.DirIno {
			return nil, fmt.Errorf("%w: %v: step %q is in %v, but the walk reached %v", ErrStaleBacktrace, bt.Ino, a.Name, a.DirIno, dir.Ino)
		}
		f, err := mdtypes.FragOf(dir.Leaves(), a.Name)
		if err != nil {
			return nil, err
		}
		d, err := s.ReadDentry(ctx, a.DirIno, f, a.Name)
		if errors.Is(err, rados.ErrNotFound) {
			return nil, fmt.Errorf("%w: %v: %q is gone from %v: %w", ErrStaleBacktrace, bt.Ino, a.Name, a.DirIno, err)
		}
		if err != nil {
			return nil, err
		}
		if d.IsRemote() || d.Inode.Ino != want || (i > 0 && !d.Inode.IsDir()) {
			return nil, fmt.Errorf("%w: %v: %q in %v names %v, not %v", ErrStaleBacktrace, bt.Ino, a.Name, a.DirIno, d.Ino(), want)
		}
		loc.Path = append(loc.Path, a.Name)
		loc.Dir, loc.Frag, loc.Dentry = a.DirIno, f, d
		dir = d.Inode
	}
	return loc, nil
}

// ReadDentry reads one dentry from fragment f of dir (rados.ErrNotFound
// if the fragment or the name does not exist).
func (s *Store) ReadDentry(ctx context.Context, dir mdtypes.Ino, f mdtypes.Frag, name string) (*mdtypes.Dentry, error) {
	obj := mdtypes.DirfragObject(dir, f)
	key := mdtypes.DentryKey(name)
	vals, err := s.meta.GetOmapValuesByKeys(ctx, obj, key)
	if err != nil {
		return nil, fmt.Errorf("mdstore: read %q key %q: %w", obj, key, err)
	}
	v, ok := vals[key]
	if !ok {
		return nil, fmt.Errorf("mdstore: %q has no key %q: %w", obj, key, rados.ErrNotFound)
	}
	d, err := mdtypes.UnmarshalDentry(name, v)
	if err != nil {
		return nil, s.damage(obj, key, "", err)
	}
	return d, nil
}

// Backtrace builds the backtrace of the inode at the end of path, given
// the inode numbers of the directories along it (dirs[0] the base, dirs[i]
// holding path[i]), and the dentries' versions.
func Backtrace(ino mdtypes.Ino, pool int64, dirs []mdtypes.Ino, path []string, versions []uint64) (*mdtypes.Backtrace, error) {
	if len(dirs) != len(path) || len(versions) != len(path) {
		return nil, fmt.Errorf("mdstore: backtrace of %v: %d directories, %d names, %d versions", ino, len(dirs), len(path), len(versions))
	}
	bt := &mdtypes.Backtrace{Ino: ino, Pool: pool}
	for i := range path {
		bt.Ancestors = append(bt.Ancestors, mdtypes.Ancestor{DirIno: dirs[i], Name: path[i], Version: versions[i]})
	}
	slices.Reverse(bt.Ancestors)
	return bt, bt.Validate()
}

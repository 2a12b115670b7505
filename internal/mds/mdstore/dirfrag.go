package mdstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
)

// Fragment is a directory fragment as read from its object.
type Fragment struct {
	Dir  mdtypes.Ino
	Frag mdtypes.Frag
	// Header is the fragment's header (its version and statistics).
	Header mdtypes.FragHeader
	// Stamp is the stamp of the object's last write.
	Stamp Stamp
	// Dentries are the fragment's dentries in key order, primary ones
	// with their inodes.
	Dentries []*mdtypes.Dentry
}

// readRetries bounds how often ReadFrag starts again because the object
// changed between its batches.
const readRetries = 8

// maxReadBatch is the most omap entries an OSD returns to one request.
const maxReadBatch = 1 << 16

// ReadFrag reads fragment f of directory dir: its header and every dentry
// with its inode. The first request brings the header, the stamp and the
// first ReadBatch dentries; each further request brings the next batch
// and checks that the stamp has not changed, so the dentries returned
// are one version of the fragment. If it changed, the read starts again
// with batches of the most an OSD returns (65,536), so that a fragment
// of fewer entries is read in one request, which no write can split. A
// missing object is rados.ErrNotFound; contents that do not decode are a
// *DamageError naming the object and key.
func (s *Store) ReadFrag(ctx context.Context, dir mdtypes.Ino, f mdtypes.Frag) (*Fragment, error) {
	obj := mdtypes.DirfragObject(dir, f)
	batch := s.cfg.ReadBatch
	for range readRetries {
		fr, err := s.readFragOnce(ctx, obj, dir, f, batch)
		if errors.Is(err, rados.ErrCompareFailed) {
			s.log.Debug("fragment changed while being read; reading again in one request", "object", obj)
			batch = maxReadBatch
			continue
		}
		return fr, err
	}
	return nil, fmt.Errorf("mdstore: read %q: it changed during %d reads in a row: %w", obj, readRetries, rados.ErrTimedOut)
}

func (s *Store) readFragOnce(ctx context.Context, obj string, dir mdtypes.Ino, f mdtypes.Frag, batch int) (*Fragment, error) {
	r := rados.NewReadOp()
	attrs := r.GetXattrs()
	hdr := r.GetOmapHeader()
	vals := r.GetOmapVals("", "", uint64(batch))
	if err := s.meta.OperateRead(ctx, obj, r); err != nil {
		if errors.Is(err, rados.ErrNotFound) {
			// Damage if a directory names it (Store.MissingFrag), an
			// object removed by a later change during replay.
			return nil, &DamageError{Object: obj, Pool: s.cfg.MetaPool, What: "fragment object", Err: err}
		}
		return nil, fmt.Errorf("mdstore: read %q: %w", obj, err)
	}
	fr := &Fragment{Dir: dir, Frag: f}
	rawStamp := attrs.Attrs[GuardXattr]
	st, err := parseStamp(rawStamp)
	if err != nil {
		return nil, s.damage(obj, "", "xattr "+GuardXattr, err)
	}
	fr.Stamp = st
	if fr.Header, err = mdtypes.UnmarshalFragHeader(hdr.Data); err != nil {
		return nil, s.damage(obj, "", "omap header", err)
	}
	if err := s.addDentries(fr, obj, vals.Pairs); err != nil {
		return nil, err
	}
	for more := vals.More && len(vals.Pairs) > 0; more; {
		after := vals.Pairs[len(vals.Pairs)-1].Key
		r := rados.NewReadOp()
		r.CmpXattr(GuardXattr, rados.CmpEq, rawStamp)
		vals = r.GetOmapVals(after, "", uint64(batch))
		if err := s.meta.OperateRead(ctx, obj, r); err != nil {
			return nil, fmt.Errorf("mdstore: read %q after %q: %w", obj, after, err)
		}
		if err := s.addDentries(fr, obj, vals.Pairs); err != nil {
			return nil, err
		}
		more = vals.More && len(vals.Pairs) > 0
	}
	return fr, nil
}

func (s *Store) addDentries(fr *Fragment, obj string, kvs []rados.KeyValue) error {
	for _, kv := range kvs {
		name, err := mdtypes.NameOfKey(kv.Key)
		if err != nil {
			return s.damage(obj, kv.Key, "", err)
		}
		d, err := mdtypes.UnmarshalDentry(name, kv.Value)
		if err != nil {
			return s.damage(obj, kv.Key, "", err)
		}
		if ino := d.Ino(); ino == 0 || ino == fr.Dir || mdtypes.IsBase(ino) {
			return s.damage(obj, kv.Key, "", fmt.Errorf("inode number %v cannot be an entry of directory %v", ino, fr.Dir))
		}
		fr.Dentries = append(fr.Dentries, d)
	}
	return nil
}

func (s *Store) damage(obj, key, what string, err error) error {
	e := &DamageError{Object: obj, Pool: s.cfg.MetaPool, Key: key, What: what, Err: err}
	s.recordDamage(e)
	return e
}

// FragUpdate is a write-back of one fragment: the dentries to set (new
// or changed), the names to remove, and the new header.
type FragUpdate struct {
	Dir  mdtypes.Ino
	Frag mdtypes.Frag
	// Header is the fragment's new header; Header.Version is the version
	// the write-back brings the fragment to, which must not be below the
	// stored one (of this incarnation).
	Header mdtypes.FragHeader
	Set    []*mdtypes.Dentry
	Remove []string
	// Create makes the object if it does not exist (a new directory, a
	// new fragment); otherwise a missing object is rados.ErrNotFound. The
	// object is created with an exclusive create (the OSD's read of the
	// stamp within the operation would not see a create earlier in it);
	// if it exists, the guarded write follows.
	Create bool
}

// WriteBack applies u in one atomic operation on the fragment's object:
// the dentries set and removed, the header and the stamp, guarded so that
// it is refused (ErrStale) if the object holds a stamp above this MDS's
// (Stamp). Either all of it is applied or none.
//
// The guard refuses a stale MDS's write only once its successor has
// written the object; until then both could write it. Fencing closes
// that gap: when the monitors give a rank to a standby they blocklist the
// old holder's address in the OSD map, and OSDs refuse its ops from that
// epoch on; the new MDS waits for that epoch before it replays
// (docs/NAMESPACE.md).
func (s *Store) WriteBack(ctx context.Context, u FragUpdate) error {
	obj := mdtypes.DirfragObject(u.Dir, u.Frag)
	st := s.stamp(u.Header.Version)
	build := func(create bool) (*rados.WriteOp, error) {
		w := rados.NewWriteOp()
		if create {
			// A new object has no stamp to compare: it is created
			// exclusively, and one already there (made by an earlier
			// try, or by anyone) takes the guarded path.
			w.Create(true)
			w.SetXattr(GuardXattr, st.bytes())
		} else {
			guard(w, st)
		}
		if err := addDentryOps(w, obj, u); err != nil {
			return nil, err
		}
		w.SetOmapHeader(u.Header.Marshal())
		return w, nil
	}
	var err error
	if u.Create {
		w, berr := build(true)
		if berr != nil {
			return berr
		}
		err = s.meta.OperateWrite(ctx, obj, w)
		if !errors.Is(err, rados.ErrExists) {
			if err != nil {
				return fmt.Errorf("mdstore: create %q: %w", obj, err)
			}
			return nil
		}
	}
	w, err := build(false)
	if err != nil {
		return err
	}
	if err := s.meta.OperateWrite(ctx, obj, w); err != nil {
		return s.staleError(ctx, s.meta, obj, st, err)
	}
	return nil
}

// addDentryOps adds u's dentries to set and to remove to w.
func addDentryOps(w *rados.WriteOp, obj string, u FragUpdate) error {
	if len(u.Set) > 0 {
		set := make(map[string][]byte, len(u.Set))
		for _, d := range u.Set {
			if err := mdtypes.ValidateName(d.Name); err != nil {
				return fmt.Errorf("mdstore: write %q: %w", obj, err)
			}
			if d.Inode != nil {
				if err := d.Inode.Validate(); err != nil {
					return fmt.Errorf("mdstore: write %q: dentry %q: %w", obj, d.Name, err)
				}
			}
			set[mdtypes.DentryKey(d.Name)] = d.MarshalValue()
		}
		w.SetOmap(set)
	}
	if len(u.Remove) > 0 {
		keys := make([]string, len(u.Remove))
		for i, n := range u.Remove {
			keys[i] = mdtypes.DentryKey(n)
		}
		w.RmOmapKeys(keys)
	}
	return nil
}

// RemoveFrag deletes a fragment's object (an empty directory removed, a
// fragment merged), guarded as WriteBack with the stamp of version.
func (s *Store) RemoveFrag(ctx context.Context, dir mdtypes.Ino, f mdtypes.Frag, version uint64) error {
	obj := mdtypes.DirfragObject(dir, f)
	st := s.stamp(version)
	w := rados.NewWriteOp()
	w.CmpXattr(GuardXattr, rados.CmpLte, st.bytes())
	w.Remove()
	if err := s.meta.OperateWrite(ctx, obj, w); err != nil {
		return s.staleError(ctx, s.meta, obj, st, err)
	}
	return nil
}

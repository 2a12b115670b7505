package mdtypes

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Limits a decoder enforces (and Validate checks).
const (
	MaxNameLen     = 255      // a dentry's name, as NAME_MAX
	MaxSymlinkLen  = 4096     // a symlink's target, as PATH_MAX
	MaxXattrName   = 255      // an extended attribute's name, as XATTR_NAME_MAX
	MaxXattrValue  = 64 << 10 // an extended attribute's value, as XATTR_SIZE_MAX
	MaxXattrsTotal = 1 << 20  // all of one inode's extended attributes
	maxFrags       = 1 << 16  // leaves of a directory's fragment tree
)

// Quota limits a directory subtree (CephFS's ceph.quota.max_bytes and
// max_files); zero means no limit.
type Quota struct {
	MaxBytes uint64
	MaxFiles uint64
}

// RStat is a directory's recursive statistics: the bytes, files and
// subdirectories beneath it, which quotas are checked against.
type RStat struct {
	Bytes   uint64
	Files   uint64
	Subdirs uint64
}

// Inode is a file's metadata. A regular file's data lives in the data
// pool named by its layout, in objects named after its number.
type Inode struct {
	Ino Ino
	// Version is the MDS's version of the inode, raised by each change.
	Version uint64
	// Mode is the file type and permission bits.
	Mode  uint32
	UID   uint32
	GID   uint32
	Nlink uint32
	// Size is a regular file's length in bytes (a symlink's: the
	// target's length).
	Size uint64
	// Rdev is a device file's device number.
	Rdev                       uint64
	Atime, Mtime, Ctime, Btime Time
	// Symlink is a symbolic link's target.
	Symlink string
	// Layout is how a regular file's data is striped (required for
	// regular files); on a directory it is the layout new files in it
	// inherit, and nil means the parent's.
	Layout *layout.Layout
	// Xattrs are the user's extended attributes.
	Xattrs map[string][]byte
	// Quota limits a directory's subtree.
	Quota Quota
	// RStat is a directory's recursive statistics.
	RStat RStat
	// Frags are a directory's fragments (the leaves of its fragment
	// tree), in order; empty means one fragment, RootFrag.
	Frags []Frag
}

// IsDir, IsRegular and IsSymlink test the file type.
func (in *Inode) IsDir() bool     { return in.Mode&ModeType == ModeDir }
func (in *Inode) IsRegular() bool { return in.Mode&ModeType == ModeRegular }
func (in *Inode) IsSymlink() bool { return in.Mode&ModeType == ModeSymlink }

// Leaves returns the directory's fragments (RootFrag alone if none are
// recorded).
func (in *Inode) Leaves() []Frag {
	if len(in.Frags) == 0 {
		return []Frag{RootFrag}
	}
	return in.Frags
}

// Clone returns a deep copy.
func (in *Inode) Clone() *Inode {
	c := *in
	if in.Layout != nil {
		l := *in.Layout
		c.Layout = &l
	}
	if in.Xattrs != nil {
		c.Xattrs = make(map[string][]byte, len(in.Xattrs))
		for k, v := range in.Xattrs {
			c.Xattrs[k] = slices.Clone(v)
		}
	}
	c.Frags = slices.Clone(in.Frags)
	return &c
}

// Validate checks the rules a decoder enforces: a known file type, a
// symlink target only on symlinks, a valid layout on every regular file,
// bounded extended attributes and a well-formed fragment set.
func (in *Inode) Validate() error {
	t := in.Mode & ModeType
	switch {
	case in.Mode&^(ModeType|ModePerm) != 0:
		return fmt.Errorf("inode %v: mode %#o has unknown bits", in.Ino, in.Mode)
	case !validType(t):
		return fmt.Errorf("inode %v: mode %#o has no file type", in.Ino, in.Mode)
	case in.Symlink != "" && t != ModeSymlink:
		return fmt.Errorf("inode %v: a symlink target on a non-symlink", in.Ino)
	case len(in.Symlink) > MaxSymlinkLen:
		return fmt.Errorf("inode %v: symlink target of %d bytes", in.Ino, len(in.Symlink))
	case t == ModeRegular && in.Layout == nil:
		return fmt.Errorf("inode %v: regular file without a layout", in.Ino)
	case in.Layout != nil && t != ModeRegular && t != ModeDir:
		return fmt.Errorf("inode %v: a layout on a file of type %#o", in.Ino, t)
	case in.Atime.Nsec >= 1e9 || in.Mtime.Nsec >= 1e9 || in.Ctime.Nsec >= 1e9 || in.Btime.Nsec >= 1e9:
		return fmt.Errorf("inode %v: nanoseconds not below 1e9", in.Ino)
	case len(in.Frags) > 0 && t != ModeDir:
		return fmt.Errorf("inode %v: fragments on a non-directory", in.Ino)
	}
	if in.Layout != nil {
		if err := in.Layout.Validate(); err != nil {
			return fmt.Errorf("inode %v: %w", in.Ino, err)
		}
	}
	total := 0
	for k, v := range in.Xattrs {
		if k == "" || len(k) > MaxXattrName || len(v) > MaxXattrValue {
			return fmt.Errorf("inode %v: extended attribute %q: name or value too long", in.Ino, k)
		}
		total += len(k) + len(v)
	}
	if total > MaxXattrsTotal {
		return fmt.Errorf("inode %v: %d bytes of extended attributes, more than %d", in.Ino, total, MaxXattrsTotal)
	}
	if len(in.Frags) > 0 {
		if err := ValidateLeaves(in.Frags); err != nil {
			return fmt.Errorf("inode %v: %w", in.Ino, err)
		}
	}
	return nil
}

// Encode appends the inode (docs/FORMATS.md, "Inode"). It encodes
// whatever it is given; callers Validate what they build.
func (in *Inode) Encode(e *encoding.Encoder) {
	m := e.Begin(1, 1)
	e.Uint64(uint64(in.Ino))
	e.Uvarint(in.Version)
	e.Uint32(in.Mode)
	e.Uint32(in.UID)
	e.Uint32(in.GID)
	e.Uint32(in.Nlink)
	e.Uvarint(in.Size)
	e.Uvarint(in.Rdev)
	in.Atime.encode(e)
	in.Mtime.encode(e)
	in.Ctime.encode(e)
	in.Btime.encode(e)
	e.String(in.Symlink)
	e.Bool(in.Layout != nil)
	if in.Layout != nil {
		in.Layout.Encode(e)
	}
	e.Uvarint(uint64(len(in.Xattrs)))
	for _, k := range slices.Sorted(maps.Keys(in.Xattrs)) {
		e.String(k)
		e.Bytes(in.Xattrs[k])
	}
	e.Uvarint(in.Quota.MaxBytes)
	e.Uvarint(in.Quota.MaxFiles)
	e.Uvarint(in.RStat.Bytes)
	e.Uvarint(in.RStat.Files)
	e.Uvarint(in.RStat.Subdirs)
	e.Uvarint(uint64(len(in.Frags)))
	for _, f := range in.Frags {
		e.Uint32(uint32(f))
	}
	e.End(m)
}

// Decode reads an inode written by Encode and validates it; a value that
// fails Validate fails the decoder with encoding.ErrCorrupt.
func (in *Inode) Decode(d *encoding.Decoder) {
	*in = Inode{}
	d.Begin(1)
	in.Ino = Ino(d.Uint64())
	in.Version = d.Uvarint()
	in.Mode = d.Uint32()
	in.UID = d.Uint32()
	in.GID = d.Uint32()
	in.Nlink = d.Uint32()
	in.Size = d.Uvarint()
	in.Rdev = d.Uvarint()
	in.Atime.decode(d)
	in.Mtime.decode(d)
	in.Ctime.decode(d)
	in.Btime.decode(d)
	in.Symlink = d.String(MaxSymlinkLen)
	if d.Bool() {
		in.Layout = new(layout.Layout)
		in.Layout.Decode(d)
	}
	if n := d.Count(2); n > 0 {
		in.Xattrs = make(map[string][]byte, n)
		for range n {
			k := d.String(MaxXattrName)
			v := d.Bytes(MaxXattrValue)
			if v == nil {
				v = []byte{} // an attribute set to the empty value
			}
			if _, dup := in.Xattrs[k]; dup && d.Err() == nil {
				d.Fail(fmt.Errorf("%w: extended attribute %q twice", encoding.ErrCorrupt, k))
			}
			in.Xattrs[k] = v
		}
	}
	in.Quota.MaxBytes = d.Uvarint()
	in.Quota.MaxFiles = d.Uvarint()
	in.RStat.Bytes = d.Uvarint()
	in.RStat.Files = d.Uvarint()
	in.RStat.Subdirs = d.Uvarint()
	if n := d.Count(4); n > 0 {
		in.Frags = make([]Frag, n)
		for i := range in.Frags {
			in.Frags[i] = Frag(d.Uint32())
		}
	}
	d.End()
	if d.Err() != nil {
		return
	}
	if err := in.Validate(); err != nil {
		d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
	}
}

// MarshalInode encodes in alone (a base inode's object).
func MarshalInode(in *Inode) []byte {
	var e encoding.Encoder
	in.Encode(&e)
	return e.Data()
}

// UnmarshalInode decodes what MarshalInode wrote, refusing trailing bytes.
func UnmarshalInode(b []byte) (*Inode, error) {
	d := encoding.NewDecoder(b)
	in := new(Inode)
	in.Decode(d)
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return in, nil
}

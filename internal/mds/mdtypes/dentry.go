package mdtypes

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
)

// headSuffix ends the omap key of a dentry's live (head) version, as in
// CephFS; other suffixes are left for snapshots.
const headSuffix = "_head"

// DentryKey is the omap key of name's dentry in its fragment object.
func DentryKey(name string) string { return name + headSuffix }

// ErrBadKey is the class of omap keys that name no dentry.
var ErrBadKey = errors.New("mdtypes: not a dentry key")

// NameOfKey returns the name a DentryKey was made from.
func NameOfKey(key string) (string, error) {
	name, ok := strings.CutSuffix(key, headSuffix)
	if !ok {
		return "", fmt.Errorf("%w: %q has no %q suffix", ErrBadKey, key, headSuffix)
	}
	if err := ValidateName(name); err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	return name, nil
}

// ValidateName checks a dentry's name: 1 to 255 bytes, neither "." nor
// "..", without '/' or NUL.
func ValidateName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("mdtypes: invalid name %q", name)
	case len(name) > MaxNameLen:
		return fmt.Errorf("mdtypes: name of %d bytes, more than %d", len(name), MaxNameLen)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("mdtypes: name %q holds '/' or NUL", name)
	}
	return nil
}

// Dentry kinds, as CephFS marks them in the stored value.
const (
	// KindPrimary: the dentry holds its inode.
	KindPrimary byte = 'I'
	// KindRemote: the dentry names an inode whose primary dentry is
	// elsewhere (a hard link).
	KindRemote byte = 'L'
)

// Dentry is one name in a directory fragment. A primary dentry embeds its
// inode, so reading the fragment reads the inodes; a remote dentry (a hard
// link) holds the inode's number and type, and the inode is found
// through its backtrace.
type Dentry struct {
	Name string
	// Version is the MDS's version of the dentry.
	Version uint64
	// Inode is a primary dentry's inode (nil for a remote dentry).
	Inode *Inode
	// RemoteIno and RemoteType are a remote dentry's inode number and
	// its DType.
	RemoteIno  Ino
	RemoteType uint8
}

// IsRemote reports whether d is a hard link to an inode held elsewhere.
func (d *Dentry) IsRemote() bool { return d.Inode == nil }

// Ino is the inode the dentry names.
func (d *Dentry) Ino() Ino {
	if d.Inode != nil {
		return d.Inode.Ino
	}
	return d.RemoteIno
}

// EncodeValue encodes the dentry's omap value (the name is in the key):
// docs/FORMATS.md, "Directory fragment".
func (d *Dentry) EncodeValue(e *encoding.Encoder) {
	m := e.Begin(1, 1)
	e.Uvarint(d.Version)
	if d.Inode != nil {
		e.Uint8(KindPrimary)
		d.Inode.Encode(e)
	} else {
		e.Uint8(KindRemote)
		e.Uint64(uint64(d.RemoteIno))
		e.Uint8(d.RemoteType)
	}
	e.End(m)
}

// MarshalValue returns EncodeValue's bytes.
func (d *Dentry) MarshalValue() []byte {
	var e encoding.Encoder
	d.EncodeValue(&e)
	return e.Data()
}

// UnmarshalDentry decodes the omap value of name's dentry.
func UnmarshalDentry(name string, b []byte) (*Dentry, error) {
	d := encoding.NewDecoder(b)
	de := &Dentry{Name: name}
	d.Begin(1)
	de.Version = d.Uvarint()
	switch kind := d.Uint8(); kind {
	case KindPrimary:
		de.Inode = new(Inode)
		de.Inode.Decode(d)
	case KindRemote:
		de.RemoteIno = Ino(d.Uint64())
		de.RemoteType = d.Uint8()
		if d.Err() == nil && (!validType(ModeOfDType(de.RemoteType)) || de.RemoteType > 0xf) {
			d.Fail(fmt.Errorf("%w: remote dentry of type %d", encoding.ErrCorrupt, de.RemoteType))
		}
		if d.Err() == nil && de.RemoteIno == 0 {
			d.Fail(fmt.Errorf("%w: remote dentry to inode 0", encoding.ErrCorrupt))
		}
	default:
		if d.Err() == nil {
			d.Fail(fmt.Errorf("%w: dentry kind %#x", encoding.ErrCorrupt, kind))
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return de, nil
}

package mdtypes

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// BacktraceXattr is the extended attribute that holds an inode's
// backtrace: on a file's first data object, on a directory's first
// fragment object (Ceph's "parent").
const BacktraceXattr = "parent"

// maxAncestors bounds a backtrace's length on decode (a path of 4,096
// one-byte names, PATH_MAX, has fewer).
const maxAncestors = 4096

// Ancestor is one step of a backtrace: the inode was named Name in
// directory DirIno, as of the dentry's Version.
type Ancestor struct {
	DirIno  Ino
	Name    string
	Version uint64
}

// Backtrace is an inode's path to the root as (parent, name) pairs, the
// inode's own primary dentry first and a child of the root (or of a
// rank's mdsdir, for strays) last. It is written lazily, after renames,
// so it may be stale: a reader that follows it checks each step against
// the directory and, when a step no longer holds, learns only that the
// inode moved (Ceph's inode_backtrace_t).
type Backtrace struct {
	Ino       Ino
	Ancestors []Ancestor
	// Pool is the data pool of the object the backtrace is on; OldPools
	// are pools that may still hold a stale backtrace after a layout
	// change.
	Pool     int64
	OldPools []int64
}

// Validate checks that the backtrace names the inode and that every step
// has a valid name.
func (b *Backtrace) Validate() error {
	if b.Ino == 0 {
		return fmt.Errorf("backtrace of inode 0")
	}
	for i, a := range b.Ancestors {
		if a.DirIno == 0 {
			return fmt.Errorf("backtrace of %v: step %d in directory 0", b.Ino, i)
		}
		if err := ValidateName(a.Name); err != nil {
			return fmt.Errorf("backtrace of %v: step %d: %w", b.Ino, i, err)
		}
	}
	return nil
}

// Marshal encodes the backtrace (docs/FORMATS.md, "Backtrace").
func (b *Backtrace) Marshal() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uint64(uint64(b.Ino))
	e.Uvarint(uint64(len(b.Ancestors)))
	for _, a := range b.Ancestors {
		e.Uint64(uint64(a.DirIno))
		e.String(a.Name)
		e.Uvarint(a.Version)
	}
	e.Varint(b.Pool)
	e.Uvarint(uint64(len(b.OldPools)))
	for _, p := range b.OldPools {
		e.Varint(p)
	}
	e.End(m)
	return e.Data()
}

// UnmarshalBacktrace decodes and validates what Marshal wrote.
func UnmarshalBacktrace(raw []byte) (*Backtrace, error) {
	d := encoding.NewDecoder(raw)
	b := new(Backtrace)
	d.Begin(1)
	b.Ino = Ino(d.Uint64())
	if n := d.Count(10); n > maxAncestors {
		d.Fail(fmt.Errorf("%w: backtrace of %d steps", encoding.ErrCorrupt, n))
	} else if n > 0 {
		b.Ancestors = make([]Ancestor, n)
		for i := range b.Ancestors {
			a := &b.Ancestors[i]
			a.DirIno = Ino(d.Uint64())
			a.Name = d.String(MaxNameLen)
			a.Version = d.Uvarint()
		}
	}
	b.Pool = d.Varint()
	if n := d.Count(1); n > 0 {
		b.OldPools = make([]int64, n)
		for i := range b.OldPools {
			b.OldPools[i] = d.Varint()
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("backtrace: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", encoding.ErrCorrupt, err)
	}
	return b, nil
}

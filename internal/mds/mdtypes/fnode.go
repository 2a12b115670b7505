package mdtypes

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// FragHeader is a directory fragment's own metadata, kept in its object's
// omap header (Ceph's fnode_t): the fragment's version, raised by every
// change to its dentries and written with them, and its statistics.
type FragHeader struct {
	Version uint64
	// Files and Subdirs count the fragment's entries that are not
	// directories and that are.
	Files   uint64
	Subdirs uint64
	// RStat sums the recursive statistics beneath the fragment.
	RStat RStat
}

// Encode appends the header (docs/FORMATS.md, "Directory fragment").
func (h *FragHeader) Encode(e *encoding.Encoder) {
	m := e.Begin(1, 1)
	e.Uvarint(h.Version)
	e.Uvarint(h.Files)
	e.Uvarint(h.Subdirs)
	e.Uvarint(h.RStat.Bytes)
	e.Uvarint(h.RStat.Files)
	e.Uvarint(h.RStat.Subdirs)
	e.End(m)
}

// Marshal returns Encode's bytes.
func (h *FragHeader) Marshal() []byte {
	var e encoding.Encoder
	h.Encode(&e)
	return e.Data()
}

// UnmarshalFragHeader decodes what Marshal wrote.
func UnmarshalFragHeader(b []byte) (FragHeader, error) {
	var h FragHeader
	d := encoding.NewDecoder(b)
	d.Begin(1)
	h.Version = d.Uvarint()
	h.Files = d.Uvarint()
	h.Subdirs = d.Uvarint()
	h.RStat.Bytes = d.Uvarint()
	h.RStat.Files = d.Uvarint()
	h.RStat.Subdirs = d.Uvarint()
	d.End()
	if err := d.Finish(); err != nil {
		return FragHeader{}, fmt.Errorf("fragment header: %w", err)
	}
	return h, nil
}

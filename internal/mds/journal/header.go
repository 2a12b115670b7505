package journal

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// headerMagic starts the header object.
const headerMagic = "CJNL"

// StreamFormat is the format of the stream's frames this package writes
// and reads.
const StreamFormat = 1

// Header is the content of a journal's header object, Ceph's
// Journaler::Header: the stream's positions, its layout and format.
type Header struct {
	// Format is the stream's frame format (StreamFormat).
	Format uint32
	// Generation is raised by every writer that takes over the journal,
	// before it appends: frames carry the generation of their writer.
	Generation uint64
	// TrimmedPos: the objects wholly below it have been removed.
	TrimmedPos uint64
	// ExpirePos: replay starts here; the entries below it are expired
	// (written back) and may be trimmed.
	ExpirePos uint64
	// WritePos: the stream holds valid entries at least up to here
	// (it may hold more: the header is written lazily, and replay reads
	// on to the first invalid frame).
	WritePos uint64
	// Layout stripes the stream over the journal inode's objects.
	Layout layout.Layout
}

// ErrBadHeader is the class of a header object that does not decode.
var ErrBadHeader = errors.New("journal: bad header")

// Encode returns the header object's bytes.
func (h Header) Encode() []byte {
	var e encoding.Encoder
	for i := range len(headerMagic) {
		e.Uint8(headerMagic[i])
	}
	m := e.Begin(1, 1)
	e.Uint32(h.Format)
	e.Uint64(h.Generation)
	e.Uint64(h.TrimmedPos)
	e.Uint64(h.ExpirePos)
	e.Uint64(h.WritePos)
	h.Layout.Encode(&e)
	e.End(m)
	return e.Data()
}

// DecodeHeader decodes a header object and checks it: the format is
// known, the layout valid, and period ≤ trimmed ≤ expire ≤ write. Errors
// wrap ErrBadHeader (and encoding's classes).
func DecodeHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < len(headerMagic) || string(b[:len(headerMagic)]) != headerMagic {
		return h, fmt.Errorf("%w: no %q magic", ErrBadHeader, headerMagic)
	}
	d := encoding.NewDecoder(b[len(headerMagic):])
	d.Begin(1)
	h.Format = d.Uint32()
	h.Generation = d.Uint64()
	h.TrimmedPos = d.Uint64()
	h.ExpirePos = d.Uint64()
	h.WritePos = d.Uint64()
	h.Layout.Decode(d)
	d.End()
	if err := d.Finish(); err != nil {
		return h, fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	if err := h.check(); err != nil {
		return h, err
	}
	return h, nil
}

// check validates a decoded header's fields against each other.
func (h Header) check() error {
	switch p := h.Layout.Period(); {
	case h.Format != StreamFormat:
		return fmt.Errorf("%w: stream format %d, this MDS reads %d", ErrBadHeader, h.Format, StreamFormat)
	case h.TrimmedPos < p || h.TrimmedPos > h.ExpirePos || h.ExpirePos > h.WritePos:
		return fmt.Errorf("%w: positions out of order: period %d, trimmed %d, expire %d, write %d", ErrBadHeader, p, h.TrimmedPos, h.ExpirePos, h.WritePos)
	}
	return nil
}

package blockstore

import (
	"context"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// ObjectLayout is the debugging view of an object record: how its logical
// bytes map to the device.
type ObjectLayout struct {
	Nid           uint64         `json:"nid"`
	Size          uint64         `json:"size"`
	ChecksumBlock uint64         `json:"checksum_block"`
	Extents       []LayoutExtent `json:"extents"`
	// Pages are the logically allocated ranges (what ExtentMap reports,
	// before clipping to Size).
	Pages []LayoutPages `json:"pages"`
}

// LayoutPages is a run of allocated pages of an object's logical bytes.
type LayoutPages struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// LayoutExtent is a run of the object's logical bytes stored contiguously
// on the device, with one crc32c per checksum block.
type LayoutExtent struct {
	Offset    uint64   `json:"offset"`
	Length    uint64   `json:"length"`
	DevOffset uint64   `json:"device_offset"`
	Checksums []uint32 `json:"checksums"`
}

// Layout returns o's record as applied: node id, size, device extents
// with their checksums, and allocated pages.
func (s *Store) Layout(ctx context.Context, c objectstore.CollectionID, o objid.ID) (ObjectLayout, error) {
	if err := s.begin(ctx); err != nil {
		return ObjectLayout{}, err
	}
	defer s.applyMu.RUnlock()
	rec, err := s.record(c, o)
	if err != nil {
		return ObjectLayout{}, err
	}
	au := s.sb.AllocUnit
	l := ObjectLayout{Nid: rec.Nid, Size: rec.Size, ChecksumBlock: s.sb.ChecksumBlock, Extents: []LayoutExtent{}, Pages: []LayoutPages{}}
	var prev format.Unit
	for u := range rec.Units.All() {
		follows := len(l.Extents) > 0 && u.LU == prev.LU+1 && u.Dev == prev.Dev+au
		prev = u
		if follows {
			n := len(l.Extents)
			e := &l.Extents[n-1]
			e.Length += au
			e.Checksums = u.AppendSums(e.Checksums)
			continue
		}
		l.Extents = append(l.Extents, LayoutExtent{Offset: u.LU * au, Length: au, DevOffset: u.Dev, Checksums: u.AppendSums(nil)})
	}
	for _, x := range rec.Pages {
		l.Pages = append(l.Pages, LayoutPages{Offset: x.Off, Length: x.End - x.Off})
	}
	return l, nil
}

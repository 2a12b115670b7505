package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
)

// Snapshot ops (docs/SNAPSHOTS.md). Each must be the only op of its
// OSDOp, on the object's head.
const (
	// OpListSnaps (a read) -> Data: an encoded SnapSetInfo, the
	// object's clones and its head.
	OpListSnaps ObjectOpCode = 30
	// OpRollback (a write): Version is the snapshot the head goes back
	// to: a copy of the version the snapshot reads, or a delete if the
	// object did not exist at it. ENOENT for a snapshot the pool does not
	// have.
	OpRollback ObjectOpCode = 60
)

// CloneInfo is one version of an object in a SnapSetInfo: a clone, or
// the head (ID objid.NoSnap).
type CloneInfo struct {
	ID uint64
	// Snaps are the snapshots the clone serves, newest first (none for
	// the head).
	Snaps []uint64
	Size  uint64
	// Overlap is what the clone shares with the next newer version.
	Overlap []Extent
}

// SnapSetInfo is what OpListSnaps returns (Ceph's obj_list_snap_response_t):
// the newest snap seq a write to the object carried and its versions,
// oldest first, the head last if it exists.
type SnapSetInfo struct {
	Seq    uint64
	Clones []CloneInfo
}

// maxCloneInfos bounds the versions of a decoded SnapSetInfo.
const maxCloneInfos = 1 << 16

// Encode encodes s: version 1: seq, count, then each clone: id, snaps
// (count, ids), size, overlap (count, offset and length each); uvarints.
func (s SnapSetInfo) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(s.Seq)
	e.Uvarint(uint64(len(s.Clones)))
	for _, c := range s.Clones {
		e.Uvarint(c.ID)
		e.Uvarint(uint64(len(c.Snaps)))
		for _, id := range c.Snaps {
			e.Uvarint(id)
		}
		e.Uvarint(c.Size)
		e.Uvarint(uint64(len(c.Overlap)))
		for _, x := range c.Overlap {
			e.Uvarint(x.Offset)
			e.Uvarint(x.Length)
		}
	}
	e.End(mk)
	return e.Data()
}

// DecodeSnapSetInfo decodes what Encode wrote.
func DecodeSnapSetInfo(b []byte) (SnapSetInfo, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	var s SnapSetInfo
	s.Seq = d.Uvarint()
	n := d.Count(4)
	if n > maxCloneInfos {
		d.Fail(fmt.Errorf("%w: %d clones", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		c := CloneInfo{ID: d.Uvarint()}
		ns := d.Count(1)
		if ns > maxSnaps {
			d.Fail(fmt.Errorf("%w: %d snaps of a clone", encoding.ErrCorrupt, ns))
			break
		}
		for j := 0; j < ns && d.Err() == nil; j++ {
			c.Snaps = append(c.Snaps, d.Uvarint())
		}
		c.Size = d.Uvarint()
		no := d.Count(2)
		for j := 0; j < no && d.Err() == nil; j++ {
			c.Overlap = append(c.Overlap, Extent{Offset: d.Uvarint(), Length: d.Uvarint()})
		}
		s.Clones = append(s.Clones, c)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return SnapSetInfo{}, fmt.Errorf("wire: snap set: %w", err)
	}
	return s, nil
}

// Head returns the head's entry, or nil if the head does not exist.
func (s *SnapSetInfo) Head() *CloneInfo {
	if n := len(s.Clones); n > 0 && s.Clones[n-1].ID == objid.NoSnap {
		return &s.Clones[n-1]
	}
	return nil
}

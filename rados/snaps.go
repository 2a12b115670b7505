package rados

import (
	"context"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// Object snapshots on an IOContext (docs/SNAPSHOTS.md): the snap context
// writes carry and the snapshot reads read at.

// SnapHead names an object's head, its current version, in SetReadSnap.
const SnapHead = objid.NoSnap

// snapContext is a self-managed snap context: seq and snaps, newest
// first.
type snapContext struct {
	seq   uint64
	snaps []uint64
}

// SetSnapWriteContext sets the snap context of later writes, for a pool
// of self-managed snapshots (Ceph's selfmanaged_snap_set_write_ctx):
// seq, the newest snap id allocated (SelfManagedSnapCreate), and the
// live snapshots' ids, newest first. A write after a snapshot in it
// first preserves the object as it was for reads at that snapshot. It is
// ErrInvalid unless the ids are strictly decreasing, none 0 and none
// above seq. Writes to a pool of pool snapshots carry the pool's context
// from the client's map instead.
func (io *IOContext) SetSnapWriteContext(seq uint64, snaps []uint64) error {
	for i, s := range snaps {
		if s == 0 || s > seq || (i > 0 && s >= snaps[i-1]) || s >= objid.NoSnap {
			return fmt.Errorf("%w: snap context seq %d snaps %v: ids must be newest first, none 0 or above the seq", ErrInvalid, seq, snaps)
		}
	}
	if seq >= objid.NoSnap {
		return fmt.Errorf("%w: snap context seq %#x is not a snap id", ErrInvalid, seq)
	}
	io.mu.Lock()
	io.snapc = snapContext{seq: seq, snaps: slices.Clone(snaps)}
	io.mu.Unlock()
	return nil
}

// SetReadSnap sets the snapshot later reads read at (Ceph's
// snap_set_read): a snapshot id, or SnapHead for the current version.
// A read at a snapshot the object did not exist at is ErrNotFound.
// Writes always go to the head.
func (io *IOContext) SetReadSnap(snap uint64) {
	io.mu.Lock()
	io.readSnap = snap
	if snap == SnapHead {
		io.readSnap = 0
	}
	io.mu.Unlock()
}

// setSnaps fills the snap fields of an op about to be sent: a write (or
// a class method, which may write) carries the snap context (the pool's,
// for a pool of pool snapshots); a read names the read snapshot in its
// object id. A class method without other writes beside it runs at the
// read snapshot when one is set, as Ceph's exec does: a method that reads
// reads the object as it was, and one that writes is refused
// (ErrReadOnly), since a snapshot cannot change.
func (io *IOContext) setSnaps(m *wire.OSDOp) {
	write := slices.ContainsFunc(m.Ops, func(o wire.ObjectOp) bool { return o.Code.IsWrite() })
	call := slices.ContainsFunc(m.Ops, func(o wire.ObjectOp) bool { return o.Code == wire.OpCall })
	io.mu.Lock()
	snapc, readSnap := io.snapc, io.readSnap
	io.mu.Unlock()
	if !write && (!call || readSnap != 0) {
		if readSnap != 0 {
			m.Object.Snap = readSnap
		}
		return
	}
	if p := io.conn.obj.currentMap().Pool(io.pool); p != nil && p.PoolSnapsMode() {
		m.SnapSeq, m.Snaps = p.SnapContext()
		return
	}
	m.SnapSeq, m.Snaps = snapc.seq, snapc.snaps
}

// Rollback makes object name what it was at snapshot snap (Ceph's
// selfmanaged_snap_rollback and snap_rollback): a copy of that version,
// or no object if it did not exist then. It is a write, under the
// IOContext's snap context like any other, so the version it replaces
// is kept for the snapshots that need it. It is ErrNotFound for a
// snapshot the pool does not have (never made, or removed).
func (io *IOContext) Rollback(ctx context.Context, name string, snap uint64) error {
	w := &WriteOp{}
	w.add(wire.ObjectOp{Code: wire.OpRollback, Version: snap})
	return io.OperateWrite(ctx, name, w)
}

// CloneInfo is one version of an object in ObjectSnaps: a clone, or the
// head (ID SnapHead).
type CloneInfo struct {
	ID uint64
	// Snaps are the snapshots the clone serves, newest first (none for
	// the head).
	Snaps []uint64
	Size  uint64
	// Overlap is what the clone shares with the next newer version.
	Overlap []Extent
}

// ObjectSnaps is an object's snap set (Ceph's list_snaps): the newest
// snap seq a write to it carried and its versions, oldest first, the
// head last if it exists.
type ObjectSnaps struct {
	Seq    uint64
	Clones []CloneInfo
}

// ListSnaps returns object name's clones and head. It is ErrNotFound if
// the object has neither.
func (io *IOContext) ListSnaps(ctx context.Context, name string) (ObjectSnaps, error) {
	r := &ReadOp{}
	var data []byte
	r.addCopying(wire.ObjectOp{Code: wire.OpListSnaps}, func(res *wire.ObjectOpResult) { data = slices.Clone(res.Data) })
	if err := io.OperateRead(ctx, name, r); err != nil {
		return ObjectSnaps{}, err
	}
	info, err := wire.DecodeSnapSetInfo(data)
	if err != nil {
		return ObjectSnaps{}, fmt.Errorf("rados: list-snaps %q: %w", name, err)
	}
	out := ObjectSnaps{Seq: info.Seq, Clones: make([]CloneInfo, len(info.Clones))}
	for i, c := range info.Clones {
		out.Clones[i] = CloneInfo{ID: c.ID, Snaps: c.Snaps, Size: c.Size}
		for _, x := range c.Overlap {
			out.Clones[i].Overlap = append(out.Clones[i].Overlap, Extent{Offset: x.Offset, Length: x.Length})
		}
	}
	return out, nil
}

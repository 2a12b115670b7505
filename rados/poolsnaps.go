package rados

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Pool snapshots and self-managed snapshot ids (docs/SNAPSHOTS.md). The
// monitors keep both in the pool's map entry; the calls below change
// them with monitor commands and wait until the client's map has the
// change, so that the next write carries it. A pool is in one mode for
// its life: pool snapshots (named, every write carries the pool's snap
// context) or self-managed (the caller allocates ids and sets its snap
// context with SetSnapWriteContext). The other mode's calls fail with
// ErrInvalid.

// PoolSnap is one pool snapshot.
type PoolSnap struct {
	ID      uint64
	Name    string
	Created time.Time
}

// snapReply is the JSON the monitors' snapshot commands answer.
type snapReply struct {
	SnapID uint64 `json:"snapid"`
	Epoch  uint64 `json:"epoch"`
}

// snapCommand runs a snapshot command on the IOContext's pool and waits
// for the map that has its change.
func (io *IOContext) snapCommand(ctx context.Context, prefix string, args map[string]string) (uint64, error) {
	args["pool"] = io.name
	r, err := io.conn.MonCommand(ctx, prefix, args)
	if err != nil {
		return 0, err
	}
	var sr snapReply
	if err := json.Unmarshal(r.Data, &sr); err != nil {
		return 0, fmt.Errorf("rados: %s: reply %q: %w", prefix, r.Data, err)
	}
	if err := io.conn.WaitForEpoch(ctx, sr.Epoch); err != nil {
		return 0, fmt.Errorf("rados: %s: waiting for map %d: %w", prefix, sr.Epoch, err)
	}
	return sr.SnapID, nil
}

// CreatePoolSnap makes a pool snapshot named name ("osd pool mksnap")
// and returns its id. It is ErrExists if the pool has one of that name.
func (io *IOContext) CreatePoolSnap(ctx context.Context, name string) (uint64, error) {
	return io.snapCommand(ctx, "osd pool mksnap", map[string]string{"snap": name})
}

// RemovePoolSnap removes the pool snapshot named name ("osd pool
// rmsnap"); the OSDs then trim the clones only it needed. It is
// ErrNotFound if there is no such snapshot.
func (io *IOContext) RemovePoolSnap(ctx context.Context, name string) error {
	_, err := io.snapCommand(ctx, "osd pool rmsnap", map[string]string{"snap": name})
	return err
}

// SnapRemoved reports whether the pool has removed snapshot id, in the
// client's map: reads and rollbacks at it are ErrNotFound, even before
// the OSDs have trimmed its clones.
func (io *IOContext) SnapRemoved(id uint64) bool {
	p := io.conn.obj.currentMap().Pool(io.pool)
	return p != nil && p.RemovedSnaps.Contains(id)
}

// PoolSnaps returns the pool's snapshots in the client's map, oldest
// first.
func (io *IOContext) PoolSnaps() ([]PoolSnap, error) {
	p := io.conn.obj.currentMap().Pool(io.pool)
	if p == nil {
		return nil, fmt.Errorf("%w: id %d (%s)", ErrPoolNotFound, io.pool, io.name)
	}
	out := make([]PoolSnap, len(p.Snaps))
	for i, s := range p.Snaps {
		out[i] = PoolSnap{ID: s.ID, Name: s.Name, Created: s.Created}
	}
	return out, nil
}

// LookupPoolSnap returns the id of the pool snapshot named name, or
// ErrNotFound.
func (io *IOContext) LookupPoolSnap(name string) (uint64, error) {
	p := io.conn.obj.currentMap().Pool(io.pool)
	if p == nil {
		return 0, fmt.Errorf("%w: id %d (%s)", ErrPoolNotFound, io.pool, io.name)
	}
	s := p.SnapByName(name)
	if s == nil {
		return 0, fmt.Errorf("%w: pool %s has no snap %q", ErrNotFound, io.name, name)
	}
	return s.ID, nil
}

// SelfManagedSnapCreate allocates a snapshot id of the pool from the
// monitors (putting the pool in self-managed mode). The caller adds it
// to the snap context of its writes (SetSnapWriteContext) to take the
// snapshot.
func (io *IOContext) SelfManagedSnapCreate(ctx context.Context) (uint64, error) {
	return io.snapCommand(ctx, "osd pool selfmanaged_snap_create", map[string]string{})
}

// SelfManagedSnapRemove tells the monitors that snapshot id is gone; the
// OSDs then trim the clones only it needed. Removing an id twice
// succeeds; an id the pool never gave out is ErrNotFound.
func (io *IOContext) SelfManagedSnapRemove(ctx context.Context, id uint64) error {
	_, err := io.snapCommand(ctx, "osd pool selfmanaged_snap_remove", map[string]string{"snapid": strconv.FormatUint(id, 10)})
	return err
}

package osdmon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Snapshots of pools (osdmap/snaps.go). Pool snapshots are named and
// listed here ("osd pool mksnap|rmsnap|lssnap"); self-managed snapshot
// ids are handed to clients, which keep their own snap contexts
// ("osd pool selfmanaged_snap_create|remove", Ceph's POOL_OP_CREATE_
// and POOL_OP_DELETE_UNMANAGED_SNAP). A pool takes one mode with its
// first snapshot and keeps it: mixing is EINVAL, as in Ceph.

// SnapView is a pool snapshot in "osd pool lssnap".
type SnapView struct {
	ID      uint64    `json:"id"`
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// SnapReply is the reply of the snapshot-making and removing commands:
// the snapshot and the epoch of the map that has the change, so that a
// client can wait for it.
type SnapReply struct {
	Pool   string `json:"pool"`
	PoolID int64  `json:"pool_id"`
	SnapID uint64 `json:"snapid"`
	Name   string `json:"name,omitempty"`
	Epoch  uint32 `json:"epoch"`
}

// snapPool returns the pool a snapshot command names, or the refusal.
func (s *Service) snapPool(c moncmd.Command) (*osdmap.Pool, *moncmd.Reply) {
	name, err := c.Str("pool")
	if err != nil {
		r := moncmd.FromError(err, moncmd.EINVAL)
		return nil, &r
	}
	p := s.m.PoolByName(name)
	if p == nil {
		r := moncmd.Errorf(moncmd.ENOENT, "%s: unrecognized pool '%s'", c.Prefix, name)
		return nil, &r
	}
	return p, nil
}

// nextSnap returns p with a new snapshot id taken from its snap_seq.
func nextSnap(p *osdmap.Pool) (osdmap.Pool, uint64, error) {
	np := p.Clone()
	if np.SnapSeq+1 >= osdmap.MaxSnapID {
		return np, 0, fmt.Errorf("pool '%s' has no snap ids left", p.Name)
	}
	np.SnapSeq++
	return np, np.SnapSeq, nil
}

// removeSnap records id removed in np and burns a fresh snap_seq, as
// Ceph does (the new seq joins the removed set so that it stays one
// interval when snapshots go in order).
func removeSnap(np *osdmap.Pool, id uint64) {
	np.RemovedSnaps = np.RemovedSnaps.Insert(id)
	if np.SnapSeq+1 < osdmap.MaxSnapID {
		np.SnapSeq++
		np.RemovedSnaps = np.RemovedSnaps.Insert(np.SnapSeq)
	}
}

// snapReply proposes np and answers with r.
func (s *Service) proposeSnap(np osdmap.Pool, r SnapReply, status string, now time.Time) ([]byte, moncmd.Reply) {
	t := s.begin(now)
	np.LastChange = t.inc.Epoch
	t.inc.NewPools = []osdmap.Pool{np}
	r.Pool, r.PoolID, r.Epoch = np.Name, np.ID, uint32(t.inc.Epoch)
	reply := replyJSON(r, status+"\n")
	reply.Status = status
	return t.propose(reply)
}

// prepareMksnap handles "osd pool mksnap pool snap".
func (s *Service) prepareMksnap(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	p, refused := s.snapPool(c)
	if refused != nil {
		return nil, *refused
	}
	name, err := c.Str("snap")
	if err != nil {
		return bad(err)
	}
	switch {
	case name == "" || len(name) > osdmap.MaxNameLen:
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd pool mksnap: snap name must have 1 to %d bytes", osdmap.MaxNameLen)
	case p.SelfManagedSnapsMode():
		return nil, moncmd.Errorf(moncmd.EINVAL, "pool '%s' is in self-managed snaps mode (its clients allocate snap ids): "+
			"it cannot take pool snapshots too; snapshot through the client that manages them", p.Name)
	case p.SnapByName(name) != nil:
		return nil, moncmd.Errorf(moncmd.EEXIST, "pool '%s' snap '%s' already exists (id %d); choose another name or rmsnap it first",
			p.Name, name, p.SnapByName(name).ID)
	case len(p.Snaps) >= osdmap.MaxPoolSnaps:
		return nil, moncmd.Errorf(moncmd.ERANGE, "pool '%s' has %d snaps, the most a pool may have: remove some first", p.Name, len(p.Snaps))
	}
	np, id, err := nextSnap(p)
	if err != nil {
		return nil, moncmd.Errorf(moncmd.ERANGE, "osd pool mksnap: %v", err)
	}
	np.Flags |= osdmap.PoolSnaps
	np.Snaps = append(np.Snaps, osdmap.PoolSnap{ID: id, Name: name, Created: now.Round(0).UTC()})
	return s.proposeSnap(np, SnapReply{SnapID: id, Name: name}, fmt.Sprintf("created pool %s snap %s", p.Name, name), now)
}

// prepareRmsnap handles "osd pool rmsnap pool snap".
func (s *Service) prepareRmsnap(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	p, refused := s.snapPool(c)
	if refused != nil {
		return nil, *refused
	}
	name, err := c.Str("snap")
	if err != nil {
		return bad(err)
	}
	sn := p.SnapByName(name)
	if sn == nil {
		return nil, moncmd.Errorf(moncmd.ENOENT, "pool '%s' has no snap '%s' (cuttle osd pool lssnap %s lists them)", p.Name, name, p.Name)
	}
	id := sn.ID
	np := p.Clone()
	np.Snaps = np.Snaps[:0]
	for _, x := range p.Snaps {
		if x.ID != id {
			np.Snaps = append(np.Snaps, x)
		}
	}
	removeSnap(&np, id)
	return s.proposeSnap(np, SnapReply{SnapID: id, Name: name}, fmt.Sprintf("removed pool %s snap %s", p.Name, name), now)
}

// queryLssnap answers "osd pool lssnap pool", as rados lssnap prints:
// id, name and creation time, then the count.
func (s *Service) queryLssnap(c moncmd.Command) moncmd.Reply {
	p, refused := s.snapPool(c)
	if refused != nil {
		return *refused
	}
	views := make([]SnapView, 0, len(p.Snaps))
	var b strings.Builder
	for _, sn := range p.Snaps {
		views = append(views, SnapView{ID: sn.ID, Name: sn.Name, Created: sn.Created})
		fmt.Fprintf(&b, "%d\t%s\t%s\n", sn.ID, sn.Name, sn.Created.Format("2006.01.02 15:04:05"))
	}
	fmt.Fprintf(&b, "%d snaps\n", len(p.Snaps))
	return replyJSON(views, b.String())
}

// prepareSelfManagedCreate handles "osd pool selfmanaged_snap_create
// pool": it allocates the pool's next snap id for a client.
func (s *Service) prepareSelfManagedCreate(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	p, refused := s.snapPool(c)
	if refused != nil {
		return nil, *refused
	}
	if p.PoolSnapsMode() {
		return nil, moncmd.Errorf(moncmd.EINVAL, "pool '%s' is in pool snaps mode (cuttle osd pool lssnap %s): "+
			"it cannot take self-managed snapshots too; use another pool", p.Name, p.Name)
	}
	np, id, err := nextSnap(p)
	if err != nil {
		return nil, moncmd.Errorf(moncmd.ERANGE, "%s: %v", c.Prefix, err)
	}
	np.Flags |= osdmap.PoolSelfManagedSnap
	return s.proposeSnap(np, SnapReply{SnapID: id}, fmt.Sprintf("allocated pool %s snap id %d", p.Name, id), now)
}

// prepareSelfManagedRemove handles "osd pool selfmanaged_snap_remove
// pool snapid". Removing an id that is already removed succeeds (a
// resent command finds its own change applied).
func (s *Service) prepareSelfManagedRemove(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	p, refused := s.snapPool(c)
	if refused != nil {
		return nil, *refused
	}
	v, err := c.Str("snapid")
	if err != nil {
		return bad(err)
	}
	id, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "%s: snapid %q is not a snap id", c.Prefix, v)
	}
	switch {
	case p.PoolSnapsMode():
		return nil, moncmd.Errorf(moncmd.EINVAL, "pool '%s' is in pool snaps mode: remove its snaps by name (cuttle osd pool rmsnap %s SNAP)", p.Name, p.Name)
	case id == 0 || id > p.SnapSeq || !p.SelfManagedSnapsMode():
		return nil, moncmd.Errorf(moncmd.ENOENT, "pool '%s' never allocated snap id %d (its snap_seq is %d)", p.Name, id, p.SnapSeq)
	case p.RemovedSnaps.Contains(id):
		status := fmt.Sprintf("pool %s snap id %d is already removed", p.Name, id)
		r := replyJSON(SnapReply{Pool: p.Name, PoolID: p.ID, SnapID: id, Epoch: uint32(s.m.Epoch())}, status+"\n")
		r.Status = status
		return nil, r
	}
	np := p.Clone()
	removeSnap(&np, id)
	return s.proposeSnap(np, SnapReply{SnapID: id}, fmt.Sprintf("removed pool %s snap id %d", p.Name, id), now)
}

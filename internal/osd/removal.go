package osd

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Strays. An OSD that leaves a PG's acting set keeps its copy: peering
// may need it (past intervals), and a new member may be copied from it.
// Once the PG has gone active with a full acting set, every member
// brought up to date, the primary tells each stray it asked to delete its
// copy (PGRemove). A stray deletes only if its own map, at least as new
// as the primary's, leaves it out of the acting set and names the sender
// primary.
//
// Deleting removes the PG's meta object (its info and log) first, so that
// a copy half deleted when the OSD crashed is never taken for a history
// of the PG: a PG collection without one is deleted when the OSD starts,
// or when the PG comes back to it.

// removeBatch is how many objects one deleting transaction removes.
const removeBatch = 1024

// releaseStrays tells the strays of a PG that went active with a full
// acting set to delete their copies.
func (p *pg) releaseStrays(r *peerRun, m *osdmap.Map, asked []int32) {
	p.mu.Lock()
	full := len(p.acting) >= p.pool.Size && p.run == r
	acting := slices.Clone(p.acting)
	p.mu.Unlock()
	if !full {
		return
	}
	msg := wire.PGRemove{PGInterval: p.header(r, m)}.Encode()
	for _, x := range asked {
		if !slices.Contains(acting, x) && m.IsUp(x) {
			p.sendPeer(m, x, wire.TypePGRemove, msg)
		}
	}
}

// takeRemove deletes this OSD's copy of the PG if it is a stray of the
// sender's PG.
func (o *OSD) takeRemove(p *pg, sender int32) {
	_, m := o.lookupPG(p.id)
	if m == nil {
		return
	}
	mp, err := m.PGToUpActing(p.id, &osdmap.Scratch{})
	if err != nil || slices.Contains(mp.Acting, o.cfg.ID) || mp.ActingPrimary != sender || sender < 0 {
		return // not a stray in this OSD's map, or not from the primary
	}
	o.mu.Lock()
	if o.pgs[p.id] != p {
		o.mu.Unlock()
		return
	}
	delete(o.pgs, p.id)
	o.setLogLimitLocked()
	done := make(chan struct{})
	o.deleting[p.id] = done
	o.mu.Unlock()
	o.log.Info("deleting a stray copy of a PG; it is clean on its acting set", "pg", p.id.String(), "primary", sender)
	o.wg.Go(func() {
		defer o.finishDeleting(p.id, done)
		if err := o.deletePG(p.id); err != nil && o.ctx.Err() == nil {
			o.log.Error("deleting a stray PG", "pg", p.id.String(), "err", err)
		}
	})
}

func (o *OSD) finishDeleting(id osdmap.PG, done chan struct{}) {
	o.mu.Lock()
	delete(o.deleting, id)
	o.mu.Unlock()
	close(done)
}

// waitDeleted waits until a deletion of PG id in progress ends.
func (o *OSD) waitDeleted(id osdmap.PG) {
	o.mu.Lock()
	done := o.deleting[id]
	o.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-o.ctx.Done():
		}
	}
}

// deletePG deletes the PG's collection: its meta object first, then its
// objects a batch at a time, then the collection.
func (o *OSD) deletePG(id osdmap.PG) error {
	coll := objectstore.PGCollection(id.Pool, id.Seed)
	meta := pglog.MetaObject(id)
	if _, err := o.cfg.Store.Stat(o.ctx, coll, meta); err == nil {
		var t objectstore.Transaction
		t.Remove(coll, meta)
		if err := o.apply(&t); err != nil {
			return err
		}
	} else if !errors.Is(err, objectstore.ErrNotFound) {
		return err
	}
	for {
		objs, _, err := o.cfg.Store.ListObjects(o.ctx, coll, objid.ID{}, removeBatch)
		if err != nil {
			return err
		}
		if len(objs) == 0 {
			break
		}
		var t objectstore.Transaction
		for _, obj := range objs {
			t.Remove(coll, obj)
		}
		if err := o.apply(&t); err != nil {
			return err
		}
	}
	var t objectstore.Transaction
	t.RemoveCollection(coll)
	if err := o.apply(&t); err != nil {
		return fmt.Errorf("remove collection %v: %w", coll, err)
	}
	return nil
}

// halfDeleted reports whether PG id's collection exists without its meta
// object: a deletion the OSD did not finish.
func (o *OSD) halfDeleted(id osdmap.PG) (bool, error) {
	coll := objectstore.PGCollection(id.Pool, id.Seed)
	exists, err := o.cfg.Store.CollectionExists(o.ctx, coll)
	if err != nil || !exists {
		return false, err
	}
	_, err = o.cfg.Store.Stat(o.ctx, coll, pglog.MetaObject(id))
	if errors.Is(err, objectstore.ErrNotFound) {
		return true, nil
	}
	return false, err
}

package osd

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Unfound objects. When no reachable OSD holds a readable copy of an
// object at the version the authoritative log gives it (the OSDs that
// had it are down, or their copies rotted), the primary cannot go active
// without losing it: the PG stays incomplete (Ceph's name), reports
// how many objects are unfound (OBJECT_UNFOUND) and tries again every few
// seconds, in case an OSD holding a copy returns. If none will, an
// operator runs `cuttle pg mark_unfound_lost PGID delete`: peering
// forgets those objects (the log records their removal, and every
// member deletes its copy), and the PG goes active without them. With
// `revert` instead, each goes back to the newest copy older than the
// one lost that an OSD holds (the search for the object remembered it;
// this OSD's own counts too): the log records a modification, the copy
// takes that entry's version, and every member is pushed it; an object
// of which no OSD holds an older copy is deleted.
// peering.Machine decides all this (its unfound state); this file holds
// the store work and the command.
//
// An object can also become unfound in an active PG: its primary's copy,
// the only current one (the members still lacked it), rots before
// recovery copied it (missing.go finds it unreadable, and no member can
// repair it). The object joins the primary's own missing set (so the
// next peering searches for it), recovery pushes it no more and the PG
// shows active+recovery_unfound+degraded, reports the count
// (OBJECT_UNFOUND), and ops on the object wait, as Ceph's do, until a
// new interval's peering finds a copy or an operator marks it lost:
// mark_unfound_lost then peers the PG again within its interval
// (repeer), and that peering settles the object as it would have at
// activation.

// errUnfound means no readable copy of an object exists to recover from.
var errUnfound = errors.New("object unfound")

// noteUnfound records, in the active PG of run r, that id is unfound:
// this OSD's copy cannot be read (cause) and no member holds a current
// one. It returns the error the push fails with.
func (p *pg) noteUnfound(r *peerRun, id objid.ID, cause error) error {
	var t objectstore.Transaction
	p.mu.Lock()
	if p.run != r {
		p.mu.Unlock()
		return errIntervalEnded
	}
	p.recPlan.SetUnfound(id)
	if !slices.Contains(p.unfound, id) {
		p.unfound = append(p.unfound, id)
	}
	p.missing[id] = true
	pglog.SetMissingTxn(&t, p.id, id)
	p.mu.Unlock()
	p.o.statsChanged()
	p.o.log.Error("recovery: object unfound: this copy cannot be read and no member holds a current one",
		"pg", p.id.String(), "object", id.String(), "err", cause)
	if err := p.o.apply(&t); err != nil {
		return err
	}
	return fmt.Errorf("%v: %w (%w)", id, errUnfound, cause)
}

// stuckUnfound marks run r's PG as recovering no more: all that is left
// is unfound.
func (p *pg) stuckUnfound(r *peerRun) {
	p.mu.Lock()
	if p.run == r {
		p.recovering = "recovery_unfound"
	}
	n := len(p.unfound)
	p.mu.Unlock()
	p.o.statsChanged()
	p.o.log.Warn("recovery: only unfound objects are left; waiting for a new interval or mark_unfound_lost",
		"pg", p.id.String(), "unfound", n)
}

// waitInterval waits until run r's interval ends (or its PG peers again)
// and returns false.
func (p *pg) waitInterval(r *peerRun) bool {
	select {
	case <-r.done:
	case <-p.o.ctx.Done():
	}
	return false
}

// repeerLocked starts the interval's peering again (after
// mark_unfound_lost on an active PG): the writes in flight are answered
// ESTALE, and the requests wait until the PG is active again. The caller
// holds p.mu and answers the returned items (abandonAll) once it is
// released.
func (p *pg) repeerLocked(m *osdmap.Map) []work {
	stale := p.endIntervalLocked()
	p.startPeeringLocked(m)
	return stale
}

// unfoundLost tells the interval's peering that an operator marked its
// unfound objects lost, to revert or delete (peering.MarkedLost).
type unfoundLost struct{ revert bool }

// forgetLost removes the lost objects (ids) from this OSD's copy and
// appends their removal to the PG's log, so that every member deletes
// them too. For each object of reverted, whose copy here is the older
// one a revert went back to, it appends a modification and rewrites the
// copy's version to that entry's: the copy is then current at the new
// head, every member that lacks it is pushed it, and later searches and
// scrubs find it at the version the log gives.
func (p *pg) forgetLost(ids, reverted []objid.ID) error {
	if len(ids)+len(reverted) == 0 {
		return nil
	}
	infos := make(map[objid.ID]ops.Info, len(reverted))
	for _, id := range reverted {
		b, err := p.o.cfg.Store.GetAttr(p.o.ctx, p.coll, id, ops.InfoAttr)
		if err != nil {
			return fmt.Errorf("revert %v: %w", id, err)
		}
		if infos[id], err = ops.DecodeInfo(b); err != nil {
			return fmt.Errorf("revert %v: %w", id, err)
		}
	}
	var t objectstore.Transaction
	// A lost head or snapdir takes its snap set's index entries along
	// (the removals below; a reverted copy keeps its snap set).
	if err := p.reindexRemovalsTxn(&t, ids); err != nil {
		return err
	}
	p.mu.Lock()
	info := p.info
	entries := make([]pglog.Entry, 0, len(ids)+len(reverted))
	if len(reverted) > 0 {
		prior := map[objid.ID]wire.Version{}
		for _, e := range p.log.Entries() {
			prior[e.Object] = e.Version
		}
		for _, id := range reverted {
			v := wire.Version{Epoch: max(p.epoch, info.LastUpdate.Epoch), Counter: info.LastUpdate.Counter + 1}
			e := pglog.Entry{Version: v, Prior: prior[id], Kind: pglog.Modify, Object: id}
			if err := p.log.Append(e); err != nil {
				p.mu.Unlock()
				return err
			}
			entries = append(entries, e)
			info.LastUpdate, info.LastComplete = v, v
			oi := infos[id]
			from := oi.Version
			oi.Version = v
			t.SetAttr(p.coll, id, ops.InfoAttr, oi.Encode())
			pglog.RecoveredTxn(&t, p.id, id)
			delete(p.missing, id)
			p.o.log.Warn("peering: object reverted to an older copy", "pg", p.id.String(), "object", id.String(),
				"copy", from.String(), "version", v.String())
		}
	}
	for _, id := range ids {
		v := wire.Version{Epoch: max(p.epoch, info.LastUpdate.Epoch), Counter: info.LastUpdate.Counter + 1}
		e := pglog.Entry{Version: v, Prior: info.LastUpdate, Kind: pglog.Delete, Object: id}
		if err := p.log.Append(e); err != nil {
			p.mu.Unlock()
			return err
		}
		entries = append(entries, e)
		info.LastUpdate, info.LastComplete = v, v
		// The object's size is unknown: the byte count stays as it was
		// until the objects are counted again.
		info.Stats.Objects = max(info.Stats.Objects-1, 0)
		if _, err := p.o.cfg.Store.Stat(p.o.ctx, p.coll, id); err == nil {
			t.Remove(p.coll, id)
		}
		pglog.RecoveredTxn(&t, p.id, id)
		delete(p.missing, id)
		p.o.log.Warn("peering: object lost", "pg", p.id.String(), "object", id.String(), "version", v.String())
	}
	pglog.AppendTxn(&t, p.id, entries...)
	pglog.SaveInfoTxn(&t, info)
	p.info = info
	p.mu.Unlock()
	return p.o.apply(&t)
}

// markUnfoundLost answers "pg mark_unfound_lost" (mode revert or
// delete): the PG's peering reverts or forgets the objects it cannot
// find, at once if it is waiting for them, and otherwise at its next
// attempt.
func (o *OSD) markUnfoundLost(cmd wire.Command) wire.Reply {
	id, err := osdmap.ParsePG(cmd.Args["pgid"])
	if err != nil {
		return wire.Errorf(wire.EINVAL, "%s: %v", cmd.Prefix, err)
	}
	mode := cmd.Args["mode"]
	if mode != "delete" && mode != "revert" {
		return wire.Errorf(wire.EINVAL, "%s: mode %q: want revert or delete", cmd.Prefix, mode)
	}
	revert := mode == "revert"
	p, m := o.lookupPG(id)
	if p == nil {
		return wire.Errorf(wire.ENOENT, "%s: osd.%d does not hold pg %v", cmd.Prefix, o.cfg.ID, id)
	}
	p.mu.Lock()
	switch {
	case !p.isPrimaryLocked():
		p.mu.Unlock()
		return wire.Errorf(wire.EAGAIN, "%s: osd.%d is not the primary of pg %v", cmd.Prefix, o.cfg.ID, id)
	case len(p.unfound) == 0:
		p.mu.Unlock()
		return wire.Errorf(wire.ENOENT, "%s: pg %v has no unfound objects", cmd.Prefix, id)
	}
	n := len(p.unfound)
	p.loseUnfound, p.revertUnfound = true, revert
	var stale []work
	switch {
	case p.activated && m != nil:
		// Unfound in the active PG: peering again settles them.
		o.log.Warn("mark_unfound_lost: peering the active PG again", "pg", id.String(), "unfound", n)
		stale = p.repeerLocked(m)
	case p.run != nil:
		p.run.post(o.cfg.ID, unfoundLost{revert: revert})
	}
	epoch := p.epoch
	p.mu.Unlock()
	abandonAll(stale, epoch)
	msg := fmt.Sprintf("pg %v: %d unfound objects will be deleted: peering goes on without them", id, n)
	if revert {
		msg = fmt.Sprintf("pg %v: %d unfound objects will be reverted to the newest older copy an OSD holds (deleted where none does): peering goes on", id, n)
	}
	return wire.Reply{Status: msg, Text: msg + "\n"}
}

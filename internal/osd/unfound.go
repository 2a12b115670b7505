package osd

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/objectstore"
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
// member deletes its copy), and the PG goes active without them.
// peering.Machine decides all this (its unfound state); this file holds
// the store work and the command.

// unfoundLost tells the interval's peering that an operator marked its
// unfound objects lost (peering.MarkedLost).
type unfoundLost struct{}

// forgetLost removes the lost objects from this OSD's copy and appends
// their removal to the PG's log, so that every member deletes them too.
func (p *pg) forgetLost(ids []objid.ID) error {
	if len(ids) == 0 {
		return nil
	}
	var t objectstore.Transaction
	p.mu.Lock()
	info := p.info
	entries := make([]pglog.Entry, 0, len(ids))
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

// markUnfoundLost answers "pg mark_unfound_lost": the PG's peering
// forgets the objects it cannot find, at once if it is waiting for them,
// and otherwise at its next attempt.
func (o *OSD) markUnfoundLost(cmd wire.Command) wire.Reply {
	id, err := osdmap.ParsePG(cmd.Args["pgid"])
	if err != nil {
		return wire.Errorf(wire.EINVAL, "%s: %v", cmd.Prefix, err)
	}
	switch mode := cmd.Args["mode"]; mode {
	case "delete":
	case "revert":
		return wire.Errorf(wire.EINVAL, "%s: revert is not supported: an unfound object has no older copy Cuttle keeps; use delete", cmd.Prefix)
	default:
		return wire.Errorf(wire.EINVAL, "%s: mode %q: want delete", cmd.Prefix, mode)
	}
	p, _ := o.lookupPG(id)
	if p == nil {
		return wire.Errorf(wire.ENOENT, "%s: osd.%d does not hold pg %v", cmd.Prefix, o.cfg.ID, id)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.isPrimaryLocked():
		return wire.Errorf(wire.EAGAIN, "%s: osd.%d is not the primary of pg %v", cmd.Prefix, o.cfg.ID, id)
	case len(p.unfound) == 0:
		return wire.Errorf(wire.ENOENT, "%s: pg %v has no unfound objects", cmd.Prefix, id)
	}
	p.loseUnfound = true
	if p.run != nil {
		p.run.post(o.cfg.ID, unfoundLost{})
	}
	msg := fmt.Sprintf("pg %v: %d unfound objects will be deleted: peering goes on without them", id, len(p.unfound))
	return wire.Reply{Status: msg, Text: msg + "\n"}
}

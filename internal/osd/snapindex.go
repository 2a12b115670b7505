package osd

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/internal/osd/split"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The snap index (docs/SNAPSHOTS.md, "The snap index"; Ceph's
// SnapMapper): the omap of each PG's meta object holds a key per pair of
// a snapshot and a clone serving it (internal/osd/snaps, index.go), so
// that the trimmer of a removed snapshot reads that snapshot's keys
// instead of every object's snap set. The index is always IndexOf of the
// snap sets this OSD holds, each head's (or, with the head gone, its
// snapdir's): every transaction that changes a snap set changes the
// index with it, in the same transaction. A write does so in
// snapWrite.finish (and its rep op carries the change to the replicas),
// a push of a head or snapdir (recovery, backfill, scrub repair) in
// pushTxn, a removal of one (backfill's cleanup, a lost object) through
// reindexTxn. Clones themselves carry no snap set, so pushing or
// removing one changes nothing. A PG split moves the keys of the objects
// that move. Deep scrub checks the index against the snap sets: the
// primary reports what disagrees and repair rebuilds it
// (scrubSnapIndex), a replica rebuilds its own at once (fixSnapIndexHere).
// A PG stored before the index has none; its first trim pass as primary
// builds it (ensureSnapIndex).

// indexTxn adds to t the index changes of pg: the removals first.
func indexTxn(t *objectstore.Transaction, pg osdmap.PG, add, remove []snaps.IndexEntry) {
	c, meta := objectstore.PGCollection(pg.Pool, pg.Seed), pglog.MetaObject(pg)
	if len(remove) > 0 {
		keys := make([]string, len(remove))
		for i, e := range remove {
			keys[i] = e.Key()
		}
		t.OmapRmKeys(c, meta, keys...)
	}
	if len(add) > 0 {
		kv := make(map[string][]byte, len(add))
		for _, e := range add {
			kv[e.Key()] = nil
		}
		t.OmapSetKeys(c, meta, kv)
	}
}

// heldState is what a transaction leaves of an object that may hold a
// snap set (a head or a snapdir): whether it exists, and its snap set
// attribute (nil: none).
type heldState struct {
	exists bool
	attr   []byte
}

// heldNow reads what the store holds of id.
func heldNow(ctx context.Context, s objectstore.Store, c objectstore.CollectionID, id objid.ID) (heldState, error) {
	if _, err := s.Stat(ctx, c, id); errors.Is(err, objectstore.ErrNotFound) {
		return heldState{}, nil
	} else if err != nil {
		return heldState{}, err
	}
	b, err := s.GetAttr(ctx, c, id, SnapSetAttr)
	if errors.Is(err, objectstore.ErrNoAttr) || errors.Is(err, objectstore.ErrNotFound) {
		return heldState{exists: true}, nil
	} else if err != nil {
		return heldState{}, err
	}
	return heldState{exists: true, attr: b}, nil
}

// effectiveSnapSet returns the snap set of head's object that counts (as
// loadSnapState reads it): the head's if the head exists, else the
// snapdir's. after overrides what the store holds of the head or the
// snapdir. A snap set that does not decode counts as none (deep scrub
// reports the object, and the index entries it had).
func (p *pg) effectiveSnapSet(head objid.ID, after map[objid.ID]heldState) (snaps.SnapSet, error) {
	state := func(id objid.ID) (heldState, error) {
		if h, ok := after[id]; ok {
			return h, nil
		}
		return heldNow(p.o.ctx, p.o.cfg.Store, p.coll, id)
	}
	h, err := state(head)
	if err != nil {
		return snaps.SnapSet{}, err
	}
	if !h.exists {
		if h, err = state(head.WithSnap(objid.SnapDir)); err != nil {
			return snaps.SnapSet{}, err
		}
	}
	if !h.exists || h.attr == nil {
		return snaps.SnapSet{}, nil
	}
	ss, err := snaps.Unmarshal(h.attr)
	if err != nil {
		p.o.log.Warn("snap index: a snap set does not decode; scrub will find it", "pg", p.id.String(), "object", head.String(), "err", err)
		return snaps.SnapSet{}, nil
	}
	return ss, nil
}

// reindexTxn adds to t the index changes of a transaction that leaves
// the head or the snapdir of head's object as after says (the other as
// the store has it).
func (p *pg) reindexTxn(t *objectstore.Transaction, head objid.ID, after map[objid.ID]heldState) error {
	before, err := p.effectiveSnapSet(head, nil)
	if err != nil {
		return fmt.Errorf("snap index of %v: %w", head, err)
	}
	next, err := p.effectiveSnapSet(head, after)
	if err != nil {
		return fmt.Errorf("snap index of %v: %w", head, err)
	}
	add, remove := snaps.IndexChanges(head, before, next)
	indexTxn(t, p.id, add, remove)
	return nil
}

// holdsSnapSet reports whether id is an object that may hold a snap set.
func holdsSnapSet(id objid.ID) bool { return id.Snap == objid.NoSnap || id.Snap == objid.SnapDir }

// reindexRemovalsTxn adds to t the index changes of removing ids.
func (p *pg) reindexRemovalsTxn(t *objectstore.Transaction, ids []objid.ID) error {
	byHead := map[objid.ID]map[objid.ID]heldState{}
	var heads []objid.ID
	for _, id := range ids {
		if !holdsSnapSet(id) {
			continue
		}
		head := id.WithSnap(objid.NoSnap)
		if byHead[head] == nil {
			byHead[head] = map[objid.ID]heldState{}
			heads = append(heads, head)
		}
		byHead[head][id] = heldState{}
	}
	for _, head := range heads {
		if err := p.reindexTxn(t, head, byHead[head]); err != nil {
			return err
		}
	}
	return nil
}

// indexScan calls f for each index entry of the snapshots in set, in key
// order, reading the store batch by batch; it stops at f's first error.
// A key that does not decode is skipped and counted in bad.
func indexScan(ctx context.Context, s objectstore.Store, pg osdmap.PG, set osdmap.SnapIntervals, f func(snaps.IndexEntry) error) (bad int, _ error) {
	c, meta := objectstore.PGCollection(pg.Pool, pg.Seed), pglog.MetaObject(pg)
	for _, iv := range set {
		first := snaps.SnapKeyPrefix(iv.Start)
		after := first[:len(first)-1] // just before the interval's first key
		end := snaps.SnapKeyPrefix(iv.End())
		if iv.End() == 0 || iv.End() > osdmap.MaxSnapID { // no key beyond
			end = snaps.IndexPrefixEnd
		}
		for {
			kvs, more, err := s.OmapIterate(ctx, c, meta, after, snaps.IndexPrefix, trimBatch)
			if err != nil {
				return bad, err
			}
			for _, kv := range kvs {
				if kv.Key >= end {
					more = false
					break
				}
				after = kv.Key
				e, err := snaps.ParseIndexKey(kv.Key)
				if err != nil {
					bad++
					continue
				}
				if err := f(e); err != nil {
					return bad, err
				}
			}
			if !more {
				break
			}
		}
	}
	return bad, nil
}

// splitIndexTxn adds to t the move of the index entries of the clones
// that a split of parent for pg_num to moves to a child, to that child's
// meta object (which t creates before). A key that does not decode stays
// with the parent, for its deep scrub to remove.
func (o *OSD) splitIndexTxn(t *objectstore.Transaction, parent osdmap.PG, to uint32, children []uint32) error {
	c, meta := objectstore.PGCollection(parent.Pool, parent.Seed), pglog.MetaObject(parent)
	moved := map[uint32]map[string][]byte{}
	var gone []string
	for after := ""; ; {
		kvs, more, err := o.cfg.Store.OmapIterate(o.ctx, c, meta, after, snaps.IndexPrefix, trimBatch)
		if err != nil {
			return fmt.Errorf("split pg %v: snap index: %w", parent, err)
		}
		for _, kv := range kvs {
			after = kv.Key
			e, err := snaps.ParseIndexKey(kv.Key)
			if err != nil {
				continue
			}
			if seed := split.Where(e.Clone.Hash, to); seed != parent.Seed {
				if moved[seed] == nil {
					moved[seed] = map[string][]byte{}
				}
				moved[seed][kv.Key] = nil
				gone = append(gone, kv.Key)
			}
		}
		if !more {
			break
		}
	}
	if len(gone) > 0 {
		t.OmapRmKeys(c, meta, gone...)
	}
	for _, seed := range split.Sorted(moved) {
		child := osdmap.PG{Pool: parent.Pool, Seed: seed}
		t.OmapSetKeys(objectstore.PGCollection(child.Pool, child.Seed), pglog.MetaObject(child), moved[seed])
	}
	// A child's index is as complete as its parent's.
	vals, err := o.cfg.Store.OmapGetValues(o.ctx, c, meta, []string{snapIndexBuiltKey})
	if err != nil {
		return fmt.Errorf("split pg %v: snap index: %w", parent, err)
	}
	if _, built := vals[snapIndexBuiltKey]; built {
		for _, seed := range children {
			markSnapIndexTxn(t, osdmap.PG{Pool: parent.Pool, Seed: seed})
		}
	}
	return nil
}

// snapIndexBuiltKey is the meta object's omap key that says the PG's
// snap index is complete: set when the PG is made (empty, or by a
// split) and after a rebuild. A PG stored by a release before the index
// lacks it, and its first trim pass rebuilds the index from the snap
// sets (ensureSnapIndex).
const snapIndexBuiltKey = "snap_index.built"

// markSnapIndexTxn adds to t the record that pg's snap index is complete.
func markSnapIndexTxn(t *objectstore.Transaction, pg osdmap.PG) {
	t.OmapSetKeys(objectstore.PGCollection(pg.Pool, pg.Seed), pglog.MetaObject(pg), map[string][]byte{snapIndexBuiltKey: {1}})
}

// indexCheck is what a comparison of a PG's snap index with its snap
// sets found: the entries the snap sets call for that the index lacks,
// the index's entries no snap set calls for, and keys that are no index
// key at all.
type indexCheck struct {
	missing, stale []snaps.IndexEntry
	bad            []string
	heads          int // heads with clones, whose snap sets were read
}

// empty reports whether the index agrees with the snap sets.
func (c indexCheck) empty() bool { return len(c.missing)+len(c.stale)+len(c.bad) == 0 }

// checkSnapIndex compares pg's snap index in s with the snap sets of its
// objects: it reads every object's snap set (a walk of the PG, as deep
// scrub makes one anyway) and every index key. Entries of heads skip
// reports true for (written while the check ran) are left out.
func checkSnapIndex(ctx context.Context, s objectstore.Store, pg osdmap.PG, skip func(head objid.ID) bool) (indexCheck, error) {
	var out indexCheck
	c, meta := objectstore.PGCollection(pg.Pool, pg.Seed), pglog.MetaObject(pg)
	var ids []objid.ID
	for cursor := (objid.ID{}); ; {
		objs, next, err := s.ListObjects(ctx, c, cursor, 1024)
		if err != nil {
			return out, err
		}
		for _, o := range objs {
			if o.Pool == pg.Pool && holdsSnapSet(o) {
				ids = append(ids, o)
			}
		}
		if next.IsMax() || len(objs) == 0 {
			break
		}
		cursor = next
	}
	heads := map[objid.ID]bool{}
	for _, id := range ids {
		if id.Snap == objid.NoSnap {
			heads[id] = true
		}
	}
	var want []snaps.IndexEntry
	for _, id := range ids {
		head := id.WithSnap(objid.NoSnap)
		if (id.Snap == objid.SnapDir && heads[head]) || skip(head) {
			continue // the head's snap set counts
		}
		b, err := s.GetAttr(ctx, c, id, SnapSetAttr)
		if errors.Is(err, objectstore.ErrNoAttr) || errors.Is(err, objectstore.ErrNotFound) {
			continue
		} else if err != nil {
			return out, err
		}
		ss, err := snaps.Unmarshal(b)
		if err != nil {
			continue // a damaged snap set: scrub reports the object itself
		}
		if len(ss.Clones) > 0 {
			out.heads++
		}
		want = append(want, snaps.IndexOf(head, ss)...)
	}
	var have []snaps.IndexEntry
	for after := ""; ; {
		kvs, more, err := s.OmapIterate(ctx, c, meta, after, snaps.IndexPrefix, trimBatch)
		if err != nil {
			return out, err
		}
		for _, kv := range kvs {
			after = kv.Key
			e, err := snaps.ParseIndexKey(kv.Key)
			switch {
			case err != nil:
				out.bad = append(out.bad, kv.Key)
			case !skip(e.Head()):
				have = append(have, e)
			}
		}
		if !more {
			break
		}
	}
	snaps.SortEntries(want)
	snaps.SortEntries(have)
	out.missing, out.stale = snaps.Diff(have, want)
	return out, nil
}

// repairTxn adds to t the changes that make the index agree with the
// snap sets again.
func (c indexCheck) repairTxn(t *objectstore.Transaction, pg osdmap.PG) {
	indexTxn(t, pg, c.missing, c.stale)
	if len(c.bad) > 0 {
		t.OmapRmKeys(objectstore.PGCollection(pg.Pool, pg.Seed), pglog.MetaObject(pg), c.bad...)
	}
}

// ensureSnapIndex rebuilds the PG's snap index from its snap sets if it
// was never built (a PG stored before the index existed), and records it
// built. Writes that run meanwhile keep their own entries right; the
// rebuild leaves their heads alone (skip).
func (p *pg) ensureSnapIndex() error {
	vals, err := p.o.cfg.Store.OmapGetValues(p.o.ctx, p.coll, pglog.MetaObject(p.id), []string{snapIndexBuiltKey})
	if err != nil {
		return err
	}
	if _, ok := vals[snapIndexBuiltKey]; ok {
		return nil
	}
	chk, flux, err := p.checkSnapIndexHere()
	if err != nil {
		return err
	}
	var t objectstore.Transaction
	chk.repairTxn(&t, p.id)
	if len(flux) == 0 {
		// Else a head written meanwhile may lack the entries of clones it
		// had before: the next pass rebuilds again.
		markSnapIndexTxn(&t, p.id)
	}
	if err := p.o.apply(&t); err != nil {
		return err
	}
	p.o.log.Info("snap index built from the snap sets", "pg", p.id.String(), "heads", chk.heads, "entries", len(chk.missing))
	return nil
}

// checkSnapIndexHere compares this OSD's snap index of the PG with its
// snap sets, leaving out the heads written meanwhile (returned). Every
// write logged before the check began has been applied to the store
// first (a barrier transaction), so that no write applies between the
// check's reads of a head's snap set and of the index unless it is
// left out.
func (p *pg) checkSnapIndexHere() (indexCheck, map[objid.ID]bool, error) {
	lu, replicating := p.fluxStart()
	var barrier objectstore.Transaction
	barrier.Touch(p.coll, pglog.MetaObject(p.id))
	if err := p.o.apply(&barrier); err != nil {
		return indexCheck{}, nil, err
	}
	chk, err := checkSnapIndex(p.o.ctx, p.o.cfg.Store, p.id, func(objid.ID) bool { return false })
	if err != nil {
		return indexCheck{}, nil, err
	}
	flux := headsOf(p.fluxSince(lu, replicating))
	return chk.without(flux), flux, nil
}

// fixSnapIndexHere checks this OSD's snap index of the PG and rebuilds
// what disagrees with the snap sets, which are authoritative: what a
// replica does at the end of a deep scrub (as Ceph's OSDs fix their
// SnapMapper when a scrub finds it wrong), logging an error if it had
// to.
func (p *pg) fixSnapIndexHere() error {
	chk, _, err := p.checkSnapIndexHere()
	if err != nil || chk.empty() {
		return err
	}
	var t objectstore.Transaction
	chk.repairTxn(&t, p.id)
	if err := p.o.apply(&t); err != nil {
		return err
	}
	p.o.metrics.snapIndexRepairs.Add(float64(len(chk.missing) + len(chk.stale) + len(chk.bad)))
	p.o.log.Error("scrub: this OSD's snap index disagreed with its snap sets; rebuilt it", "pg", p.id.String(),
		"missing", len(chk.missing), "stale", len(chk.stale), "bad_keys", len(chk.bad))
	return nil
}

// headsOf returns the heads of objs.
func headsOf(objs map[objid.ID]bool) map[objid.ID]bool {
	out := make(map[objid.ID]bool, len(objs))
	for id := range objs {
		out[id.WithSnap(objid.NoSnap)] = true
	}
	return out
}

// without returns c less the entries of heads in flux.
func (c indexCheck) without(flux map[objid.ID]bool) indexCheck {
	keep := func(es []snaps.IndexEntry) []snaps.IndexEntry {
		var out []snaps.IndexEntry
		for _, e := range es {
			if !flux[e.Head()] {
				out = append(out, e)
			}
		}
		return out
	}
	c.missing, c.stale = keep(c.missing), keep(c.stale)
	return c
}

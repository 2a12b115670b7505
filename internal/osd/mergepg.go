package osd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/merge"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/scrub"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// PG merging, the inverse of splitting (split.go). The monitors merge in
// two map epochs (osdmap's merge.go): first a pool's pg_num_pending marks
// the PGs that will merge, which start a new interval in which their
// primaries refuse writes (ESTALE: the clients wait for the next map)
// while peering and recovery go on; then pg_num drops, with the versions
// each source and target had recorded. On that map, before any PG sees
// it, every OSD merges each source PG it holds (whatever its role) into
// its target: one store transaction moves the source's objects into the
// target's collection (MergeCollection), removes the source's meta object
// and collection, and rewrites the target's info and log as
// internal/osd/merge decides: current, with every entry of both logs
// renumbered after the merge epoch, when the copies had exactly the
// recorded versions; else with last update zero, to be backfilled. A
// crash before the transaction commits leaves the PGs unmerged, to merge
// at the next map; after, the merge is done.
//
// Requests sent to a source with an older map are answered ESTALE (the
// PG is gone) and resent to the target; a resent write finds its entry
// in the merged log, so it is answered, never applied twice.

// mergeGroup is a target PG and the sources this OSD holds that merge
// into it (target nil: the OSD holds none of it).
type mergeGroup struct {
	id      osdmap.PG
	target  *pg
	sources map[uint32]*pg
}

// mergePGs merges every group of PGs whose layout is above the pool's
// pg_num in m. splitPGs calls it in activate, before any PG sees m.
func (o *OSD) mergePGs(m *osdmap.Map, groups map[osdmap.PG]*mergeGroup) {
	for _, id := range slices.SortedFunc(maps.Keys(groups), osdmap.ComparePG) {
		g := groups[id]
		pool := m.Pool(id.Pool)
		res, err := o.mergeGroupPGs(g, pool, uint64(m.Epoch()))
		if err != nil {
			o.log.Error("merging placement groups", "pg", id.String(), "sources", len(g.sources), "err", err)
			continue
		}
		attrs := []any{"pg", id.String(), "sources", slices.Sorted(maps.Keys(g.sources)), "pg_num", pool.PGNum,
			"epoch", m.Epoch(), "last_update", res.Info.LastUpdate.String()}
		if res.Current {
			o.log.Info("merged placement groups", attrs...)
		} else {
			o.log.Warn("merged placement groups from copies that were not current: the merged copy is backfilled",
				append(attrs, "why", res.Why)...)
		}
	}
}

// addToMerge files p, laid out for more PGs than pool has, in its group.
func addToMerge(groups map[osdmap.PG]*mergeGroup, p *pg, pool *osdmap.Pool) {
	id := osdmap.PG{Pool: pool.ID, Seed: merge.Target(p.id.Seed, pool.PGNum)}
	g := groups[id]
	if g == nil {
		g = &mergeGroup{id: id, sources: map[uint32]*pg{}}
		groups[id] = g
	}
	if p.id == id {
		g.target = p
	} else {
		g.sources[p.id.Seed] = p
	}
}

// mergeGroupPGs merges g's sources into its target at epoch. Every PG of
// the group ends its interval first: writes in flight and queued
// requests are answered ESTALE.
func (o *OSD) mergeGroupPGs(g *mergeGroup, pool *osdmap.Pool, epoch uint64) (merge.Result, error) {
	absent := g.target == nil // not in o.pgs
	if absent {
		t, err := o.leftoverTarget(g.id)
		if err != nil {
			return merge.Result{}, err
		}
		g.target = t
	}
	all := make([]*pg, 0, len(g.sources)+1)
	if g.target != nil {
		all = append(all, g.target)
	}
	for _, s := range slices.Sorted(maps.Keys(g.sources)) {
		all = append(all, g.sources[s])
	}
	var stale []work
	for _, p := range all { // in seed order: the target's is the lowest
		p.mu.Lock()
		stale = append(stale, p.endIntervalLocked()...)
		if p.run != nil {
			close(p.run.done)
			p.run = nil
		}
		p.activated = false
		p.info.SameIntervalSince = epoch // requests of older maps are stale
	}
	res, created, err := o.mergeGroupLocked(g, pool, epoch)
	for _, p := range all {
		p.mu.Unlock()
	}
	abandonAll(stale, epoch)
	if err != nil {
		return res, err
	}
	o.mu.Lock()
	for _, s := range g.sources {
		if o.pgs[s.id] == s {
			delete(o.pgs, s.id)
		}
	}
	if created != nil {
		o.pgs[created.id] = created
	} else if absent {
		o.pgs[g.target.id] = g.target
	}
	o.setLogLimitLocked()
	o.mu.Unlock()
	o.statsChanged()
	return res, nil
}

// leftoverTarget returns the copy of PG id an earlier life of it left
// in the store, loaded, or nil if there is none.
func (o *OSD) leftoverTarget(id osdmap.PG) (*pg, error) {
	o.waitDeleted(id)
	exists, err := o.cfg.Store.CollectionExists(o.ctx, objectstore.PGCollection(id.Pool, id.Seed))
	if err != nil || !exists {
		return nil, err
	}
	if half, err := o.halfDeleted(id); err != nil {
		return nil, err
	} else if half {
		return nil, o.deletePG(id)
	}
	p, err := o.loadPG(o.ctx, id)
	if err != nil {
		return nil, err
	}
	if _, err := o.layoutOf(p, &osdmap.Pool{}); err != nil {
		return nil, err
	}
	return p, nil
}

// mergeGroupLocked merges with every PG of g locked. It returns the
// target PG it made when the OSD held none.
func (o *OSD) mergeGroupLocked(g *mergeGroup, pool *osdmap.Pool, epoch uint64) (merge.Result, *pg, error) {
	// Every write queued before must have applied: the logs and
	// statistics read below include them.
	var barrier objectstore.Transaction
	copyOf := func(p *pg) *merge.Copy {
		barrier.Touch(p.coll, pglog.MetaObject(p.id))
		return &merge.Copy{Layout: p.layout, Info: p.info, Entries: p.log.Entries(), Missing: len(p.missing)}
	}
	var tgt *merge.Copy
	if g.target != nil {
		tgt = copyOf(g.target)
	}
	sources := make(map[uint32]*merge.Copy, len(g.sources))
	for s, p := range g.sources {
		sources[s] = copyOf(p)
	}
	if err := o.apply(&barrier); err != nil {
		return merge.Result{}, nil, err
	}
	res, err := merge.Merge(pool, g.id.Seed, tgt, sources, epoch)
	if err != nil {
		return res, nil, err
	}
	coll := objectstore.PGCollection(g.id.Pool, g.id.Seed)
	var t objectstore.Transaction
	if g.target == nil {
		pglog.CreateTxn(&t, res.Info)
	}
	order := slices.Sorted(maps.Keys(g.sources))
	srcIDs := make([]osdmap.PG, len(order))
	for i, s := range order {
		srcIDs[i] = g.sources[s].id
	}
	if err := o.mergeIndexTxn(&t, g.id, g.target != nil, srcIDs); err != nil {
		return res, nil, err
	}
	for _, s := range order {
		p := g.sources[s]
		t.MergeCollection(p.coll, coll)
		t.Remove(p.coll, pglog.MetaObject(p.id))
		t.RemoveCollection(p.coll)
	}
	pglog.ReplaceTxn(&t, res.Info, res.Entries)
	pglog.ClearMissingTxn(&t, g.id)
	setLayoutTxn(&t, g.id, pool.PGNum)
	if err := o.apply(&t); err != nil {
		return res, nil, fmt.Errorf("merging into %v: %w", g.id, err)
	}

	// The store has it all; now the PGs in memory.
	l, err := logOf(res.Info, res.Entries)
	if err != nil {
		return res, nil, err
	}
	p, created := g.target, (*pg)(nil)
	if p == nil {
		p = newPG(o, res.Info, l, nil)
		created = p
	}
	if p.pool.PGNum == 0 && len(g.sources) > 0 {
		// Made here, or loaded: it has seen what its first source saw;
		// the new map's pg_num starts its first interval.
		first := g.sources[slices.Min(slices.Collect(maps.Keys(g.sources)))]
		p.epoch, p.pool, p.born = first.epoch, first.pool, first.born
	}
	p.info, p.log, p.layout = res.Info, l, pool.PGNum
	p.missing = map[objid.ID]bool{}
	if p.inconsistent == nil && len(g.sources) > 0 {
		p.inconsistent = map[objid.ID]scrub.Inconsistency{}
	}
	for _, s := range g.sources {
		maps.Copy(p.inconsistent, s.inconsistent)
	}
	return res, created, nil
}

package osd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/split"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// PG splitting. When a pool's pg_num grows, every OSD splits each PG of
// the pool it holds (primary, replica or stray) before the PG sees the
// map: the objects whose hash now maps to a child move to the child's
// collection, and the log, missing set and statistics divide with them,
// all in one store transaction (internal/osd/split decides what goes
// where). Parent and children then start a new interval where the parent
// was: while pgp_num lags pg_num, CRUSH places each child with its
// parent, so they peer among the same OSDs with nothing to copy. Requests
// sent with the older map are answered ESTALE (the interval ended, or the
// object is in another PG now) and resent to the child; a resent write
// finds its log entry there, so it is answered once, never applied twice.
//
// The pg_num a PG's collection is laid out for is kept in its meta
// object (layoutKey), so an OSD that was down while the pool grew, or
// stopped halfway, splits when it next sees a map.

// layoutKey is the meta object's omap key holding the pg_num the PG's
// collection is split for (uint32, little-endian).
const layoutKey = "split.pg_num"

func setLayoutTxn(t *objectstore.Transaction, id osdmap.PG, pgNum uint32) {
	t.OmapSetKeys(objectstore.PGCollection(id.Pool, id.Seed), pglog.MetaObject(id),
		map[string][]byte{layoutKey: binary.LittleEndian.AppendUint32(nil, pgNum)})
}

// pgNumChanged reports whether a PG that last saw pool was sees now: a
// change of pg_num splits or merges PGs, which starts a new interval.
func pgNumChanged(was osdmap.Pool, now *osdmap.Pool) bool {
	return was.PGNum != 0 && now != nil && now.PGNum != was.PGNum
}

// layoutOf returns the pg_num p's collection is laid out for, reading
// it from the store the first time. A PG that never recorded one (made
// before PGs could split, when pg_num could not change) is laid out for
// the pg_num it last saw, or else the pool's in m; the answer is
// recorded.
func (o *OSD) layoutOf(p *pg, pool *osdmap.Pool) (uint32, error) {
	p.mu.Lock()
	layout, seen := p.layout, p.pool.PGNum
	p.mu.Unlock()
	if layout != 0 {
		return layout, nil
	}
	vals, err := o.cfg.Store.OmapGetValues(o.ctx, p.coll, pglog.MetaObject(p.id), []string{layoutKey})
	if err != nil {
		return 0, err
	}
	if b, ok := vals[layoutKey]; ok && len(b) == 4 && binary.LittleEndian.Uint32(b) > 0 {
		layout = binary.LittleEndian.Uint32(b)
	} else {
		layout = cmp0(seen, pool.PGNum)
		var t objectstore.Transaction
		setLayoutTxn(&t, p.id, layout)
		if err := o.apply(&t); err != nil {
			return 0, err
		}
	}
	p.mu.Lock()
	p.layout = layout
	p.mu.Unlock()
	return layout, nil
}

// cmp0 returns a unless it is zero, and b then.
func cmp0(a, b uint32) uint32 {
	if a != 0 {
		return a
	}
	return b
}

// splitPGs splits every PG this OSD holds whose pool's pg_num in m is
// larger than its collection's layout, and adds the children to o.pgs.
// It runs in activate before any PG sees m.
func (o *OSD) splitPGs(m *osdmap.Map) {
	o.mu.Lock()
	ids := slices.SortedFunc(maps.Keys(o.pgs), osdmap.ComparePG)
	pgs := make([]*pg, len(ids))
	for i, id := range ids {
		pgs[i] = o.pgs[id]
	}
	o.mu.Unlock()
	for _, p := range pgs {
		pool := m.Pool(p.id.Pool)
		if pool == nil {
			continue
		}
		from, err := o.layoutOf(p, pool)
		if err != nil {
			o.log.Error("reading a PG's layout", "pg", p.id.String(), "err", err)
			continue
		}
		if pool.PGNum < from {
			o.log.Warn("pool's pg_num shrank below a PG's layout; PG merging is not supported", "pg", p.id.String(),
				"layout", from, "pg_num", pool.PGNum)
			continue
		}
		if pool.PGNum == from {
			continue
		}
		children, err := o.splitPG(p, from, pool.PGNum, uint64(m.Epoch()))
		if err != nil {
			o.log.Error("splitting a placement group", "pg", p.id.String(), "from", from, "to", pool.PGNum, "err", err)
			continue
		}
		o.log.Info("split a placement group", "pg", p.id.String(), "pg_num", fmt.Sprintf("%d -> %d", from, pool.PGNum),
			"children", len(children), "epoch", m.Epoch())
		o.mu.Lock()
		for _, c := range children {
			o.pgs[c.id] = c
		}
		o.setLogLimitLocked()
		o.mu.Unlock()
	}
}

// splitPG splits p, laid out for pg_num from, for pg_num to at epoch, and
// returns its children. The PG's interval ends first: its writes in
// flight and queued requests are answered ESTALE, and none starts until
// the PG sees the new map.
func (o *OSD) splitPG(p *pg, from, to uint32, epoch uint64) ([]*pg, error) {
	moves, err := split.Plan(p.id.Seed, from, to)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	stale := p.endIntervalLocked()
	if p.run != nil {
		close(p.run.done)
		p.run = nil
	}
	p.activated = false
	p.holdWatchesLocked()
	p.info.SameIntervalSince = epoch // requests of older maps are stale
	children, err := o.splitPGLocked(p, moves, to, epoch)
	p.mu.Unlock()
	abandonAll(stale, epoch)
	o.statsChanged()
	return children, err
}

func (o *OSD) splitPGLocked(p *pg, moves []split.Move, to uint32, epoch uint64) ([]*pg, error) {
	// Every write queued before must have applied: the listing below
	// counts their objects. A transaction queued now applies after them.
	var barrier objectstore.Transaction
	barrier.Touch(p.coll, pglog.MetaObject(p.id))
	if err := o.apply(&barrier); err != nil {
		return nil, err
	}
	ids, err := p.allObjects()
	if err != nil {
		return nil, err
	}
	objs := make([]split.Object, 0, len(ids))
	for _, id := range ids {
		st, err := o.cfg.Store.Stat(o.ctx, p.coll, id)
		if errors.Is(err, objectstore.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("stat %v: %w", id, err)
		}
		objs = append(objs, split.Object{ID: id, Size: st.Size})
	}
	logs := split.Log(p.log.Entries(), to)
	missing := split.Missing(slices.SortedFunc(maps.Keys(p.missing), objid.Compare), to)
	stats := split.Stats(objs, to)
	var t objectstore.Transaction
	infos := make([]pglog.Info, len(moves))
	for i, mv := range moves {
		child := osdmap.PG{Pool: p.id.Pool, Seed: mv.Child}
		if exists, err := o.cfg.Store.CollectionExists(o.ctx, objectstore.PGCollection(child.Pool, child.Seed)); err != nil {
			return nil, err
		} else if exists {
			return nil, fmt.Errorf("child pg %v already has a collection here", child)
		}
		info, err := split.Info(p.info, mv.Child, logs[mv.Child], stats[mv.Child], epoch)
		if err != nil {
			return nil, err
		}
		infos[i] = info
		pglog.CreateTxn(&t, info)
		t.SplitCollection(p.coll, objectstore.PGCollection(child.Pool, child.Seed), mv.Bits, mv.Child)
		if es := logs[mv.Child]; len(es) > 0 {
			pglog.AppendTxn(&t, child, es...)
		}
		pglog.SetMissingTxn(&t, child, missing[mv.Child]...)
		setLayoutTxn(&t, child, to)
	}
	childSeeds := make([]uint32, len(moves))
	for i, mv := range moves {
		childSeeds[i] = mv.Child
	}
	if err := o.splitIndexTxn(&t, p.id, to, childSeeds); err != nil {
		return nil, err
	}
	pinfo, err := split.Info(p.info, p.id.Seed, logs[p.id.Seed], stats[p.id.Seed], epoch)
	if err != nil {
		return nil, err
	}
	pglog.ReplaceTxn(&t, pinfo, logs[p.id.Seed])
	pglog.ClearMissingTxn(&t, p.id)
	pglog.SetMissingTxn(&t, p.id, missing[p.id.Seed]...)
	setLayoutTxn(&t, p.id, to)
	if err := o.apply(&t); err != nil {
		return nil, err
	}

	// The store has it all; now the PGs in memory.
	plog, err := logOf(pinfo, logs[p.id.Seed])
	if err != nil {
		return nil, err
	}
	p.info, p.log, p.layout = pinfo, plog, to
	p.missing = setOf(missing[p.id.Seed])
	for id := range p.inconsistent {
		if split.Where(id.Hash, to) != p.id.Seed {
			delete(p.inconsistent, id)
		}
	}
	children := make([]*pg, len(moves))
	for i, info := range infos {
		l, err := logOf(info, logs[info.PG.Seed])
		if err != nil {
			return nil, err
		}
		c := newPG(o, info, l, setOf(missing[info.PG.Seed]))
		// The child has seen what its parent saw; the new map's pg_num
		// and acting set start its first interval.
		c.epoch, c.pool, c.layout = p.epoch, p.pool, to
		c.born = p.born
		children[i] = c
	}
	return children, nil
}

// logOf builds the in-memory log of a PG's share of a split.
func logOf(info pglog.Info, entries []pglog.Entry) (*pglog.Log, error) {
	l := pglog.NewLog(info.LogTail)
	for _, e := range entries {
		if err := l.Append(e); err != nil {
			return nil, fmt.Errorf("pg %v: %w", info.PG, err)
		}
	}
	return l, nil
}

func setOf(ids []objid.ID) map[objid.ID]bool {
	out := make(map[objid.ID]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

package rados

import (
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// target is where an op goes under one map: its PG and the PG's acting
// primary, with the address the map gives it. This file decides; the
// objecter (objecter.go) sends.
type target struct {
	pg      osdmap.PG
	osd     int32 // -1: the PG has no primary up
	addr    string
	upFrom  osdmap.Epoch
	noPool  bool // the pool is not in the map
	checked bool // computed at least once
	// acting is the PG's acting set (the primary among them), where a
	// read may go under a read policy other than primary (readpolicy.go).
	acting []int32
}

// opPG returns the PG an op goes to in m, reduced to the pool's pg_num;
// false if its pool is not in m.
func opPG(m *osdmap.Map, object objid.ID, pg osdmap.PG, fixed bool) (osdmap.PG, bool) {
	if !fixed {
		p, err := m.ObjectIDToPG(object)
		return p, err == nil
	}
	pool := m.Pool(pg.Pool)
	if pool == nil {
		return osdmap.PG{}, false
	}
	return pool.RawPGToPG(pg), true
}

// pgTarget maps the reduced PG pg, whose pool m has, to its target.
func pgTarget(m *osdmap.Map, s *osdmap.Scratch, pg osdmap.PG) target {
	t := target{osd: -1, checked: true}
	mp, err := m.PGToUpActing(pg, s)
	if err != nil {
		t.noPool = true
		return t
	}
	t.pg = mp.PG
	for _, id := range mp.Acting {
		if id >= 0 && m.IsUp(id) {
			t.acting = append(t.acting, id)
		}
	}
	if p := mp.ActingPrimary; p >= 0 && m.IsUp(p) {
		o := m.OSD(p)
		t.osd, t.addr, t.upFrom = p, o.Addr, o.UpFrom
	}
	return t
}

// targetCache remembers the targets of the PGs ops went to under one map,
// which a map never changes: running CRUSH for every op was 4-5% of the
// client's CPU under 4 KiB reads (docs/benchmarks/2026-11-27.md,
// "Session 23"). A new map empties it. Not safe for concurrent use
// (the objecter's lock guards it).
type targetCache struct {
	m    *osdmap.Map
	byPG map[osdmap.PG]target
}

// get returns an op's target in m: the PG of object (or pg when fixed,
// for listings) and its acting primary, if that OSD is up; from the cache
// if m's target for the PG is in it.
func (c *targetCache) get(m *osdmap.Map, s *osdmap.Scratch, object objid.ID, pg osdmap.PG, fixed bool) target {
	pg, ok := opPG(m, object, pg, fixed)
	if !ok {
		return target{osd: -1, checked: true, noPool: true}
	}
	if c.m != m || c.byPG == nil {
		c.m, c.byPG = m, make(map[osdmap.PG]target)
	}
	if t, ok := c.byPG[pg]; ok {
		return t
	}
	t := pgTarget(m, s, pg)
	c.byPG[pg] = t
	return t
}

// needsResend reports whether an op sent to old must be sent again under
// a map that targets it at new: the primary changed, or went down, or
// came back in a new incarnation or at a new address.
func needsResend(old, new target) bool {
	return old.osd != new.osd || old.addr != new.addr || old.upFrom != new.upFrom || old.pg != new.pg
}

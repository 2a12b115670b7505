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
}

// calcTarget computes an op's target in m: the PG of object (or pg when
// fixed, for listings) and its acting primary, if that OSD is up.
func calcTarget(m *osdmap.Map, s *osdmap.Scratch, object objid.ID, pg osdmap.PG, fixed bool) target {
	t := target{osd: -1, checked: true}
	if !fixed {
		p, err := m.ObjectIDToPG(object)
		if err != nil {
			t.noPool = true
			return t
		}
		pg = p
	} else if m.Pool(pg.Pool) == nil {
		t.noPool = true
		return t
	}
	mp, err := m.PGToUpActing(pg, s)
	if err != nil {
		t.noPool = true
		return t
	}
	t.pg = mp.PG
	if p := mp.ActingPrimary; p >= 0 && m.IsUp(p) {
		o := m.OSD(p)
		t.osd, t.addr, t.upFrom = p, o.Addr, o.UpFrom
	}
	return t
}

// needsResend reports whether an op sent to old must be sent again under
// a map that targets it at new: the primary changed, or went down, or
// came back in a new incarnation or at a new address.
func needsResend(old, new target) bool {
	return old.osd != new.osd || old.addr != new.addr || old.upFrom != new.upFrom || old.pg != new.pg
}

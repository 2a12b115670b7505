package osdmon

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// This file holds the fullness of OSDs and pools: the ratios' commands,
// "osd full-states" (which pgmon's Tick sends when the OSDs' usage
// crosses a ratio) and the pool flag full, which every proposal keeps in
// step with the OSDs' states.

// ratioCommands maps each "osd set-*-ratio" prefix to the ratio it sets.
var ratioCommands = map[string]string{
	"osd set-full-ratio":         "full_ratio",
	"osd set-backfillfull-ratio": "backfillfull_ratio",
	"osd set-nearfull-ratio":     "nearfull_ratio",
}

// prepareSetRatio handles "osd set-full-ratio ratio",
// "osd set-backfillfull-ratio ratio" and "osd set-nearfull-ratio ratio".
// The ratio must be in (0, 1]; ratios out of order are accepted, as Ceph
// does, and raise OSD_OUT_OF_ORDER_FULL.
func (s *Service) prepareSetRatio(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name := ratioCommands[c.Prefix]
	f, err := c.Float("ratio")
	if err != nil {
		return bad(err)
	}
	r := float32(f)
	if math.IsNaN(f) || f <= 0 || f > 1 {
		return nil, moncmd.Errorf(moncmd.EINVAL, "%s: ratio %v out of (0, 1]", c.Prefix, f)
	}
	cur := s.m.Ratios()
	t := s.begin(now)
	var old float32
	switch name {
	case "full_ratio":
		old, t.inc.NewFullRatio = cur.Full, &r
	case "backfillfull_ratio":
		old, t.inc.NewBackfillFullRatio = cur.BackfillFull, &r
	default:
		old, t.inc.NewNearFullRatio = cur.NearFull, &r
	}
	if old == r {
		return nil, moncmd.Reply{Status: fmt.Sprintf("%s is already %s", name, osdmap.FormatRatio(r))}
	}
	msg := fmt.Sprintf("%s set to %s", name, osdmap.FormatRatio(r))
	next := cur
	switch name {
	case "full_ratio":
		next.Full = r
	case "backfillfull_ratio":
		next.BackfillFull = r
	default:
		next.NearFull = r
	}
	if !next.InOrder() {
		msg += fmt.Sprintf("; warning: ratios out of order (nearfull %s, backfillfull %s, full %s; want nearfull <= backfillfull <= full): OSD_OUT_OF_ORDER_FULL",
			osdmap.FormatRatio(next.NearFull), osdmap.FormatRatio(next.BackfillFull), osdmap.FormatRatio(next.Full))
	}
	return t.propose(t.status(msg))
}

// prepareFullStates handles "osd full-states [full] [backfillfull]
// [nearfull]": it sets each listed OSD's fullness bit (OSDFull,
// OSDBackfillFull, OSDNearFull: one of them) and clears the bits of every
// other OSD. The monitors' pgmon sends it when the OSDs' reported usage
// crosses a ratio; an operator may send it too, but the next report puts
// the states back. Nothing is proposed when the states are in place.
func (s *Service) prepareFullStates(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	want := map[int32]osdmap.OSDState{}
	for _, l := range []struct {
		arg string
		bit osdmap.OSDState
	}{{"full", osdmap.OSDFull}, {"backfillfull", osdmap.OSDBackfillFull}, {"nearfull", osdmap.OSDNearFull}} {
		var ids []int32
		if c.StrOr(l.arg, "") != "" {
			var err error
			if ids, err = osdIDs(c, l.arg); err != nil {
				return bad(err)
			}
		}
		for _, id := range ids {
			if _, dup := want[id]; dup {
				return nil, moncmd.Errorf(moncmd.EINVAL, "%s: osd.%d is in two states", c.Prefix, id)
			}
			want[id] = l.bit
		}
	}
	t := s.begin(now)
	var changes []string
	for id := range t.base.MaxOSD() {
		o := t.base.OSD(id)
		if !o.Exists() {
			continue
		}
		bit := want[id]
		if o.State&osdmap.FullnessBits == bit {
			continue
		}
		o.State = o.State&^osdmap.FullnessBits | bit
		_ = t.inc.SetOSD(t.base, id, o) // id exists
		state := bit.String()
		if bit == 0 {
			state = "not full"
		}
		changes = append(changes, fmt.Sprintf("osd.%d is %s", id, state))
	}
	if len(changes) == 0 {
		return t.unchanged()
	}
	return t.propose(t.status(strings.Join(changes, ", ")))
}

// syncPoolFull adds to t the pools whose flag full must change in next,
// the map t makes: a pool is full when an OSD its CRUSH rule can place
// data on is in and marked full (Ceph's "pool is full" rule). Every
// proposal calls it, so the flag follows OSD states, reweights, CRUSH
// edits and new pools alike.
func (t *txn) syncPoolFull(next *osdmap.Map) bool {
	changed := false
	for _, p := range next.Pools() {
		full := len(next.PoolFullOSDs(&p)) > 0
		if full == (p.Flags&osdmap.PoolFull != 0) {
			continue
		}
		if full {
			p.Flags |= osdmap.PoolFull
		} else {
			p.Flags &^= osdmap.PoolFull
		}
		p.LastChange = t.inc.Epoch
		i := slices.IndexFunc(t.inc.NewPools, func(q osdmap.Pool) bool { return q.ID == p.ID })
		if i >= 0 {
			t.inc.NewPools[i] = p
		} else {
			t.inc.NewPools = append(t.inc.NewPools, p)
		}
		changed = true
	}
	return changed
}

package pgmon

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// callerArg is the argument the monitor sets to the entity that sent a
// command (mon.CallerArg; pgmon cannot import the driver).
const callerArg = "_caller"

// prepareReport answers "pg report report=BYTES": it proposes the PGs
// and usage that differ from what is stored, or nothing.
func (s *Service) prepareReport(c moncmd.Command) ([]byte, moncmd.Reply) {
	raw, err := c.Str("report")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	r, err := wire.DecodePGStatsReport([]byte(raw))
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "pg report: not a PG stats report: %v", err)
	}
	// An OSD speaks for itself only; an operator's tools may speak for
	// any.
	if caller := c.StrOr(callerArg, ""); strings.HasPrefix(caller, "osd.") && caller != fmt.Sprintf("osd.%d", r.OSD) {
		return nil, moncmd.Errorf(moncmd.EACCES, "pg report: %s may not report for osd.%d", caller, r.OSD)
	}
	m := s.cfg.Map()
	if m == nil {
		return nil, errNoMap()
	}
	if !m.Exists(r.OSD) {
		return nil, moncmd.Errorf(moncmd.ENOENT, "pg report: osd.%d does not exist", r.OSD)
	}
	changed := wire.PGStatsReport{OSD: r.OSD, Epoch: r.Epoch, Total: r.Total, Used: r.Used, Available: r.Available, Load: r.Load}
	for _, st := range r.PGs {
		if st, ok := s.accept(m, r, st); ok && !s.same(r.OSD, st) {
			changed.PGs = append(changed.PGs, st)
		}
	}
	u, ok := s.st.osds[r.OSD]
	if len(changed.PGs) == 0 && ok && u.total == r.Total && u.used == r.Used && u.avail == r.Available && u.load == r.Load {
		return nil, moncmd.Reply{Status: fmt.Sprintf("osd.%d: pg stats unchanged", r.OSD)}
	}
	return proposal{op: opReport, report: changed}.encode(), moncmd.Reply{}
}

// accept returns st as it would be stored from report r, and whether it
// may replace what is stored: its PG must exist in m, and its reported
// epoch must not be older than the stored one. A PG cannot have been
// reported at an epoch later than the map its report was made with (nor
// at none), so the epoch is bounded by the report's.
func (s *Service) accept(m *osdmap.Map, r wire.PGStatsReport, st wire.PGStat) (wire.PGStat, bool) {
	if !pgExists(m, st.PG) {
		return st, false
	}
	if st.ReportedEpoch == 0 || st.ReportedEpoch > r.Epoch {
		st.ReportedEpoch = r.Epoch
	}
	if cur, ok := s.st.pgs[st.PG]; ok && st.ReportedEpoch < cur.stat.ReportedEpoch {
		return st, false
	}
	return st, true
}

// same reports whether st from reporter is what is stored. Comparing
// encodings keeps it right as PGStat grows fields.
func (s *Service) same(reporter int32, st wire.PGStat) bool {
	cur, ok := s.st.pgs[st.PG]
	if !ok || cur.reporter != reporter {
		return false
	}
	one := func(st wire.PGStat) []byte { return wire.PGStatsReport{PGs: []wire.PGStat{st}}.Encode() }
	return bytes.Equal(one(cur.stat), one(st))
}

// pgExists reports whether m has pg.
func pgExists(m *osdmap.Map, pg osdmap.PG) bool {
	p := m.Pool(pg.Pool)
	return p != nil && pg.Seed < p.PGNum
}

// applyReport stores the PGs of r that are still acceptable and r's
// usage, stamped now, and drops what the map no longer has.
func (s *Service) applyReport(b *monstore.Batch, r wire.PGStatsReport, now time.Time) (moncmd.Reply, error) {
	m := s.cfg.Map()
	if m == nil || !m.Exists(r.OSD) {
		return moncmd.Errorf(moncmd.ENOENT, "pg report: osd.%d does not exist", r.OSD), nil
	}
	var pgs []pgEntry
	for _, st := range r.PGs {
		if st, ok := s.accept(m, r, st); ok {
			e := pgEntry{stat: st, reporter: r.OSD, updated: now}
			pgs = append(pgs, e)
			_ = b.Put(ServiceName, pgKey(st.PG), e.encode())
		}
	}
	usage := osdEntry{total: r.Total, used: r.Used, avail: r.Available, load: r.Load, updated: now}
	_ = b.Put(ServiceName, osdKey(r.OSD), usage.encode(r.OSD))
	gonePGs, goneOSDs := s.gone(m)
	for _, pg := range gonePGs {
		_ = b.Delete(ServiceName, pgKey(pg))
	}
	for _, id := range goneOSDs {
		_ = b.Delete(ServiceName, osdKey(id))
	}
	if err := b.Err(); err != nil {
		return moncmd.Reply{}, fmt.Errorf("pgmon: apply report of osd.%d: %w", r.OSD, err)
	}
	for _, e := range pgs {
		s.st.pgs[e.stat.PG] = e
	}
	s.st.osds[r.OSD] = usage
	for _, pg := range gonePGs {
		delete(s.st.pgs, pg)
	}
	for _, id := range goneOSDs {
		delete(s.st.osds, id)
	}
	s.st.version++
	s.prog.add(now, s.st.left())
	s.log.Debug("pg stats", "osd", r.OSD, "epoch", r.Epoch, "pgs", len(pgs), "dropped", len(gonePGs))
	return moncmd.Reply{Status: fmt.Sprintf("osd.%d: %d of %d pg stats updated", r.OSD, len(pgs), len(r.PGs))}, nil
}

// gone returns, sorted, the stored PGs whose pool was deleted or shrunk
// and the stored OSDs that no longer exist in m.
func (s *Service) gone(m *osdmap.Map) ([]osdmap.PG, []int32) {
	var pgs []osdmap.PG
	for pg := range s.st.pgs {
		if !pgExists(m, pg) {
			pgs = append(pgs, pg)
		}
	}
	slices.SortFunc(pgs, osdmap.ComparePG)
	var osds []int32
	for _, id := range slices.Sorted(maps.Keys(s.st.osds)) {
		if !m.Exists(id) {
			osds = append(osds, id)
		}
	}
	return pgs, osds
}

package pgmon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// This file decides the OSDs' fullness from the usage they report and
// raises the fullness health checks. The decision is pure: Tick compares
// what the usage says under the map's ratios with the states the map
// holds and, only when they differ, asks osdmon (which owns the map) to
// change them with "osd full-states"; osdmon also sets the flag full of
// the pools that use a full OSD. A steady cluster proposes nothing.

// fullStates returns, in id order, the existing OSDs of m whose stored
// usage puts them at or above each ratio of m (each OSD in one list at
// most). OSDs without a usage record are in none.
func (s *Service) fullStates(m *osdmap.Map) (full, backfillfull, nearfull []int32) {
	r := m.Ratios()
	for id := range m.MaxOSD() {
		u, ok := s.st.osds[id]
		if !ok || !m.Exists(id) {
			continue
		}
		switch r.Fullness(u.used, u.total) {
		case osdmap.OSDFull:
			full = append(full, id)
		case osdmap.OSDBackfillFull:
			backfillfull = append(backfillfull, id)
		case osdmap.OSDNearFull:
			nearfull = append(nearfull, id)
		}
	}
	return full, backfillfull, nearfull
}

// fullStatesCommand returns the "osd full-states" command that brings
// m's OSD states in step with the stored usage, or false when they are.
func (s *Service) fullStatesCommand(m *osdmap.Map) (moncmd.Command, bool) {
	full, backfillfull, nearfull := s.fullStates(m)
	want := map[int32]osdmap.OSDState{}
	for _, l := range []struct {
		ids []int32
		bit osdmap.OSDState
	}{{full, osdmap.OSDFull}, {backfillfull, osdmap.OSDBackfillFull}, {nearfull, osdmap.OSDNearFull}} {
		for _, id := range l.ids {
			want[id] = l.bit
		}
	}
	same := true
	for id := range m.MaxOSD() {
		if o := m.OSD(id); o.Exists() && o.State&osdmap.FullnessBits != want[id] {
			same = false
			break
		}
	}
	if same {
		return moncmd.Command{}, false
	}
	return moncmd.New("osd full-states", "full", joinIDs(full), "backfillfull", joinIDs(backfillfull),
		"nearfull", joinIDs(nearfull)), true
}

// Tick implements moncmd.Service: it asks osdmon to mark OSDs full,
// backfillfull or nearfull, or to clear them, when their usage crossed a
// ratio since the map last said.
func (s *Service) Tick(now time.Time) []moncmd.Command {
	m := s.cfg.Map()
	if m == nil {
		return nil
	}
	if c, ok := s.fullStatesCommand(m); ok {
		return []moncmd.Command{c}
	}
	if c, ok := s.loadsCommand(m, now); ok { // loads.go
		return []moncmd.Command{c}
	}
	return nil
}

func joinIDs(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ",")
}

// usedPercent formats OSD id's stored usage as "96.3% used", or "" if
// none is stored.
func (s *Service) usedPercent(id int32) string {
	u, ok := s.st.osds[id]
	if !ok || u.total == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f%% used", 100*float64(u.used)/float64(u.total))
}

// fullness returns the fullness checks of m, as Ceph names them, from the
// states the map holds (what the cluster enforces), each detail line with
// the OSD's usage:
//
//   - OSD_FULL (error): "osd.1 is full (96.3% used, full_ratio 0.95)"
//   - OSD_BACKFILLFULL (warn): "osd.1 is backfill full (91.0% used,
//     backfillfull_ratio 0.9)"
//   - OSD_NEARFULL (warn): "osd.1 is near full (86.2% used,
//     nearfull_ratio 0.85)"
//   - POOL_FULL (warn): "pool 'rbd' is full (no space): osd.1 is full"
func (s *Service) fullness(m *osdmap.Map) []health.Check {
	var checks []health.Check
	for _, c := range []struct {
		code, summary, word string
		bit                 osdmap.OSDState
		sev                 health.Status
		ratio               float32
	}{
		{"OSD_FULL", "full", "full", osdmap.OSDFull, health.Err, m.Ratios().Full},
		{"OSD_BACKFILLFULL", "backfillfull", "backfill full", osdmap.OSDBackfillFull, health.Warn, m.Ratios().BackfillFull},
		{"OSD_NEARFULL", "nearfull", "near full", osdmap.OSDNearFull, health.Warn, m.Ratios().NearFull},
	} {
		var lines []string
		for id := range m.MaxOSD() {
			o := m.OSD(id)
			if !o.Exists() || o.State&c.bit == 0 {
				continue
			}
			line := fmt.Sprintf("osd.%d is %s", id, c.word)
			if p := s.usedPercent(id); p != "" {
				line += fmt.Sprintf(" (%s, %s_ratio %s)", p, c.summary, osdmap.FormatRatio(c.ratio))
			}
			lines = append(lines, line)
		}
		if len(lines) > 0 {
			checks = append(checks, health.Check{Code: c.code, Severity: c.sev,
				Summary: fmt.Sprintf("%d %s osd(s)", len(lines), c.summary), Detail: capDetail(lines)})
		}
	}
	var pools []string
	for _, p := range m.Pools() {
		if p.Flags&osdmap.PoolFull == 0 {
			continue
		}
		line := fmt.Sprintf("pool '%s' is full (no space)", p.Name)
		if ids := m.PoolFullOSDs(&p); len(ids) > 0 {
			names := make([]string, len(ids))
			for i, id := range ids {
				names[i] = fmt.Sprintf("osd.%d", id)
			}
			line += ": " + strings.Join(names, ", ") + " full"
		}
		pools = append(pools, line)
	}
	if len(pools) > 0 {
		checks = append(checks, health.Check{Code: "POOL_FULL", Severity: health.Warn,
			Summary: fmt.Sprintf("%d pool(s) full", len(pools)), Detail: capDetail(pools)})
	}
	return checks
}

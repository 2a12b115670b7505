package osdmon

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Health returns the OSD map's health checks at now, as Ceph names them:
//
//   - OSD_DOWN (warn): OSDs that are down but still in, with their CRUSH
//     location and how long they have been down.
//   - OSD_HOST_DOWN (warn): hosts whose OSDs (at least one) are all down.
//   - OSDMAP_FLAGS (warn): cluster flags that are set.
//   - POOL_NO_REDUNDANCY (warn): pools with size 1.
//   - TOO_FEW_OSDS (warn): fewer OSDs than the largest pool's size.
//   - OSD_OUT_OF_ORDER_FULL (error): the fullness ratios are not
//     nearfull <= backfillfull <= full.
//
// The fullness checks that need the OSDs' usage (OSD_FULL,
// OSD_BACKFILLFULL, OSD_NEARFULL, POOL_FULL) are pgmon's.
//
// It reads the applied state only and returns nil before the map exists.
func (s *Service) Health(now time.Time) []health.Check {
	if s.m == nil {
		return nil
	}
	m := s.m
	var checks []health.Check
	var down []string
	for id := range m.MaxOSD() {
		o := m.OSD(id)
		if !o.Exists() || o.IsUp() || !o.IsIn() {
			continue
		}
		line := fmt.Sprintf("osd.%d (%s) is down", id, locString(location(m.Crush(), id)))
		if since := s.meta[id].DownSince; !since.IsZero() && now.After(since) {
			line += fmt.Sprintf(" (for %v)", now.Sub(since).Round(time.Second))
		}
		down = append(down, line)
	}
	if len(down) > 0 {
		checks = append(checks, health.Check{Code: "OSD_DOWN", Severity: health.Warn,
			Summary: fmt.Sprintf("%d osds down", len(down)), Detail: down})
	}
	if c, ok := hostsDown(m); ok {
		checks = append(checks, c)
	}
	if f := m.Flags(); f != 0 {
		checks = append(checks, health.Check{Code: "OSDMAP_FLAGS", Severity: health.Warn,
			Summary: f.String() + " flag(s) set"})
	}
	var single []string
	largest := 0
	for _, p := range m.Pools() {
		largest = max(largest, p.Size)
		if p.Size == 1 {
			single = append(single, fmt.Sprintf("pool '%s' has no replicas configured", p.Name))
		}
	}
	if len(single) > 0 {
		checks = append(checks, health.Check{Code: "POOL_NO_REDUNDANCY", Severity: health.Warn,
			Summary: fmt.Sprintf("%d pool(s) have no replicas configured", len(single)), Detail: single})
	}
	if c, ok := ratiosOutOfOrder(m.Ratios()); ok {
		checks = append(checks, c)
	}
	if exist, _, _ := m.NumOSDs(); exist < largest {
		checks = append(checks, health.Check{Code: "TOO_FEW_OSDS", Severity: health.Warn,
			Summary: fmt.Sprintf("OSD count %d < largest pool size %d", exist, largest)})
	}
	return checks
}

// hostsDown returns OSD_HOST_DOWN for the hosts whose existing OSDs are
// all down.
func hostsDown(m *osdmap.Map) (health.Check, bool) {
	cm := m.Crush()
	var lines []string
	osds := 0
	for _, b := range cm.Buckets() {
		if b.IsShadow() || cm.TypeName(b.Type) != "host" {
			continue
		}
		n, up := 0, false
		for _, item := range b.Items {
			if item >= 0 && m.Exists(item) {
				n++
				up = up || m.IsUp(item)
			}
		}
		if n == 0 || up {
			continue
		}
		osds += n
		lines = append(lines, fmt.Sprintf("host %s (%s) (%d osds) is down", b.Name, locString(location(cm, b.ID)), n))
	}
	if len(lines) == 0 {
		return health.Check{}, false
	}
	slices.SortFunc(lines, strings.Compare)
	return health.Check{Code: "OSD_HOST_DOWN", Severity: health.Warn,
		Summary: fmt.Sprintf("%d host (%d osds) down", len(lines), osds), Detail: lines}, true
}

// HealthChecks returns Health(now); it makes the service a health source
// of the monitor's driver (internal/mon's HealthSource).
func (s *Service) HealthChecks(now time.Time) []health.Check { return s.Health(now) }

// ratiosOutOfOrder returns OSD_OUT_OF_ORDER_FULL when the ratios do not
// rise from nearfull to backfillfull to full, one line per pair out of
// order. Ceph raises it as an error: OSDs would be marked full before
// nearfull warns, or receive backfill they cannot hold.
func ratiosOutOfOrder(r osdmap.Ratios) (health.Check, bool) {
	var lines []string
	if r.BackfillFull < r.NearFull {
		lines = append(lines, fmt.Sprintf("backfillfull_ratio (%s) < nearfull_ratio (%s)", osdmap.FormatRatio(r.BackfillFull), osdmap.FormatRatio(r.NearFull)))
	}
	if r.Full < r.BackfillFull {
		lines = append(lines, fmt.Sprintf("full_ratio (%s) < backfillfull_ratio (%s)", osdmap.FormatRatio(r.Full), osdmap.FormatRatio(r.BackfillFull)))
	}
	if len(lines) == 0 {
		return health.Check{}, false
	}
	return health.Check{Code: "OSD_OUT_OF_ORDER_FULL", Severity: health.Err,
		Summary: "full ratio(s) out of order", Detail: lines}, true
}

package autoscalemon

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/autoscale"
	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/osdmap"
)

// maxDetail bounds the detail lines of a check (Ceph's
// mon_health_max_detail).
const maxDetail = 50

// HealthChecks returns the autoscaler's checks, as Ceph names them:
//
//   - POOL_TOO_FEW_PGS (warn): pools in mode warn whose pg_num is more
//     than pg_autoscaler_threshold below their ideal.
//   - POOL_TOO_MANY_PGS (warn): pools in mode warn more than the
//     threshold above it, and pools in mode on that the leader cannot
//     shrink (the OSDs do not merge PGs yet).
//
// A pool in mode on with too few PGs raises nothing: the leader raises
// its pg_num at its next round. It makes the service a health source of
// the monitor's driver (internal/mon's HealthSource).
func (s *Service) HealthChecks(time.Time) []health.Check {
	_, st := s.statuses()
	var few, many []string
	for _, p := range st {
		if !autoscale.Warned(p, s.cfg.CanShrink) {
			continue
		}
		line := fmt.Sprintf("pool %s has %d placement groups, should have %d", p.Name, p.PGNum, p.Ideal)
		switch {
		case p.TooFew():
			line += fmt.Sprintf(" (cuttle osd pool set %s pg_num %d, or pg_autoscale_mode on)", p.Name, p.Ideal)
		case s.cfg.CanShrink:
			line += fmt.Sprintf(" (cuttle osd pool set %s pg_num %d, or pg_autoscale_mode on)", p.Name, p.Ideal)
		case p.Mode == osdmap.AutoscaleOn:
			line += fmt.Sprintf(" (pg_autoscale_mode on, but pg_num cannot shrink until the OSDs merge PGs; "+
				"cuttle osd pool set %s pg_autoscale_mode off silences this)", p.Name)
		default:
			line += fmt.Sprintf(" (pg_num cannot shrink until the OSDs merge PGs; cuttle osd pool set %s pg_autoscale_mode off silences this)", p.Name)
		}
		if p.TooFew() {
			few = append(few, line)
		} else {
			many = append(many, line)
		}
	}
	var checks []health.Check
	if len(few) > 0 {
		checks = append(checks, health.Check{Code: "POOL_TOO_FEW_PGS", Severity: health.Warn,
			Summary: fmt.Sprintf("%d pools have too few placement groups", len(few)), Detail: limit(few)})
	}
	if len(many) > 0 {
		checks = append(checks, health.Check{Code: "POOL_TOO_MANY_PGS", Severity: health.Warn,
			Summary: fmt.Sprintf("%d pools have too many placement groups", len(many)), Detail: limit(many)})
	}
	return checks
}

// limit keeps the first maxDetail lines and says how many it left out.
func limit(lines []string) []string {
	if len(lines) <= maxDetail {
		return lines
	}
	return append(lines[:maxDetail:maxDetail], fmt.Sprintf("(%d more)", len(lines)-maxDetail))
}

package pgmon

import (
	"fmt"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Limits of detail lines: per check (Ceph's mon_health_max_detail), and
// object names per inconsistent PG.
const (
	maxDetail       = 50
	maxObjectsNamed = 10
)

// HealthChecks returns the PG checks at now, as Ceph names them:
//
//   - PG_AVAILABILITY (warn): PGs that are not active (unknown, peering,
//     down, incomplete) or stale; one line per PG.
//   - PG_DEGRADED (warn): degraded object copies, degraded or undersized
//     PGs; one line per PG.
//   - PG_DAMAGED (error): PGs a scrub found inconsistent, with their
//     damaged objects.
//   - OBJECT_MISPLACED (warn): object copies on OSDs other than those
//     CRUSH chose.
//   - OBJECT_UNFOUND (warn): objects no reachable OSD holds; one line
//     per PG.
//
// A cluster whose PGs are all active+clean has none. It makes the service
// a health source of the monitor's driver (internal/mon's HealthSource).
func (s *Service) HealthChecks(now time.Time) []health.Check {
	views := s.views()
	sum := s.summarize()
	var checks []health.Check
	for _, c := range []func() (health.Check, bool){
		func() (health.Check, bool) { return availability(views, now) },
		func() (health.Check, bool) { return degraded(views, sum) },
		func() (health.Check, bool) { return damaged(views) },
		func() (health.Check, bool) { return misplaced(sum) },
		func() (health.Check, bool) { return unfound(views, sum) },
	} {
		if c, ok := c(); ok {
			checks = append(checks, c)
		}
	}
	if m := s.cfg.Map(); m != nil {
		checks = append(checks, s.fullness(m)...)
	}
	return checks
}

// availability is PG_AVAILABILITY: PGs that cannot serve I/O, each
// with why, so that an operator whose writes hang learns the cause from
// `health detail`: a PG below its pool's min_size says how many copies
// are up and, when CRUSH placed fewer than the pool's size, that its rule
// cannot place them; a peering PG says since when; a down PG what it
// waits for; an unknown PG that its primary has not reported (or that no
// OSD is up to hold it). Stale PGs count as inactive: nobody vouches for
// their state.
func availability(views []pgView, now time.Time) (health.Check, bool) {
	var inactive, down, stale, peering, belowMin int
	var lines []string
	for i := range views {
		v := &views[i]
		isDown, isStale := v.has("down"), v.stale != "" || v.has("stale")
		if v.has("active") && !isStale {
			continue
		}
		inactive++
		acting := osdmap.FormatOSDs(v.stat.Acting)
		since := max(now.Sub(v.updated), 0).Round(time.Second)
		var line string
		switch {
		case isDown:
			down++
			line = fmt.Sprintf("pg %s is down, acting %s", v.stat.PG, acting)
			if len(v.stat.BlockedBy) > 0 {
				line += ", blocked by " + osdmap.FormatOSDs(v.stat.BlockedBy)
			}
			if v.stat.DownReason != "" {
				line += " (" + v.stat.DownReason + ")"
			}
			if isStale {
				stale++
			}
		case isStale:
			stale++
			line = fmt.Sprintf("pg %s is stuck stale, current state %s, last acting %s (%s)", v.stat.PG, v.state, acting, v.stale)
		case v.reporter < 0:
			line = unknownLine(v)
		case v.has("peered"):
			belowMin++
			line = fmt.Sprintf("pg %s is %s for %v: %s, acting %s", v.stat.PG, v.state, since, belowMinReason(v), acting)
		case v.has("peering"):
			peering++
			line = fmt.Sprintf("pg %s is %s for %v, acting %s: its primary osd.%d is asking the OSDs that may hold its newest writes",
				v.stat.PG, v.state, since, acting, v.reporter)
		default:
			line = fmt.Sprintf("pg %s is stuck inactive for %v, current state %s, last acting %s", v.stat.PG,
				since, v.state, acting)
		}
		lines = append(lines, line)
	}
	if inactive == 0 {
		return health.Check{}, false
	}
	parts := []string{plural(inactive, "pg") + " inactive"}
	if down > 0 {
		parts = append(parts, plural(down, "pg")+" down")
	}
	if peering > 0 {
		parts = append(parts, plural(peering, "pg")+" peering")
	}
	if belowMin > 0 {
		parts = append(parts, plural(belowMin, "pg")+" below min_size")
	}
	if stale > 0 {
		parts = append(parts, plural(stale, "pg")+" stale")
	}
	return health.Check{Code: "PG_AVAILABILITY", Severity: health.Warn,
		Summary: "Reduced data availability: " + strings.Join(parts, ", "), Detail: capDetail(lines)}, true
}

// unknownLine is the detail of a PG no OSD has reported.
func unknownLine(v *pgView) string {
	if v.stat.Primary < 0 {
		return fmt.Sprintf("pg %s is unknown: no OSD is up to serve it, acting %s (are the OSDs up and in? cuttle osd tree)",
			v.stat.PG, osdmap.FormatOSDs(v.stat.Acting))
	}
	return fmt.Sprintf("pg %s is unknown: no report from its primary osd.%d yet, acting %s", v.stat.PG, v.stat.Primary,
		osdmap.FormatOSDs(v.stat.Acting))
}

// belowMinReason says why a peered PG is not active: fewer copies up
// than its pool's min_size, and whether CRUSH could not place them.
func belowMinReason(v *pgView) string {
	copies := countOSDs(v.stat.Acting)
	r := fmt.Sprintf("%d of %d copies up, below min_size %d", copies, v.size, v.minSize)
	if placed := countOSDs(v.stat.Up); placed < v.size {
		r += fmt.Sprintf("; CRUSH rule %s places only %d (too few failure domains for size %d?"+
			" cuttle osd tree; cuttle osd pool set %s crush_rule RULE)", v.rule, placed, v.size, v.pool)
	}
	return r
}

// countOSDs counts the OSDs of a PG's set, holes left out.
func countOSDs(osds []int32) int {
	n := 0
	for _, o := range osds {
		if o != crush.ItemNone && o >= 0 {
			n++
		}
	}
	return n
}

// degraded is PG_DEGRADED: data with fewer copies than the pool's size.
func degraded(views []pgView, sum summary) (health.Check, bool) {
	var pgs, undersized int
	var lines []string
	for i := range views {
		v := &views[i]
		isDegraded, isUndersized := v.has("degraded") || v.stat.Degraded > 0, v.has("undersized")
		if !isDegraded && !isUndersized {
			continue
		}
		if isDegraded {
			pgs++
		}
		if isUndersized {
			undersized++
		}
		line := fmt.Sprintf("pg %s is %s, acting %s", v.stat.PG, v.state, osdmap.FormatOSDs(v.stat.Acting))
		if v.stat.Degraded > 0 {
			line += fmt.Sprintf(", %s degraded", plural(int(v.stat.Degraded), "object"))
		}
		lines = append(lines, line)
	}
	var parts []string
	if sum.degraded > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d objects degraded (%s)", sum.degraded, sum.copies, percent(sum.degraded, sum.copies)))
	}
	if pgs > 0 {
		parts = append(parts, plural(pgs, "pg")+" degraded")
	}
	if undersized > 0 {
		parts = append(parts, plural(undersized, "pg")+" undersized")
	}
	if len(parts) == 0 {
		return health.Check{}, false
	}
	return health.Check{Code: "PG_DEGRADED", Severity: health.Warn,
		Summary: "Degraded data redundancy: " + strings.Join(parts, ", "), Detail: capDetail(lines)}, true
}

// damaged is PG_DAMAGED: PGs whose copies a scrub found to disagree.
func damaged(views []pgView) (health.Check, bool) {
	var lines []string
	for i := range views {
		v := &views[i]
		bad := v.stat.Inconsistent
		if !v.has("inconsistent") && len(bad) == 0 {
			continue
		}
		line := fmt.Sprintf("pg %s is %s, acting %s", v.stat.PG, v.state, osdmap.FormatOSDs(v.stat.Acting))
		if len(bad) > 0 {
			named := bad[:min(len(bad), maxObjectsNamed)]
			line += fmt.Sprintf(", %s: %s", plural(len(bad), "inconsistent object"), strings.Join(named, ", "))
			if len(bad) > len(named) {
				line += ", ..."
			}
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return health.Check{}, false
	}
	return health.Check{Code: "PG_DAMAGED", Severity: health.Err,
		Summary: fmt.Sprintf("Possible data damage: %s inconsistent", plural(len(lines), "pg")), Detail: capDetail(lines)}, true
}

// misplaced is OBJECT_MISPLACED: copies that are safe but not where
// CRUSH wants them, so data is moving.
func misplaced(sum summary) (health.Check, bool) {
	if sum.misplaced <= 0 {
		return health.Check{}, false
	}
	return health.Check{Code: "OBJECT_MISPLACED", Severity: health.Warn,
		Summary: fmt.Sprintf("%d/%d objects misplaced (%s)", sum.misplaced, sum.copies, percent(sum.misplaced, sum.copies))}, true
}

// unfound is OBJECT_UNFOUND: objects whose every copy is on OSDs that
// are not reachable.
func unfound(views []pgView, sum summary) (health.Check, bool) {
	if sum.unfound <= 0 {
		return health.Check{}, false
	}
	var lines []string
	for i := range views {
		if n := views[i].stat.Unfound; n > 0 {
			lines = append(lines, fmt.Sprintf("pg %s has %s", views[i].stat.PG, plural(int(n), "unfound object")))
		}
	}
	return health.Check{Code: "OBJECT_UNFOUND", Severity: health.Warn,
		Summary: fmt.Sprintf("%d/%d objects unfound (%s)", sum.unfound, sum.objects, percent(sum.unfound, sum.objects)),
		Detail:  capDetail(lines)}, true
}

// capDetail keeps the first maxDetail lines and says how many it left
// out.
func capDetail(lines []string) []string {
	if len(lines) <= maxDetail {
		return lines
	}
	return append(lines[:maxDetail:maxDetail], fmt.Sprintf("... and %d more", len(lines)-maxDetail))
}

package mdsmon

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/mon/mdsmon/failover"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// HealthChecks implements the monitor's HealthSource, with Ceph's codes:
//
//   - MDS_ALL_DOWN (error): a file system with no rank up, while it is
//     joinable (a file system taken down with fs fail or down is meant to
//     be offline);
//   - FS_WITH_FAILED_MDS (warn): ranks in and held by no daemon;
//   - FS_DEGRADED (warn): ranks failed or not yet active (replay to
//     clientreplay);
//   - MDS_DAMAGE (error): damaged ranks (mds repaired clears them), and
//     on the leader rank holders that report damaged metadata objects
//     (a fragment that does not decode: requests in it get EIO);
//   - MDS_INSUFFICIENT_STANDBY (warn): fewer standbys (and standby-replay
//     daemons) than the largest standby_count_wanted;
//   - MDS_LAGGY (warn, on the leader): rank holders silent past the grace
//     that no standby can replace;
//   - MDS_SLOW_REQUEST (warn, on the leader): rank holders whose latest
//     beacon reports requests in flight past mds_op_complaint_time;
//   - MDS_CLIENT_LATE_RELEASE (warn, on the leader): clients that rank
//     holders report slow to answer a cap revocation (past half the
//     revoke timeout).
func (s *Service) HealthChecks(now time.Time) []health.Check {
	var checks []health.Check
	var down, failed, degraded, damaged []string
	wanted := 0
	for _, id := range s.m.FSIDs() {
		f := s.m.FS[id]
		if f.Has(mdsmap.Joinable) && !f.Has(mdsmap.Down) {
			wanted = max(wanted, f.StandbyWanted)
			if len(f.Up) == 0 {
				down = append(down, fmt.Sprintf("fs %s is offline because no MDS is active for it.", f.Name))
			}
		}
		if n := len(f.Failed()); n > 0 {
			failed = append(failed, fmt.Sprintf("fs %s has %d failed mds", f.Name, n))
		}
		if n := len(f.Damaged); n > 0 {
			damaged = append(damaged, fmt.Sprintf("fs %s mds ranks %v are damaged", f.Name, f.Damaged))
		}
		notActive := len(f.Failed())
		for _, g := range f.Up {
			if st := s.m.Daemons[g].State; st != mdsmap.StateActive && st != mdsmap.StateStopping {
				notActive++
			}
		}
		if notActive > 0 {
			degraded = append(degraded, fmt.Sprintf("fs %s is degraded", f.Name))
		}
	}
	add := func(code string, sev health.Status, summary string, detail []string) {
		if len(detail) > 0 {
			checks = append(checks, health.Check{Code: code, Severity: sev, Summary: summary, Detail: detail})
		}
	}
	add("MDS_ALL_DOWN", health.Err, fmt.Sprintf("%d filesystem%s offline", len(down), plural(len(down), " is", "s are")), down)
	add("FS_WITH_FAILED_MDS", health.Warn, fmt.Sprintf("%d filesystem%s failed mds", len(failed), plural(len(failed), " has a", "s have")), failed)
	add("FS_DEGRADED", health.Warn, fmt.Sprintf("%d filesystem%s degraded", len(degraded), plural(len(degraded), " is", "s are")), degraded)
	leader := !s.lastTick.IsZero() && now.Sub(s.lastTick) <= newLeaderAfter
	damageSummary := fmt.Sprintf("%d mds rank%s damaged", len(damaged), plural(len(damaged), " is", "s are"))
	if leader {
		if meta := s.damageReports(); len(meta) > 0 {
			if len(damaged) == 0 {
				damageSummary = fmt.Sprintf("%d MDSs report damaged metadata", len(meta))
			} else {
				damageSummary += fmt.Sprintf("; %d MDSs report damaged metadata", len(meta))
			}
			damaged = append(damaged, meta...)
		}
	}
	add("MDS_DAMAGE", health.Err, damageSummary, damaged)
	if have := len(s.m.Standbys()) + len(s.m.StandbyReplays()); have < wanted {
		add("MDS_INSUFFICIENT_STANDBY", health.Warn, "insufficient standby MDS daemons available",
			[]string{fmt.Sprintf("have %d; want %d more", have, wanted-have)})
	}
	if leader {
		var laggy []string
		for _, d := range failover.LaggyHolders(s.m, s.live.Laggy(s.m, now, s.grace())) {
			laggy = append(laggy, fmt.Sprintf("mds.%s(mds.%d): rank %d laggy or crashed, no standby to replace it", d.Name, d.Rank, d.Rank))
		}
		add("MDS_LAGGY", health.Warn, fmt.Sprintf("%d MDS daemon%s laggy", len(laggy), plural(len(laggy), " is", "s are")), laggy)
		slow, late, clients := s.reportedChecks()
		add("MDS_SLOW_REQUEST", health.Warn, fmt.Sprintf("%d MDSs report slow requests", len(slow)), slow)
		add("MDS_CLIENT_LATE_RELEASE", health.Warn, fmt.Sprintf("%d clients failing to respond to capability release", clients), late)
	}
	return checks
}

// report keeps the health report of a beacon from a daemon of the map
// (the latest per daemon; a new incarnation's gid starts afresh).
func (s *Service) report(b wire.MDSBeacon) {
	if d := failover.Find(s.m, b); d != nil {
		s.reports[d.GID] = b.Health
	}
}

// pruneReports forgets the reports of daemons no longer holding a rank.
func (s *Service) pruneReports() {
	for g := range s.reports {
		if !holdsRank(s.m.Daemons[g]) {
			delete(s.reports, g)
		}
	}
}

// holdsRank reports whether d is in the map and holds a rank (standby-
// replay followers do not).
func holdsRank(d *mdsmap.Daemon) bool {
	return d != nil && d.Rank != mdsmap.NoRank && d.State != mdsmap.StateStandbyReplay && d.State != mdsmap.StateStandby
}

// reportedChecks are the details of MDS_SLOW_REQUEST and
// MDS_CLIENT_LATE_RELEASE from the rank holders' latest reports, in
// Ceph's words, by gid, and the count of late clients.
func (s *Service) reportedChecks() (slow, late []string, clients int) {
	for _, g := range slices.Sorted(maps.Keys(s.reports)) {
		d, r := s.m.Daemons[g], s.reports[g]
		if !holdsRank(d) {
			continue
		}
		who := fmt.Sprintf("mds.%s(mds.%d)", d.Name, d.Rank)
		if r.Slow > 0 {
			slow = append(slow, fmt.Sprintf("%s: %d slow requests are blocked > %d secs", who, r.Slow, int(r.ComplaintTime.Seconds())))
		}
		clients += r.LateClients
		if r.LateClients > len(r.LateRelease) {
			late = append(late, fmt.Sprintf("%s: Many clients (%d) failing to respond to capability release", who, r.LateClients))
			continue
		}
		for _, l := range r.LateRelease {
			name := l.Entity
			if name == "" {
				name = fmt.Sprintf("client.%d", l.ClientID)
			}
			if l.Host != "" {
				name = l.Host + ":" + name
			}
			late = append(late, fmt.Sprintf("%s: Client %s failing to respond to capability release client_id: %d", who, name, l.ClientID))
		}
	}
	return slow, late, clients
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// damageReports are MDS_DAMAGE's details of the rank holders that
// report damaged metadata objects, by gid.
func (s *Service) damageReports() []string {
	var out []string
	for _, g := range slices.Sorted(maps.Keys(s.reports)) {
		d, r := s.m.Daemons[g], s.reports[g]
		if holdsRank(d) && r.Damaged > 0 {
			out = append(out, fmt.Sprintf("mds.%s(mds.%d): Metadata damage detected: %d objects (requests in them get EIO; cuttle fs scrub lists them)", d.Name, d.Rank, r.Damaged))
		}
	}
	return out
}

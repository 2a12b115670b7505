package mdsmon

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/mon/mdsmon/failover"
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
//   - MDS_DAMAGE (error): damaged ranks (mds repaired clears them);
//   - MDS_INSUFFICIENT_STANDBY (warn): fewer standbys (and standby-replay
//     daemons) than the largest standby_count_wanted;
//   - MDS_LAGGY (warn, on the leader): rank holders silent past the grace
//     that no standby can replace.
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
	add("MDS_DAMAGE", health.Err, fmt.Sprintf("%d mds rank%s damaged", len(damaged), plural(len(damaged), " is", "s are")), damaged)
	if have := len(s.m.Standbys()) + len(s.m.StandbyReplays()); have < wanted {
		add("MDS_INSUFFICIENT_STANDBY", health.Warn, "insufficient standby MDS daemons available",
			[]string{fmt.Sprintf("have %d; want %d more", have, wanted-have)})
	}
	if !s.lastTick.IsZero() && now.Sub(s.lastTick) <= newLeaderAfter {
		var laggy []string
		for _, d := range failover.LaggyHolders(s.m, s.live.Laggy(s.m, now, s.grace())) {
			laggy = append(laggy, fmt.Sprintf("mds.%s(mds.%d): rank %d laggy or crashed, no standby to replace it", d.Name, d.Rank, d.Rank))
		}
		add("MDS_LAGGY", health.Warn, fmt.Sprintf("%d MDS daemon%s laggy", len(laggy), plural(len(laggy), " is", "s are")), laggy)
	}
	return checks
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

package osdmon

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Failure detection, as Ceph's OSDMonitor filters reports: an OSD that
// fails to answer its peers' heartbeats is reported by each of them with
// "osd failure target=T reporter=R failed_for=SECONDS"; one whose peers'
// connections to it are refused (its process is gone: a crash, a
// SIGKILL) is reported at once with immediate=true. The leader keeps the
// reports (in memory only: see the package documentation) and judges
// them (judgeFailure): T is marked down once
//
//   - reporters from at least mon_osd_min_down_reporters distinct failure
//     domains agree: reporters are counted by their ancestor of type
//     mon_osd_reporter_subtree_level (host by default), or by themselves
//     if they have none; only reporters that are up count, and
//   - either the oldest report says T has been failing for at least
//     osd_heartbeat_grace, or that many domains report it immediate (a
//     refused connection is no slow peer: there is nothing to wait for;
//     one refusing link is one domain, too few on its own), and
//   - neither the nodown flag nor T's own nodown state is set.
//
// A reporter that hears from T again cancels its report with alive=true.
// A report naming an incarnation of T (up_from) other than the map's is
// about a process already replaced, and ignored. Reports of a target are
// dropped when it goes down, reboots or leaves. Tick re-checks pending
// reports every second, so a report that was early takes effect when the
// grace has passed without the reporter resending.

// failureReport is one reporter's standing report on a target.
type failureReport struct {
	since     time.Time // when the reporter says the target failed
	immediate bool      // the reporter's connections to it are refused
}

// judgedReport is a report as judgeFailure weighs it: from an up
// reporter, in a failure domain.
type judgedReport struct {
	domain string
	failureReport
}

// failureRules are the options judgeFailure applies.
type failureRules struct {
	need   int           // mon_osd_min_down_reporters (at least 1)
	grace  time.Duration // osd_heartbeat_grace
	nodown bool          // the nodown flag, or the target's nodown state
}

// verdict is what the reports about one target add up to.
type verdict struct {
	markDown  bool
	domains   int           // distinct failure domains reporting
	immediate int           // of which, domains with an immediate report
	need      int           // domains needed
	failedFor time.Duration // since the oldest report's failure
	grace     time.Duration
	nodown    bool
}

func (v verdict) String() string {
	refused := ""
	if v.immediate > 0 {
		refused = fmt.Sprintf(" (%d refused by it)", v.immediate)
	}
	return fmt.Sprintf("%d of %d reporters' failure domains%s, failed for %v of a %v grace", v.domains, v.need, refused,
		v.failedFor.Round(time.Millisecond), v.grace)
}

// judgeFailure decides, at now, whether reports mark their target down.
// It is the whole rule, pure; checkFailure gathers its inputs.
func judgeFailure(reports []judgedReport, rules failureRules, now time.Time) verdict {
	v := verdict{need: max(rules.need, 1), grace: rules.grace, nodown: rules.nodown}
	domains, immediate := map[string]bool{}, map[string]bool{}
	var oldest time.Time
	for _, r := range reports {
		domains[r.domain] = true
		if r.immediate {
			immediate[r.domain] = true
		}
		if oldest.IsZero() || r.since.Before(oldest) {
			oldest = r.since
		}
	}
	v.domains, v.immediate = len(domains), len(immediate)
	if !oldest.IsZero() {
		v.failedFor = max(now.Sub(oldest), 0)
	}
	enough := v.domains >= v.need && v.domains > 0
	v.markDown = !v.nodown && enough && (v.failedFor >= v.grace || v.immediate >= v.need)
	return v
}

// checkFailure weighs the pending reports about target at now.
func (s *Service) checkFailure(target int32, now time.Time) verdict {
	rules := failureRules{need: int(max(s.opts.Int(OptMinDownReporters), 1)), grace: s.opts.Duration(OptHeartbeatGrace)}
	if !s.m.IsUp(target) {
		return verdict{need: rules.need, grace: rules.grace}
	}
	rules.nodown = s.m.Flags()&osdmap.FlagNoDown != 0 || s.m.OSD(target).State&osdmap.OSDNoDown != 0
	level := s.opts.String(OptReporterSubtreeLevel)
	var reports []judgedReport
	for reporter, r := range s.failures[target] {
		if s.m.IsUp(reporter) {
			reports = append(reports, judgedReport{domain: s.reporterDomain(reporter, level), failureReport: r})
		}
	}
	return judgeFailure(reports, rules, now)
}

// reporterDomain names the failure domain of a reporter: its ancestor of
// type level, or the reporter itself.
func (s *Service) reporterDomain(reporter int32, level string) string {
	for _, l := range location(s.m.Crush(), reporter) {
		if l.Type == level {
			return l.Type + "=" + l.Name
		}
	}
	return deviceName(reporter)
}

// maxFailedFor bounds failed_for, so that now minus it is a valid time.
const maxFailedFor = 1 << 30

// prepareFailure handles "osd failure target [reporter failed_for
// immediate up_from alive]".
// With a reporter it records (or, with alive=true, cancels) a report;
// then it proposes marking the target down if the reports suffice.
func (s *Service) prepareFailure(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	target, err := osdID(c, "target")
	if err != nil {
		return bad(err)
	}
	if !s.m.Exists(target) {
		delete(s.failures, target)
		return nil, moncmd.Errorf(moncmd.ENOENT, "osd failure: osd.%d does not exist", target)
	}
	if !s.m.IsUp(target) {
		delete(s.failures, target)
		return nil, moncmd.Reply{Status: fmt.Sprintf("osd.%d is already down", target)}
	}
	if c.Has("reporter") {
		reporter, err := osdID(c, "reporter")
		if err != nil {
			return bad(err)
		}
		alive, err := c.Bool("alive")
		if err != nil {
			return bad(err)
		}
		if alive {
			if r := s.failures[target]; r != nil {
				delete(r, reporter)
				if len(r) == 0 {
					delete(s.failures, target)
				}
			}
			return nil, moncmd.Reply{Status: fmt.Sprintf("osd.%d: report by osd.%d cancelled", target, reporter)}
		}
		if reporter == target || !s.m.IsUp(reporter) {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd failure: reporter osd.%d is not an up peer of osd.%d", reporter, target)
		}
		immediate, err := c.Bool("immediate")
		if err != nil {
			return bad(err)
		}
		if c.Has("up_from") {
			upFrom, err := c.Int("up_from")
			if err != nil {
				return bad(err)
			}
			if cur := int64(s.m.OSD(target).UpFrom); upFrom != cur {
				return nil, moncmd.Reply{Status: fmt.Sprintf("osd.%d: report on its incarnation up from epoch %d ignored: the map's is up from %d", target, upFrom, cur)}
			}
		}
		secs := 0.0
		if c.Has("failed_for") {
			if secs, err = c.Float("failed_for"); err != nil {
				return bad(err)
			}
		}
		if math.IsNaN(secs) || secs < 0 || secs > maxFailedFor {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd failure: failed_for %v out of [0, %d]", secs, maxFailedFor)
		}
		if s.failures[target] == nil {
			s.failures[target] = map[int32]failureReport{}
		}
		s.failures[target][reporter] = failureReport{since: now.Add(-time.Duration(secs * float64(time.Second))), immediate: immediate}
	}
	v := s.checkFailure(target, now)
	if !v.markDown {
		msg := fmt.Sprintf("osd.%d: failure reports pending (%s)", target, v)
		if v.nodown {
			msg = fmt.Sprintf("osd.%d: nodown is set, not marking down (%s)", target, v)
		}
		return nil, moncmd.Reply{Status: msg}
	}
	t := s.begin(now)
	t.markDown(target)
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("marked down osd.%d: %s", target, v)})
}

// forgetFailures drops reports that next makes moot: of targets that are
// down, gone or rebooted (a new up_from).
func (s *Service) forgetFailures(next *osdmap.Map) {
	for target := range s.failures {
		if !next.IsUp(target) || (s.m != nil && next.OSD(target).UpFrom != s.m.OSD(target).UpFrom) {
			delete(s.failures, target)
		}
	}
}

// PendingFailures returns, for each target with pending reports, the
// reporters in id order, for diagnostics and tests.
func (s *Service) PendingFailures() map[int32][]int32 {
	out := map[int32][]int32{}
	for target, r := range s.failures {
		out[target] = slices.Sorted(maps.Keys(r))
	}
	return out
}

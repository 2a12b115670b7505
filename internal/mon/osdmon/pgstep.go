package osdmon

import (
	"fmt"
	"math"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Stepping pgp_num. "osd pool set POOL pgp_num N" sets the pool's
// pgp_num_target; the leader's Tick then raises (or lowers) pgp_num
// toward it a few PGs at a time, through "osd pool set POOL
// pgp_num_actual N", as Ceph's manager does: a step is taken only when
// the PG statistics have caught up with the previous one and the share
// of object copies degraded or misplaced is below
// target_max_misplaced_ratio, so that at most about that share of the
// data is moving at once and clients keep most of the OSDs' bandwidth.

// PGStats is what the stepping reads from the PG statistics (pgmon's
// Service implements it).
type PGStats interface {
	// UncleanRatio is the share (0 to 1) of object copies degraded or
	// misplaced.
	UncleanRatio() float64
	// StatsCurrent reports whether every PG of pool has a report that
	// reflects the map at epoch since (or a placement that did not
	// change since).
	StatsCurrent(pool int64, since osdmap.Epoch) bool
}

// SetPGStats gives the service the PG statistics the pgp_num stepping
// reads; without them it steps as if nothing were misplaced and the
// statistics always current. The daemon calls it once, before Run.
func (s *Service) SetPGStats(st PGStats) { s.pgStats = st }

// nextPGPNum is the pgp_num to step to from cur toward target in a pool
// of pgNum PGs, given the share of object copies degraded or misplaced
// (unclean) and its limit. It returns cur while unclean is at or above
// limit. Each step moves at most about half the limit's worth of the
// pool, and no more than the room left under the limit: changing pgp_num
// by k gives k of the pool's pgNum PGs a new placement seed, so about
// k/pgNum of its objects move. A step moves at least one PG.
func nextPGPNum(cur, target, pgNum uint32, unclean, limit float64) uint32 {
	if cur == target || unclean >= limit || pgNum == 0 {
		return cur
	}
	room := min(limit-unclean, limit/2)
	k := uint32(max(1, math.Floor(float64(pgNum)*room)))
	if target > cur {
		return min(target, cur+k)
	}
	if cur-target <= k {
		return target
	}
	return cur - k
}

// pgpSteps returns the commands that step each pool's pgp_num toward its
// target (Tick calls it on the leader).
func (s *Service) pgpSteps() []moncmd.Command {
	limit := 0.05
	if s.opts != nil {
		limit = s.opts.Float(OptMaxMisplaced)
	}
	var out []moncmd.Command
	for _, p := range s.m.Pools() {
		_, target := p.Targets()
		if target == p.PGPNum || p.PGNumPending != 0 {
			continue // at its target, or a merge step holds the PGs' placement
		}
		unclean := 0.0
		if s.pgStats != nil {
			if !s.pgStats.StatsCurrent(p.ID, p.LastChange) {
				continue
			}
			unclean = s.pgStats.UncleanRatio()
		}
		next := nextPGPNum(p.PGPNum, target, p.PGNum, unclean, limit)
		if next == p.PGPNum {
			continue
		}
		s.log.Info("stepping pgp_num", "pool", p.Name, "from", p.PGPNum, "to", next, "target", target,
			"unclean", unclean, "limit", limit)
		// The step changes no size or min_size: a pool the operator made
		// with risky copies (size 1) was confirmed then, not to be asked
		// again on every step.
		out = append(out, moncmd.New("osd pool set", "pool", p.Name, "var", "pgp_num_actual", "val", fmt.Sprint(next),
			sureArg, "true"))
	}
	return out
}

package osdmon

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// setPGCount applies "osd pool set POOL pg_num|pgp_num|pgp_num_actual N"
// to p (the pool as it will be), or refuses it. pg_num may grow: every
// OSD holding a PG of the pool splits it when it sees the map
// (internal/osd/split), while pgp_num stays, so each child is placed
// with its parent and nothing moves yet. pg_num may shrink: that sets
// pg_num_target (and lowers pgp_num_target to it), and the leader merges
// the PGs in steps (pgmerge.go). pgp_num sets the pool's pgp_num_target:
// the leader then steps pgp_num toward it a few PGs at a time
// (pgstep.go), and the children move to their own CRUSH positions
// through peering and backfill. pgp_num_actual sets pgp_num at once (the
// leader's steps, or an operator who wants everything to move now).
// pgp_num may move either way within [1, pg_num]: it only changes
// placement.
func setPGCount(p *osdmap.Pool, v string, n int64) *moncmd.Reply {
	pgNum, pgpNum := p.Targets()
	switch {
	case n < 1:
		r := moncmd.Errorf(moncmd.EINVAL, "pool '%s': %s must be at least 1, not %d", p.Name, v, n)
		return &r
	case v == "pgp_num" || v == "pgp_num_actual":
		if n > int64(p.PGNum) {
			r := moncmd.Errorf(moncmd.EINVAL, "pool '%s': %s %d is above pg_num %d; raise pg_num first "+
				"(cuttle osd pool set %s pg_num %d)", p.Name, v, n, p.PGNum, p.Name, n)
			return &r
		}
		if v == "pgp_num" && n > int64(pgNum) {
			r := moncmd.Errorf(moncmd.EINVAL, "pool '%s': %s %d is above pg_num_target %d: the PGs are merging "+
				"down to %d", p.Name, v, n, pgNum, pgNum)
			return &r
		}
		if p.PGNumPending != 0 && n < int64(p.PGPNum) {
			r := moncmd.Errorf(moncmd.EBUSY, "pool '%s': a merge step to pg_num %d is under way; "+
				"change pgp_num once it is done", p.Name, p.PGNumPending)
			return &r
		}
		if v == "pgp_num_actual" {
			p.PGPNum = uint32(n)
		} else {
			pgpNum = uint32(n)
		}
		p.SetTargets(pgNum, pgpNum)
		return nil
	case n > maxPoolPGNum:
		r := moncmd.Errorf(moncmd.EINVAL, "pool '%s': pg_num %d is above the limit of %d PGs per pool", p.Name, n, maxPoolPGNum)
		return &r
	case n < int64(p.PGNum):
		if p.PGNumPending != 0 && n > int64(p.PGNumPending) {
			r := moncmd.Errorf(moncmd.EBUSY, "pool '%s': a merge step to pg_num %d is under way; set pg_num %d or "+
				"lower, or %d to cancel it", p.Name, p.PGNumPending, p.PGNumPending, p.PGNum)
			return &r
		}
		// A merge: the leader steps pgp_num down to the target first.
		p.SetTargets(uint32(n), min(pgpNum, uint32(n)))
		return nil
	}
	// Growing, or back to the current pg_num: any merge pending is
	// cancelled (its PGs take writes again) and the last one's record is
	// history once the PGs split.
	p.PGNumPending, p.PendingSince = 0, 0
	if n > int64(p.PGNum) {
		p.LastMerge = osdmap.PoolMerge{}
	}
	p.PGNum = uint32(n)
	p.SetTargets(p.PGNum, pgpNum)
	return nil
}

// pgCountStatus says what a pg_num or pgp_num change will do.
func pgCountStatus(cur, p osdmap.Pool, v string) string {
	_, curTarget := cur.Targets()
	_, target := p.Targets()
	curPG, _ := cur.Targets()
	pgTarget, _ := p.Targets()
	switch {
	case v == "pg_num" && pgTarget < p.PGNum && pgTarget != curPG:
		return fmt.Sprintf("; the monitors merge its %d PGs into %d: pgp_num steps down to %d first (the data "+
			"moves through backfill while under target_max_misplaced_ratio of it is moving), then, with every PG "+
			"active+clean, the PGs merge in place while writes to them wait a moment "+
			"(cuttle osd pool get %s merge_status)", p.PGNum, pgTarget, pgTarget, p.Name)
	case v == "pg_num" && cur.PGNumPending != 0 && p.PGNumPending == 0:
		return "; the pending merge step is cancelled and its PGs take writes again"
	case v == "pg_num" && p.PGNum > cur.PGNum:
		return fmt.Sprintf("; the OSDs split its %d PGs into %d, placed with their parents until pgp_num "+
			"(%d) is raised (cuttle osd pool set %s pgp_num %d)", cur.PGNum, p.PGNum, target, p.Name, p.PGNum)
	case v == "pgp_num" && target != curTarget && target != p.PGPNum:
		return fmt.Sprintf("; pgp_num_target is %d: the monitors step pgp_num (now %d) toward it while under "+
			"target_max_misplaced_ratio of the data is moving, and PGs move to their new placement through backfill",
			target, p.PGPNum)
	case p.PGPNum != cur.PGPNum:
		return "; PGs move to their new placement through backfill"
	}
	return ""
}

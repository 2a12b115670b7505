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
// with its parent and nothing moves yet. pgp_num sets the pool's
// pgp_num_target: the leader then steps pgp_num toward it a few PGs at a
// time (pgstep.go), and the children move to their own CRUSH positions
// through peering and backfill. pgp_num_actual sets pgp_num at once (the
// leader's steps, or an operator who wants everything to move now). pg_num
// may not shrink: that merges PGs, which the OSDs cannot do yet. pgp_num
// may move either way within [1, pg_num]: it only changes placement.
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
		r := moncmd.Errorf(moncmd.EPERM, "pool '%s': pg_num cannot shrink from %d to %d: that merges PGs, "+
			"which the OSDs cannot do yet; pg_num can only grow", p.Name, p.PGNum, n)
		return &r
	}
	p.PGNum = uint32(n)
	p.SetTargets(p.PGNum, pgpNum)
	return nil
}

// pgCountStatus says what a pg_num or pgp_num change will do.
func pgCountStatus(cur, p osdmap.Pool, v string) string {
	_, curTarget := cur.Targets()
	_, target := p.Targets()
	switch {
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

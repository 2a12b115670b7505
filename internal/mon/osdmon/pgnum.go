package osdmon

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// setPGCount applies "osd pool set POOL pg_num|pgp_num N" to p (the pool
// as it will be), or refuses it. pg_num may grow: every OSD holding a PG
// of the pool splits it when it sees the map (internal/osd/split.go),
// while pgp_num stays, so each child is placed with its parent and
// nothing moves yet; raising pgp_num afterwards moves the children to
// their own CRUSH positions through peering and backfill. pg_num may not
// shrink: that merges PGs, which the OSDs cannot do yet. pgp_num may
// move either way within [1, pg_num]: it only changes placement.
func setPGCount(p *osdmap.Pool, v string, n int64) *moncmd.Reply {
	switch {
	case n < 1:
		r := moncmd.Errorf(moncmd.EINVAL, "pool '%s': %s must be at least 1, not %d", p.Name, v, n)
		return &r
	case v == "pgp_num":
		if n > int64(p.PGNum) {
			r := moncmd.Errorf(moncmd.EINVAL, "pool '%s': pgp_num %d is above pg_num %d; raise pg_num first "+
				"(cuttle osd pool set %s pg_num %d)", p.Name, n, p.PGNum, p.Name, n)
			return &r
		}
		p.PGPNum = uint32(n)
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
	return nil
}

// pgCountStatus says what a pg_num or pgp_num change will do.
func pgCountStatus(cur, p osdmap.Pool, v string) string {
	switch {
	case v == "pg_num" && p.PGNum > cur.PGNum:
		return fmt.Sprintf("; the OSDs split its %d PGs into %d, placed with their parents until pgp_num "+
			"(%d) is raised (cuttle osd pool set %s pgp_num %d)", cur.PGNum, p.PGNum, p.PGPNum, p.Name, p.PGNum)
	case v == "pgp_num" && p.PGPNum != cur.PGPNum:
		return "; PGs move to their new placement through backfill"
	}
	return ""
}

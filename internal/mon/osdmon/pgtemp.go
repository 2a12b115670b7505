package osdmon

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// maxPGTemp bounds a pg_temp list: the old members and the new ones of
// a PG being backfilled, never more than a few of each.
const maxPGTemp = 16

// preparePGTemp handles "osd pg-temp pgid [osds]": it sets the PG's
// temporary acting set to osds, in order (the first is the primary), or
// removes it when osds is empty or absent. A primary whose own copy
// needs a backfill asks for one led by a member that is complete, so that
// the PG serves while it copies; the PG's primary removes it once every
// member is complete.
func (s *Service) preparePGTemp(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	raw, err := c.Str("pgid")
	if err != nil {
		return bad(err)
	}
	pg, err := osdmap.ParsePG(raw)
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
	}
	pool := s.m.Pool(pg.Pool)
	if pool == nil || pg.Seed >= pool.PGNum {
		return nil, moncmd.Errorf(moncmd.ENOENT, "pg %s does not exist", raw)
	}
	osds, err := orderedOSDIDs(c.StrOr("osds", ""))
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
	}
	if r := s.checkExist(c.Prefix, osds); r != nil {
		return nil, *r
	}
	t := s.begin(now)
	cur := t.base.PGTemp(pg)
	if slices.Equal(cur, osds) {
		return t.unchanged()
	}
	t.inc.NewPGTemp = map[osdmap.PG][]int32{pg: osds}
	if len(osds) == 0 {
		return t.propose(t.status(fmt.Sprintf("removed pg_temp of %s", pg)))
	}
	return t.propose(t.status(fmt.Sprintf("set pg_temp of %s to %v", pg, osds)))
}

// orderedOSDIDs reads OSD ids separated by commas or spaces, keeping
// their order and refusing duplicates.
func orderedOSDIDs(v string) ([]int32, error) {
	var ids []int32
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := parseOSDID(f)
		if err != nil {
			return nil, err
		}
		if slices.Contains(ids, id) {
			return nil, fmt.Errorf("osd.%d appears twice in %q", id, v)
		}
		ids = append(ids, id)
	}
	if len(ids) > maxPGTemp {
		return nil, fmt.Errorf("%d OSDs, at most %d", len(ids), maxPGTemp)
	}
	return ids, nil
}

package osdmon

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// preparePGUpmapItems handles "osd pg-upmap-items pgid mappings": it
// sets the PG's pg_upmap_items to the pairs "FROM TO ..." (OSD ids
// separated by spaces or commas), replacing any it had. Each target must
// exist and be in, and the set the pairs make of CRUSH's result must
// keep the pool's rule (no two copies in one failure domain).
func (s *Service) preparePGUpmapItems(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	pg, r := s.upmapPG(c)
	if r != nil {
		return nil, *r
	}
	ids, err := orderedPairs(c.StrOr("mappings", ""))
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
	}
	items := make([]osdmap.UpmapItem, 0, len(ids)/2)
	for i := 0; i < len(ids); i += 2 {
		items = append(items, osdmap.UpmapItem{From: ids[i], To: ids[i+1]})
	}
	t := s.begin(now)
	if r := t.setUpmapItems(c.Prefix, map[osdmap.PG][]osdmap.UpmapItem{pg: items}); r != nil {
		return nil, *r
	}
	if slices.Equal(t.base.PGUpmapItems(pg), items) {
		return t.unchanged()
	}
	return t.propose(t.status(fmt.Sprintf("set %s pg_upmap_items mapping to %s", pg, formatItems(items))))
}

// prepareRmPGUpmapItems handles "osd rm-pg-upmap-items pgid".
func (s *Service) prepareRmPGUpmapItems(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	pg, r := s.upmapPG(c)
	if r != nil {
		return nil, *r
	}
	t := s.begin(now)
	if t.base.PGUpmapItems(pg) == nil {
		return t.unchanged()
	}
	t.inc.OldPGUpmapItems = []osdmap.PG{pg}
	return t.propose(t.status(fmt.Sprintf("no pg_upmap_items on %s any more", pg)))
}

// prepareUpmapPlan handles "osd pg-upmap-plan epoch [items] [rm]": a
// balancer plan made at epoch, applied in one new epoch, or refused
// (EBUSY) if the map has moved on since. items are entries "PGID FROM TO
// [FROM TO ...]" separated by semicolons, each replacing the PG's
// pg_upmap_items; rm lists PGs whose entries go.
func (s *Service) prepareUpmapPlan(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	epoch, err := c.Int("epoch")
	if err != nil {
		return bad(err)
	}
	if osdmap.Epoch(epoch) != s.m.Epoch() {
		return nil, moncmd.Errorf(moncmd.EBUSY, "%s: the plan was made at epoch %d and the map is at %d; make it again",
			c.Prefix, epoch, s.m.Epoch())
	}
	set := map[osdmap.PG][]osdmap.UpmapItem{}
	for _, e := range strings.Split(c.StrOr("items", ""), ";") {
		if strings.TrimSpace(e) == "" {
			continue
		}
		fields := strings.Fields(e)
		pg, err := osdmap.ParsePG(fields[0])
		if err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "%s: %q: %v", c.Prefix, e, err)
		}
		ids, err := orderedPairs(strings.Join(fields[1:], " "))
		if err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "%s: %s: %v", c.Prefix, pg, err)
		}
		for i := 0; i < len(ids); i += 2 {
			set[pg] = append(set[pg], osdmap.UpmapItem{From: ids[i], To: ids[i+1]})
		}
	}
	var rm []osdmap.PG
	for _, f := range strings.FieldsFunc(c.StrOr("rm", ""), func(r rune) bool { return r == ',' || r == ' ' }) {
		pg, err := osdmap.ParsePG(f)
		if err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "%s: rm %q: %v", c.Prefix, f, err)
		}
		if _, dup := set[pg]; dup {
			return nil, moncmd.Errorf(moncmd.EINVAL, "%s: pg %s both set and removed", c.Prefix, pg)
		}
		if s.m.PGUpmapItems(pg) != nil {
			rm = append(rm, pg)
		}
	}
	t := s.begin(now)
	if r := t.setUpmapItems(c.Prefix, set); r != nil {
		return nil, *r
	}
	t.inc.OldPGUpmapItems = rm
	if len(set) == 0 && len(rm) == 0 {
		return t.unchanged()
	}
	return t.propose(t.status(fmt.Sprintf("set pg_upmap_items on %d pgs, removed them from %d", len(set), len(rm))))
}

// setUpmapItems records new pg_upmap_items entries after checking them:
// their PGs exist, their targets exist and are in, and the sets they make
// keep the pools' rules.
func (t *txn) setUpmapItems(prefix string, set map[osdmap.PG][]osdmap.UpmapItem) *moncmd.Reply {
	var sc osdmap.Scratch
	limits := map[int64]*osdmap.RuleLimits{}
	for _, pg := range slices.SortedFunc(maps.Keys(set), osdmap.ComparePG) {
		items := set[pg]
		p := t.base.Pool(pg.Pool)
		if p == nil || pg.Seed >= p.PGNum {
			r := moncmd.Errorf(moncmd.ENOENT, "pg %s does not exist", pg)
			return &r
		}
		if p.PGNumPending != 0 {
			r := moncmd.Errorf(moncmd.EBUSY, "%s: pg %s: pool '%s' is merging its PGs (pg_num %d to %d), which must "+
				"stay on their targets' OSDs; retry once the merge step is done", prefix, pg, p.Name, p.PGNum, p.PGNumPending)
			return &r
		}
		if len(items) == 0 || len(items) > osdmap.MaxPoolSize {
			r := moncmd.Errorf(moncmd.EINVAL, "%s: pg %s: %d pairs, want 1 to %d", prefix, pg, len(items), osdmap.MaxPoolSize)
			return &r
		}
		for _, it := range items {
			for _, o := range []int32{it.From, it.To} {
				if !t.base.Exists(o) {
					r := moncmd.Errorf(moncmd.ENOENT, "osd.%d does not exist", o)
					return &r
				}
			}
			if !t.base.IsIn(it.To) {
				r := moncmd.Errorf(moncmd.EINVAL, "%s: pg %s: osd.%d is out; a PG cannot be mapped to it", prefix, pg, it.To)
				return &r
			}
		}
		l, ok := limits[pg.Pool]
		if !ok {
			var err error
			if l, err = t.base.PoolRuleLimits(p); err != nil {
				r := moncmd.Errorf(moncmd.EINVAL, "%s: pool %s: %v", prefix, p.Name, err)
				return &r
			}
			limits[pg.Pool] = l
		}
		raw, _, _, err := t.base.PGToRawOSDs(pg, &sc)
		if err != nil {
			r := moncmd.FromError(err, moncmd.ENOENT)
			return &r
		}
		res := slices.Clone(raw)
		if full := t.base.PGUpmap(pg); full != nil {
			res = slices.Clone(full)
		}
		for _, it := range items {
			if pos := slices.Index(res, it.From); pos >= 0 && !slices.Contains(res, it.To) {
				res[pos] = it.To
			}
		}
		if err := l.Check(res); err != nil {
			r := moncmd.Errorf(moncmd.EINVAL, "%s: pg %s would map to %v: %v", prefix, pg, res, err)
			return &r
		}
		t.inc.NewPGUpmapItems = setItems(t.inc.NewPGUpmapItems, pg, items)
	}
	return nil
}

func setItems(m map[osdmap.PG][]osdmap.UpmapItem, pg osdmap.PG, items []osdmap.UpmapItem) map[osdmap.PG][]osdmap.UpmapItem {
	if m == nil {
		m = map[osdmap.PG][]osdmap.UpmapItem{}
	}
	m[pg] = items
	return m
}

// upmapPG reads the pgid argument of an upmap command: an existing PG.
func (s *Service) upmapPG(c moncmd.Command) (osdmap.PG, *moncmd.Reply) {
	raw, err := c.Str("pgid")
	if err != nil {
		r := moncmd.FromError(err, moncmd.EINVAL)
		return osdmap.PG{}, &r
	}
	pg, err := osdmap.ParsePG(raw)
	if err != nil {
		r := moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
		return osdmap.PG{}, &r
	}
	if p := s.m.Pool(pg.Pool); p == nil || pg.Seed >= p.PGNum {
		r := moncmd.Errorf(moncmd.ENOENT, "pg %s does not exist", raw)
		return osdmap.PG{}, &r
	}
	return pg, nil
}

// orderedPairs reads "FROM TO [FROM TO ...]": OSD ids separated by
// spaces or commas, an even number of them, no pair mapping an OSD to
// itself and no OSD the source (or the target) of two pairs.
func orderedPairs(v string) ([]int32, error) {
	var ids []int32
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := parseOSDID(f)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 || len(ids)%2 != 0 {
		return nil, fmt.Errorf("want pairs of OSD ids FROM TO, got %d ids", len(ids))
	}
	if len(ids) > 2*osdmap.MaxPoolSize {
		return nil, fmt.Errorf("%d pairs, at most %d", len(ids)/2, osdmap.MaxPoolSize)
	}
	for i := 0; i < len(ids); i += 2 {
		if ids[i] == ids[i+1] {
			return nil, fmt.Errorf("osd.%d mapped to itself", ids[i])
		}
		for j := 0; j < i; j += 2 {
			if ids[j] == ids[i] || ids[j+1] == ids[i+1] {
				return nil, fmt.Errorf("osd.%d or osd.%d appears in two pairs", ids[i], ids[i+1])
			}
		}
	}
	return ids, nil
}

// formatItems prints pairs as Ceph's osd dump does: [1,4,2,5].
func formatItems(items []osdmap.UpmapItem) string {
	parts := make([]string, 0, 2*len(items))
	for _, it := range items {
		parts = append(parts, strconv.Itoa(int(it.From)), strconv.Itoa(int(it.To)))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

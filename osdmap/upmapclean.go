package osdmap

import "slices"

// UpmapChanges are the upmap entries a map should drop or rewrite
// because they no longer hold (Map.StaleUpmaps).
type UpmapChanges struct {
	// Items replaces pg_upmap_items entries by their items that still
	// do something.
	Items map[PG][]UpmapItem
	// RmItems and RmUpmap remove pg_upmap_items and pg_upmap entries.
	RmItems, RmUpmap []PG
}

// Empty reports whether there is nothing to change.
func (c UpmapChanges) Empty() bool {
	return len(c.Items) == 0 && len(c.RmItems) == 0 && len(c.RmUpmap) == 0
}

// AddTo records the changes in inc, replacing whatever inc set for the
// same PGs.
func (c UpmapChanges) AddTo(inc *Incremental) {
	for pg, items := range c.Items {
		inc.NewPGUpmapItems = setEntry(inc.NewPGUpmapItems, pg, items)
	}
	for _, pg := range c.RmItems {
		delete(inc.NewPGUpmapItems, pg)
		if !slices.Contains(inc.OldPGUpmapItems, pg) {
			inc.OldPGUpmapItems = append(inc.OldPGUpmapItems, pg)
		}
	}
	for _, pg := range c.RmUpmap {
		delete(inc.NewPGUpmap, pg)
		if !slices.Contains(inc.OldPGUpmap, pg) {
			inc.OldPGUpmap = append(inc.OldPGUpmap, pg)
		}
	}
}

// StaleUpmaps finds the upmaps of m that no longer hold, as Ceph's
// monitor cleans them after every change (OSDMap::clean_pg_upmaps):
//
//   - a pg_upmap naming an OSD that does not exist, or breaking the
//     pool's rule, is removed;
//   - a pg_upmap_items pair whose target does not exist or is out, or
//     whose source is not in the set it applies to (CRUSH moved the PG,
//     or an earlier pair already replaced it), is dropped;
//   - an entry whose resulting set breaks the pool's rule (two copies in
//     one failure domain after the hierarchy changed) is removed whole,
//     as is one left with no pairs.
//
// Entries of pools whose rule RuleLimits cannot judge are kept.
func (m *Map) StaleUpmaps() UpmapChanges {
	var c UpmapChanges
	if len(m.pgUpmap) == 0 && len(m.pgUpmapItems) == 0 {
		return c
	}
	limits := map[int64]*RuleLimits{}
	limitsOf := func(pool int64) *RuleLimits {
		if l, ok := limits[pool]; ok {
			return l
		}
		l, _ := m.PoolRuleLimits(m.Pool(pool))
		limits[pool] = l
		return l
	}
	for _, pg := range sortedPGs(m.pgUpmap) {
		osds := m.pgUpmap[pg]
		bad := slices.ContainsFunc(osds, func(o int32) bool { return !m.Exists(o) })
		if l := limitsOf(pg.Pool); !bad && l != nil {
			bad = l.Check(osds) != nil
		}
		if bad {
			c.RmUpmap = append(c.RmUpmap, pg)
		}
	}
	var s Scratch
	for _, pg := range sortedPGs(m.pgUpmapItems) {
		items := m.pgUpmapItems[pg]
		raw, _, _, err := m.PGToRawOSDs(pg, &s)
		if err != nil {
			continue // Apply drops entries of pools that are gone
		}
		set := slices.Clone(raw)
		if full, ok := m.pgUpmap[pg]; ok && !slices.Contains(c.RmUpmap, pg) && !m.anyMarkedOut(full) {
			set = slices.Clone(full)
		}
		var kept []UpmapItem
		for _, it := range items {
			pos := slices.Index(set, it.From)
			if pos < 0 || !m.Exists(it.To) || m.markedOut(it.To) || slices.Contains(set, it.To) {
				continue
			}
			set[pos] = it.To
			kept = append(kept, it)
		}
		l := limitsOf(pg.Pool)
		switch {
		case len(kept) == 0 || (l != nil && l.Check(set) != nil):
			c.RmItems = append(c.RmItems, pg)
		case len(kept) != len(items):
			if c.Items == nil {
				c.Items = map[PG][]UpmapItem{}
			}
			c.Items[pg] = kept
		}
	}
	return c
}

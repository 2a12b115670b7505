package osdmap

import (
	"fmt"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/crush"
)

// Incremental holds the changes from one epoch of the map to the next
// (Ceph's OSDMap::Incremental). Fields left zero change nothing. Build one
// with Map.NewIncremental and its helpers, or with Diff; apply it with
// Map.Apply.
type Incremental struct {
	FSID  FSID
	Epoch Epoch // the epoch the incremental makes: the base map's plus one
	// Modified becomes the map's modification time; zero keeps the old one.
	Modified time.Time

	NewFlags   *Flags
	NewCrush   *crush.Map
	NewMaxOSD  *int32 // grows (with nonexistent OSDs) or shrinks the OSD table
	NewPoolMax *int64

	NewPools []Pool  // created or changed pools, whole
	OldPools []int64 // deleted pools

	// NewOSDs replaces OSD entries, whole; the zero OSD removes one.
	NewOSDs map[int32]OSD

	// NewPGTemp sets pg_temp entries; an empty list removes one.
	NewPGTemp map[PG][]int32
	// NewPrimaryTemp sets primary_temp entries; -1 removes one.
	NewPrimaryTemp map[PG]int32

	NewPGUpmap      map[PG][]int32
	OldPGUpmap      []PG
	NewPGUpmapItems map[PG][]UpmapItem
	OldPGUpmapItems []PG

	// NewNearFullRatio, NewBackfillFullRatio and NewFullRatio set the
	// map's fullness ratios (Ceph's new_nearfull_ratio etc.).
	NewNearFullRatio     *float32
	NewBackfillFullRatio *float32
	NewFullRatio         *float32

	// NewBlocklist adds or renews blocklist entries (address to expiry);
	// OldBlocklist removes entries.
	NewBlocklist map[string]time.Time
	OldBlocklist []string
}

// NewIncremental returns an empty incremental for the epoch after m's.
func (m *Map) NewIncremental() *Incremental {
	return &Incremental{FSID: m.fsid, Epoch: m.epoch + 1}
}

// Apply returns the map that inc makes of m; m is unchanged. The
// incremental must carry m's fsid and the next epoch. Deleting a pool, or
// shrinking its pg_num, also drops its overrides (pg_temp, primary_temp,
// upmaps) for PGs that no longer exist. The result is validated like any
// map built with New.
func (m *Map) Apply(inc *Incremental) (*Map, error) {
	if inc.FSID != m.fsid {
		return nil, fmt.Errorf("%w: map %s, incremental %s", ErrWrongCluster, m.fsid, inc.FSID)
	}
	if inc.Epoch != m.epoch+1 {
		return nil, fmt.Errorf("%w: map at epoch %d, incremental makes epoch %d", ErrWrongEpoch, m.epoch, inc.Epoch)
	}
	s := m.Spec()
	s.Epoch = inc.Epoch
	if !inc.Modified.IsZero() {
		s.Modified = inc.Modified
	}
	if inc.NewFlags != nil {
		s.Flags = *inc.NewFlags
	}
	if inc.NewCrush != nil {
		s.Crush = inc.NewCrush
	}
	if inc.NewPoolMax != nil {
		s.PoolMax = *inc.NewPoolMax
	}
	if inc.NewNearFullRatio != nil {
		s.Ratios.NearFull = *inc.NewNearFullRatio
	}
	if inc.NewBackfillFullRatio != nil {
		s.Ratios.BackfillFull = *inc.NewBackfillFullRatio
	}
	if inc.NewFullRatio != nil {
		s.Ratios.Full = *inc.NewFullRatio
	}
	if err := applyOSDs(&s, inc); err != nil {
		return nil, fmt.Errorf("%w: epoch %d: %w", ErrInvalidMap, inc.Epoch, err)
	}
	if err := applyPools(&s, inc); err != nil {
		return nil, fmt.Errorf("%w: epoch %d: %w", ErrInvalidMap, inc.Epoch, err)
	}
	applyOverrides(&s, inc)
	pruneOverrides(&s)
	if len(inc.NewBlocklist) > 0 || len(inc.OldBlocklist) > 0 {
		if s.Blocklist == nil {
			s.Blocklist = map[string]time.Time{}
		}
		for a, exp := range inc.NewBlocklist {
			s.Blocklist[a] = exp
		}
		for _, a := range inc.OldBlocklist {
			delete(s.Blocklist, a)
		}
	}
	return New(s)
}

func applyOSDs(s *Spec, inc *Incremental) error {
	if inc.NewMaxOSD != nil {
		n := int(*inc.NewMaxOSD)
		if n < 0 || n > MaxOSDs {
			return fmt.Errorf("max_osd %d out of [0, %d]", n, MaxOSDs)
		}
		if n <= len(s.OSDs) {
			s.OSDs = s.OSDs[:n]
		} else {
			s.OSDs = append(s.OSDs, make([]OSD, n-len(s.OSDs))...)
		}
	}
	for id, o := range inc.NewOSDs {
		if id < 0 || int(id) >= len(s.OSDs) {
			return fmt.Errorf("osd.%d beyond max_osd %d", id, len(s.OSDs))
		}
		s.OSDs[id] = o
	}
	return nil
}

func applyPools(s *Spec, inc *Incremental) error {
	for _, id := range inc.OldPools {
		i := slices.IndexFunc(s.Pools, func(p Pool) bool { return p.ID == id })
		if i < 0 {
			return fmt.Errorf("deleting pool %d, which does not exist", id)
		}
		s.Pools = slices.Delete(s.Pools, i, i+1)
	}
	for _, p := range inc.NewPools {
		if i := slices.IndexFunc(s.Pools, func(q Pool) bool { return q.ID == p.ID }); i >= 0 {
			s.Pools[i] = p
		} else {
			s.Pools = append(s.Pools, p)
		}
	}
	return nil
}

func applyOverrides(s *Spec, inc *Incremental) {
	for pg, osds := range inc.NewPGTemp {
		if len(osds) == 0 {
			delete(s.PGTemp, pg)
		} else {
			s.PGTemp[pg] = slices.Clone(osds)
		}
	}
	for pg, osd := range inc.NewPrimaryTemp {
		if osd == -1 {
			delete(s.PrimaryTemp, pg)
		} else {
			s.PrimaryTemp[pg] = osd
		}
	}
	// As Ceph: new entries first, then removals.
	for pg, osds := range inc.NewPGUpmap {
		s.PGUpmap[pg] = slices.Clone(osds)
	}
	for _, pg := range inc.OldPGUpmap {
		delete(s.PGUpmap, pg)
	}
	for pg, items := range inc.NewPGUpmapItems {
		s.PGUpmapItems[pg] = slices.Clone(items)
	}
	for _, pg := range inc.OldPGUpmapItems {
		delete(s.PGUpmapItems, pg)
	}
}

// pruneOverrides drops overrides of PGs whose pool is gone or whose seed
// is beyond the pool's pg_num.
func pruneOverrides(s *Spec) {
	pgNum := make(map[int64]uint32, len(s.Pools))
	for _, p := range s.Pools {
		pgNum[p.ID] = p.PGNum
	}
	gone := func(pg PG) bool {
		n, ok := pgNum[pg.Pool]
		return !ok || pg.Seed >= n
	}
	for pg := range s.PGTemp {
		if gone(pg) {
			delete(s.PGTemp, pg)
		}
	}
	for pg := range s.PrimaryTemp {
		if gone(pg) {
			delete(s.PrimaryTemp, pg)
		}
	}
	for pg := range s.PGUpmap {
		if gone(pg) {
			delete(s.PGUpmap, pg)
		}
	}
	for pg := range s.PGUpmapItems {
		if gone(pg) {
			delete(s.PGUpmapItems, pg)
		}
	}
}

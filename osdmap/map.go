package osdmap

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/crush"
)

// Epoch numbers the versions of the map; every change makes a new epoch.
type Epoch uint32

// FSID identifies a cluster.
type FSID [16]byte

// String formats the fsid as a UUID.
func (f FSID) String() string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", f[0:4], f[4:6], f[6:8], f[8:10], f[10:16])
}

// UpmapItem replaces one OSD by another in a PG's CRUSH result
// (an entry of Ceph's pg_upmap_items).
type UpmapItem struct {
	From, To int32
}

// Spec describes a map. New validates it and builds the read-only Map;
// Map.Spec returns a Spec to change and build again (as a new epoch, or
// through an Incremental).
type Spec struct {
	Epoch    Epoch
	FSID     FSID
	Created  time.Time
	Modified time.Time
	Flags    Flags
	Crush    *crush.Map
	// OSDs holds every OSD by id; its length is Ceph's max_osd. Ids
	// without an OSD hold the zero OSD.
	OSDs  []OSD
	Pools []Pool // in any order
	// PoolMax is the highest pool id ever used; New raises it to the
	// highest id in Pools.
	PoolMax int64
	// PGTemp overrides a PG's acting set while peering moves data.
	PGTemp map[PG][]int32
	// PrimaryTemp overrides a PG's acting primary.
	PrimaryTemp map[PG]int32
	// PGUpmap replaces a PG's CRUSH result.
	PGUpmap map[PG][]int32
	// PGUpmapItems swaps single OSDs of a PG's CRUSH result.
	PGUpmapItems map[PG][]UpmapItem
	// Ratios are the fullness ratios; a zero ratio gets its default.
	Ratios Ratios
	// Blocklist maps blocklisted addresses to their expiry (blocklist.go).
	Blocklist map[string]time.Time
}

// Map is a validated, immutable OSD map: one epoch of the cluster's OSDs,
// pools and placement overrides, with the CRUSH map that places PGs.
// Methods that return slices or pointers return the map's own storage,
// which callers must not modify. A Map is safe for concurrent use.
type Map struct {
	epoch    Epoch
	fsid     FSID
	created  time.Time
	modified time.Time
	flags    Flags
	crush    *crush.Map

	osds []OSD
	// weights is the reweight vector CRUSH maps with: osds[i].Weight.
	weights []uint32
	// affinity is set when an OSD has a primary affinity other than the
	// default, so mapping can skip the primary-affinity pass otherwise.
	affinity bool

	pools     []Pool // sorted by id
	poolIndex map[int64]int
	poolMax   int64

	pgTemp       map[PG][]int32
	primaryTemp  map[PG]int32
	pgUpmap      map[PG][]int32
	pgUpmapItems map[PG][]UpmapItem

	ratios Ratios
	// blocklist maps blocklisted addresses to their expiry.
	blocklist map[string]time.Time
}

// New validates spec and builds the map. It copies what it keeps, so the
// caller may reuse spec. Times are kept in UTC without monotonic readings.
func New(spec Spec) (*Map, error) {
	m := &Map{
		epoch:    spec.Epoch,
		fsid:     spec.FSID,
		created:  normTime(spec.Created),
		modified: normTime(spec.Modified),
		flags:    spec.Flags,
		crush:    spec.Crush,
		poolMax:  spec.PoolMax,
		ratios:   spec.Ratios.withDefaults(),
	}
	if err := m.ratios.validate(); err != nil {
		return nil, fmt.Errorf("%w: epoch %d: %w", ErrInvalidMap, spec.Epoch, err)
	}
	for _, step := range []func(*Spec) error{m.setOSDs, m.setPools, m.setTemps, m.setUpmaps, m.setBlocklist} {
		if err := step(&spec); err != nil {
			return nil, fmt.Errorf("%w: epoch %d: %w", ErrInvalidMap, spec.Epoch, err)
		}
	}
	return m, nil
}

func normTime(t time.Time) time.Time { return t.Round(0).UTC() }

// checkTime verifies that t is in the range the encoding keeps (years 1
// to 9999).
func checkTime(what string, t time.Time) error {
	if s := t.Unix(); s < minUnix || s > maxUnix {
		return fmt.Errorf("%s time %s out of range", what, t)
	}
	return nil
}

func (m *Map) setOSDs(spec *Spec) error {
	if m.crush == nil {
		return fmt.Errorf("no crush map")
	}
	if err := checkTime("created", m.created); err != nil {
		return err
	}
	if err := checkTime("modified", m.modified); err != nil {
		return err
	}
	if len(spec.OSDs) > MaxOSDs {
		return fmt.Errorf("max_osd %d exceeds %d", len(spec.OSDs), MaxOSDs)
	}
	m.osds = slices.Clone(spec.OSDs)
	m.weights = make([]uint32, len(m.osds))
	for i := range m.osds {
		o := &m.osds[i]
		if err := o.validate(int32(i)); err != nil {
			return err
		}
		m.weights[i] = o.Weight
		if o.Exists() && o.PrimaryAffinity != DefaultPrimaryAffinity {
			m.affinity = true
		}
	}
	return nil
}

func (m *Map) setPools(spec *Spec) error {
	m.pools = clonePools(spec.Pools)
	slices.SortFunc(m.pools, func(a, b Pool) int { return cmp.Compare(a.ID, b.ID) })
	m.poolIndex = make(map[int64]int, len(m.pools))
	names := make(map[string]int64, len(m.pools))
	for i := range m.pools {
		p := &m.pools[i]
		if err := p.validate(); err != nil {
			return err
		}
		if _, dup := m.poolIndex[p.ID]; dup {
			return fmt.Errorf("pool id %d used twice", p.ID)
		}
		if other, dup := names[p.Name]; dup {
			return fmt.Errorf("pool name %q used by pools %d and %d", p.Name, other, p.ID)
		}
		if m.crush.Rule(p.CrushRule) == nil {
			return fmt.Errorf("pool %d (%s): no crush rule %d", p.ID, p.Name, p.CrushRule)
		}
		m.poolIndex[p.ID] = i
		names[p.Name] = p.ID
		m.poolMax = max(m.poolMax, p.ID)
	}
	return nil
}

// checkPG verifies that an override names a PG of an existing pool.
func (m *Map) checkPG(what string, pg PG) error {
	p := m.Pool(pg.Pool)
	if p == nil {
		return fmt.Errorf("%s %s: no pool %d", what, pg, pg.Pool)
	}
	if pg.Seed >= p.PGNum {
		return fmt.Errorf("%s %s: seed beyond pg_num %d", what, pg, p.PGNum)
	}
	return nil
}

// checkOSDList verifies an OSD list of an override: 1 to MaxPoolSize
// entries, each an OSD id or crush.ItemNone.
func checkOSDList(what string, pg PG, osds []int32) error {
	if len(osds) == 0 || len(osds) > MaxPoolSize {
		return fmt.Errorf("%s %s: %d osds, want 1 to %d", what, pg, len(osds), MaxPoolSize)
	}
	for _, o := range osds {
		if o < 0 {
			return fmt.Errorf("%s %s: bad osd id %d", what, pg, o)
		}
	}
	return nil
}

func (m *Map) setTemps(spec *Spec) error {
	m.pgTemp = make(map[PG][]int32, len(spec.PGTemp))
	for pg, osds := range spec.PGTemp {
		if err := m.checkPG("pg_temp", pg); err != nil {
			return err
		}
		if err := checkOSDList("pg_temp", pg, osds); err != nil {
			return err
		}
		m.pgTemp[pg] = slices.Clone(osds)
	}
	m.primaryTemp = make(map[PG]int32, len(spec.PrimaryTemp))
	for pg, osd := range spec.PrimaryTemp {
		if err := m.checkPG("primary_temp", pg); err != nil {
			return err
		}
		if osd < 0 {
			return fmt.Errorf("primary_temp %s: bad osd id %d", pg, osd)
		}
		m.primaryTemp[pg] = osd
	}
	return nil
}

func (m *Map) setUpmaps(spec *Spec) error {
	m.pgUpmap = make(map[PG][]int32, len(spec.PGUpmap))
	for pg, osds := range spec.PGUpmap {
		if err := m.checkPG("pg_upmap", pg); err != nil {
			return err
		}
		if err := checkOSDList("pg_upmap", pg, osds); err != nil {
			return err
		}
		m.pgUpmap[pg] = slices.Clone(osds)
	}
	m.pgUpmapItems = make(map[PG][]UpmapItem, len(spec.PGUpmapItems))
	for pg, items := range spec.PGUpmapItems {
		if err := m.checkPG("pg_upmap_items", pg); err != nil {
			return err
		}
		if len(items) == 0 || len(items) > MaxPoolSize {
			return fmt.Errorf("pg_upmap_items %s: %d items, want 1 to %d", pg, len(items), MaxPoolSize)
		}
		for _, it := range items {
			if it.From < 0 || it.To < 0 {
				return fmt.Errorf("pg_upmap_items %s: bad osd ids %d -> %d", pg, it.From, it.To)
			}
		}
		m.pgUpmapItems[pg] = slices.Clone(items)
	}
	return nil
}

// Spec returns a deep copy of the map's description (the CRUSH map, which
// is immutable, is shared). New(m.Spec()) builds an identical map.
func (m *Map) Spec() Spec {
	s := Spec{
		Epoch: m.epoch, FSID: m.fsid, Created: m.created, Modified: m.modified,
		Flags: m.flags, Crush: m.crush, OSDs: slices.Clone(m.osds), Pools: clonePools(m.pools),
		PoolMax: m.poolMax, PrimaryTemp: maps.Clone(m.primaryTemp),
		PGTemp: cloneLists(m.pgTemp), PGUpmap: cloneLists(m.pgUpmap), PGUpmapItems: cloneLists(m.pgUpmapItems),
		Ratios: m.ratios, Blocklist: maps.Clone(m.blocklist),
	}
	return s
}

func cloneLists[T any](in map[PG][]T) map[PG][]T {
	out := make(map[PG][]T, len(in))
	for k, v := range in {
		out[k] = slices.Clone(v)
	}
	return out
}

// sortedPGs returns the keys of a PG-keyed map in pool, seed order.
func sortedPGs[T any](in map[PG]T) []PG {
	return slices.SortedFunc(maps.Keys(in), ComparePG)
}

// clonePools returns a deep copy of pools.
func clonePools(pools []Pool) []Pool {
	out := make([]Pool, len(pools))
	for i := range pools {
		out[i] = pools[i].Clone()
	}
	return out
}

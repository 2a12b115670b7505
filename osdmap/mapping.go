package osdmap

import (
	"fmt"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/objid"
)

// Scratch is the working memory of the mapping methods. The zero value is
// ready to use. A Scratch belongs to one goroutine at a time; reuse it so
// that mapping allocates nothing (the first call, and the first after the
// CRUSH map changes, size its CRUSH workspace). Results returned by the
// mapping methods point into the Scratch and stay valid until its next use.
type Scratch struct {
	ws                        *crush.Workspace
	raw, upmapped, up, acting [MaxPoolSize]int32
}

func (s *Scratch) workspace(c *crush.Map) *crush.Workspace {
	if s.ws == nil {
		s.ws = c.NewWorkspace()
	}
	return s.ws
}

// Mapping is where one PG lives, as computed from one map.
type Mapping struct {
	// PG is the PG mapped, its seed reduced modulo the pool's pg_num.
	PG PG
	// PPS is the placement seed CRUSH was given.
	PPS uint32
	// Raw is CRUSH's result with nonexistent OSDs removed, before upmaps:
	// what osdmaptool calls "raw". RawPrimary is its first OSD.
	Raw        []int32
	RawPrimary int32
	// Up is Raw after upmaps, without down OSDs; UpPrimary is its primary
	// after primary affinity. Erasure pools keep crush.ItemNone holes.
	Up        []int32
	UpPrimary int32
	// Acting is the set that serves I/O: pg_temp if set, else Up.
	// ActingPrimary is primary_temp if set, else the first of pg_temp,
	// else UpPrimary. A primary of -1 means none.
	Acting        []int32
	ActingPrimary int32
}

// ObjectToPG returns the PG that object name (with its namespace and
// locator key; an empty key means the name) falls into in pool, reduced
// modulo the pool's pg_num.
func (m *Map) ObjectToPG(pool int64, name, nspace, key string) (PG, error) {
	p := m.Pool(pool)
	if p == nil {
		return PG{}, fmt.Errorf("%w: %d", ErrNoSuchPool, pool)
	}
	if key == "" {
		key = name
	}
	return p.HashToPG(objid.HashLocator(nspace, key)), nil
}

// ObjectIDToPG returns the PG that id falls into, from its Hash.
func (m *Map) ObjectIDToPG(id objid.ID) (PG, error) {
	p := m.Pool(id.Pool)
	if p == nil {
		return PG{}, fmt.Errorf("%w: %d", ErrNoSuchPool, id.Pool)
	}
	return p.HashToPG(id.Hash), nil
}

// PGToRawOSDs returns CRUSH's placement of pg with nonexistent OSDs
// removed (Ceph's pg_to_raw_osds), its first OSD (-1 for none) and the
// placement seed. pg may be raw.
func (m *Map) PGToRawOSDs(pg PG, s *Scratch) (raw []int32, primary int32, pps uint32, err error) {
	p := m.Pool(pg.Pool)
	if p == nil {
		return nil, -1, 0, fmt.Errorf("%w: %d", ErrNoSuchPool, pg.Pool)
	}
	raw, pps = m.rawOSDs(p, pg, s)
	return raw, pickPrimary(raw), pps, nil
}

// PGToUpActing maps pg to its up and acting sets and primaries, as Ceph's
// pg_to_up_acting_osds. pg may be raw (a full object hash as seed); the
// result names the reduced PG. It allocates nothing once s has warmed up.
func (m *Map) PGToUpActing(pg PG, s *Scratch) (Mapping, error) {
	p := m.Pool(pg.Pool)
	if p == nil {
		return Mapping{UpPrimary: -1, ActingPrimary: -1, RawPrimary: -1}, fmt.Errorf("%w: %d", ErrNoSuchPool, pg.Pool)
	}
	var r Mapping
	r.PG = p.RawPGToPG(pg)
	r.Raw, r.PPS = m.rawOSDs(p, pg, s)
	r.RawPrimary = pickPrimary(r.Raw)
	upmapped := m.applyUpmap(r.PG, r.Raw, s.upmapped[:0])
	r.Up = m.rawToUp(p, upmapped, s.up[:0])
	r.UpPrimary = pickPrimary(r.Up)
	if m.affinity {
		r.UpPrimary = m.applyPrimaryAffinity(r.PPS, p, r.Up, r.UpPrimary)
	}
	r.Acting, r.ActingPrimary = m.tempOSDs(p, r.PG, s.acting[:0])
	if len(r.Acting) == 0 {
		r.Acting = append(r.Acting, r.Up...)
		if r.ActingPrimary == -1 {
			r.ActingPrimary = r.UpPrimary
		}
	}
	m.checkMapping(p, &r)
	return r, nil
}

// rawOSDs runs CRUSH for pg and drops OSDs that do not exist (Ceph's
// _pg_to_raw_osds).
func (m *Map) rawOSDs(p *Pool, pg PG, s *Scratch) ([]int32, uint32) {
	pps := p.RawPGToPPS(pg)
	out := s.raw[:p.Size]
	n := m.crush.DoRule(s.workspace(m.crush), p.CrushRule, int32(pps), out, m.weights, m.crush.ChooseArgsFor(p.ID))
	return m.removeNonexistent(p, out[:n]), pps
}

// removeNonexistent drops OSDs that do not exist: replicated pools shift
// the rest left, erasure pools leave crush.ItemNone in their place.
func (m *Map) removeNonexistent(p *Pool, osds []int32) []int32 {
	if !p.CanShiftOSDs() {
		for i, o := range osds {
			if !m.Exists(o) {
				osds[i] = crush.ItemNone
			}
		}
		return osds
	}
	kept := osds[:0]
	for _, o := range osds {
		if m.Exists(o) {
			kept = append(kept, o)
		}
	}
	return kept
}

// pickPrimary returns the first OSD that is not a hole, or -1.
func pickPrimary(osds []int32) int32 {
	for _, o := range osds {
		if o != crush.ItemNone {
			return o
		}
	}
	return -1
}

// rawToUp removes OSDs that are down or do not exist (Ceph's
// _raw_to_up_osds), appending to up.
func (m *Map) rawToUp(p *Pool, raw, up []int32) []int32 {
	for _, o := range raw {
		switch {
		case m.IsUp(o):
			up = append(up, o)
		case !p.CanShiftOSDs():
			up = append(up, crush.ItemNone)
		}
	}
	return up
}

// applyPrimaryAffinity picks the up primary by primary affinity (Ceph's
// _apply_primary_affinity): each OSD in order is kept as primary unless
// hash(pps, osd) >> 16 reaches its affinity; if all are rejected the first
// rejected one is used. Replicated pools move the primary to the front.
func (m *Map) applyPrimaryAffinity(pps uint32, p *Pool, up []int32, primary int32) int32 {
	any := false
	for _, o := range up {
		if o != crush.ItemNone && m.osds[o].PrimaryAffinity != DefaultPrimaryAffinity {
			any = true
			break
		}
	}
	if !any {
		return primary
	}
	pos := -1
	for i, o := range up {
		if o == crush.ItemNone {
			continue
		}
		a := m.osds[o].PrimaryAffinity
		if a < DefaultPrimaryAffinity && crush.Hash2(pps, uint32(o))>>16 >= a {
			if pos < 0 {
				pos = i // fall back to the first rejected OSD
			}
			continue
		}
		pos = i
		break
	}
	if pos < 0 {
		return primary
	}
	primary = up[pos]
	if p.CanShiftOSDs() && pos > 0 {
		copy(up[1:pos+1], up[:pos])
		up[0] = primary
	}
	return primary
}

// tempOSDs returns pg's pg_temp with down and nonexistent OSDs removed (or
// replaced by holes in erasure pools), appended to acting, and the
// primary it implies: primary_temp, else the first of pg_temp, else -1
// (Ceph's _get_temp_osds).
func (m *Map) tempOSDs(p *Pool, pg PG, acting []int32) ([]int32, int32) {
	for _, o := range m.pgTemp[pg] {
		switch {
		case m.IsUp(o):
			acting = append(acting, o)
		case !p.CanShiftOSDs():
			acting = append(acting, crush.ItemNone)
		}
	}
	if osd, ok := m.primaryTemp[pg]; ok {
		return acting, osd
	}
	return acting, pickPrimary(acting)
}

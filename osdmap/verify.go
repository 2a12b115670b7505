package osdmap

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/invariants"
)

// checkMapping verifies a mapping PGToUpActing computed, in builds with
// the invariants tag (see internal/invariants): a primary outside its set
// or a down OSD in the acting set would send writes to the wrong OSD, and
// two results sharing scratch memory would corrupt each other silently.
func (m *Map) checkMapping(p *Pool, r *Mapping) {
	if invariants.Enabled {
		invariants.Check(m.verifyMapping(p, r))
	}
}

// verifyMapping reports the first broken invariant of r, computed from m
// for a PG of pool p:
//   - Raw holds at most the pool's size of OSDs, each existing;
//   - Up and Acting hold only up OSDs (and erasure pools' holes);
//   - RawPrimary and UpPrimary are -1 when their set has no OSD, and else
//     one of the set: Raw's first, and Up's first in a replicated pool;
//   - without primary_temp, ActingPrimary is likewise one of Acting;
//   - Raw, Up and Acting do not share memory.
func (m *Map) verifyMapping(p *Pool, r *Mapping) error {
	if len(r.Raw) > p.Size {
		return fmt.Errorf("osdmap: pg %v: raw %v longer than the pool's size %d", r.PG, r.Raw, p.Size)
	}
	for _, o := range r.Raw {
		if o != crush.ItemNone && !m.Exists(o) {
			return fmt.Errorf("osdmap: pg %v: raw %v holds osd.%d, which does not exist", r.PG, r.Raw, o)
		}
	}
	for _, set := range []struct {
		name string
		osds []int32
	}{{"up", r.Up}, {"acting", r.Acting}} {
		for _, o := range set.osds {
			if o != crush.ItemNone && !m.IsUp(o) {
				return fmt.Errorf("osdmap: pg %v: %s %v holds osd.%d, which is not up", r.PG, set.name, set.osds, o)
			}
		}
	}
	if r.RawPrimary != pickPrimary(r.Raw) {
		return fmt.Errorf("osdmap: pg %v: raw primary %d of raw %v", r.PG, r.RawPrimary, r.Raw)
	}
	if err := primaryOf("up", r.PG, r.Up, r.UpPrimary); err != nil {
		return err
	}
	if p.CanShiftOSDs() && len(r.Up) > 0 && r.Up[0] != r.UpPrimary {
		return fmt.Errorf("osdmap: pg %v: up primary %d is not first of up %v in a replicated pool", r.PG, r.UpPrimary, r.Up)
	}
	if _, temp := m.primaryTemp[r.PG]; !temp {
		if err := primaryOf("acting", r.PG, r.Acting, r.ActingPrimary); err != nil {
			return err
		}
	}
	if shared(r.Raw, r.Up) || shared(r.Raw, r.Acting) || shared(r.Up, r.Acting) {
		return fmt.Errorf("osdmap: pg %v: raw %v, up %v and acting %v share memory", r.PG, r.Raw, r.Up, r.Acting)
	}
	return nil
}

// primaryOf reports whether primary is -1 for a set without an OSD, and
// one of the set otherwise.
func primaryOf(name string, pg PG, osds []int32, primary int32) error {
	if none := pickPrimary(osds) == -1; none != (primary == -1) || !none && !slices.Contains(osds, primary) {
		return fmt.Errorf("osdmap: pg %v: %s primary %d of %s %v", pg, name, primary, name, osds)
	}
	return nil
}

// shared reports whether two non-empty slices share their first element's
// memory; the mapping's sets each live in their own array of the Scratch.
func shared(a, b []int32) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

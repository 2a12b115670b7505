package osdmap

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cuttlestore/cuttle/crush"
)

// Default fullness ratios (Ceph's mon_osd_nearfull_ratio,
// mon_osd_backfillfull_ratio and mon_osd_full_ratio). A map whose Spec
// leaves a ratio zero, or that was encoded before the ratios existed
// (map version 1), has these.
const (
	DefaultNearFullRatio     float32 = 0.85
	DefaultBackfillFullRatio float32 = 0.90
	DefaultFullRatio         float32 = 0.95
)

// Ratios are the fractions of an OSD's store capacity at which the
// monitors mark it nearfull (a warning), backfillfull (no backfill onto
// it) and full (no client writes to the pools that use it). Each is in
// (0, 1]; they are meant to rise in that order, and the monitors raise
// OSD_OUT_OF_ORDER_FULL when they do not.
type Ratios struct {
	NearFull     float32 `json:"nearfull_ratio"`
	BackfillFull float32 `json:"backfillfull_ratio"`
	Full         float32 `json:"full_ratio"`
}

// DefaultRatios returns Ceph's default ratios.
func DefaultRatios() Ratios {
	return Ratios{NearFull: DefaultNearFullRatio, BackfillFull: DefaultBackfillFullRatio, Full: DefaultFullRatio}
}

// withDefaults replaces zero ratios by the defaults.
func (r Ratios) withDefaults() Ratios {
	d := DefaultRatios()
	if r.NearFull == 0 {
		r.NearFull = d.NearFull
	}
	if r.BackfillFull == 0 {
		r.BackfillFull = d.BackfillFull
	}
	if r.Full == 0 {
		r.Full = d.Full
	}
	return r
}

// CheckRatio reports whether r is a usable ratio: in (0, 1].
func CheckRatio(name string, r float32) error {
	if math.IsNaN(float64(r)) || r <= 0 || r > 1 {
		return fmt.Errorf("%s %v out of (0, 1]", name, r)
	}
	return nil
}

func (r Ratios) validate() error {
	for _, c := range []struct {
		name string
		v    float32
	}{{"nearfull_ratio", r.NearFull}, {"backfillfull_ratio", r.BackfillFull}, {"full_ratio", r.Full}} {
		if err := CheckRatio(c.name, c.v); err != nil {
			return err
		}
	}
	return nil
}

// InOrder reports whether nearfull <= backfillfull <= full.
func (r Ratios) InOrder() bool { return r.NearFull <= r.BackfillFull && r.BackfillFull <= r.Full }

// FullnessBits are the OSD state bits the monitors set from an OSD's
// usage.
const FullnessBits = OSDNearFull | OSDBackfillFull | OSDFull

// Fullness returns the one fullness bit (or none) that an OSD using used
// of total bytes gets under r, as Ceph's monitors decide it: full at or
// above the full ratio, else backfillfull at or above that ratio, else
// nearfull at or above that one. An OSD with no capacity reported is none
// of them.
func (r Ratios) Fullness(used, total uint64) OSDState {
	if total == 0 {
		return 0
	}
	// In float32, as the ratios are: 85 of 100 is at 0.85.
	u := float32(float64(used) / float64(total))
	switch {
	case u >= r.Full:
		return OSDFull
	case u >= r.BackfillFull:
		return OSDBackfillFull
	case u >= r.NearFull:
		return OSDNearFull
	}
	return 0
}

// Ratios returns the map's fullness ratios.
func (m *Map) Ratios() Ratios { return m.ratios }

// IsFull reports whether OSD id is marked full.
func (m *Map) IsFull(id int32) bool { return m.OSD(id).State&OSDFull != 0 }

// IsBackfillFull reports whether OSD id is marked backfillfull or full:
// backfill must not push data onto it.
func (m *Map) IsBackfillFull(id int32) bool {
	return m.OSD(id).State&(OSDBackfillFull|OSDFull) != 0
}

// FullOSDs returns, in id order, the existing OSDs marked full.
func (m *Map) FullOSDs() []int32 {
	var ids []int32
	for i := range m.osds {
		if m.osds[i].Exists() && m.osds[i].State&OSDFull != 0 {
			ids = append(ids, int32(i))
		}
	}
	return ids
}

// RuleOSDs returns, in id order, the devices that pool p's CRUSH rule can
// place data on: every device under the buckets its take steps name (the
// class's shadow tree for a take restricted to a class).
func (m *Map) RuleOSDs(p *Pool) []int32 {
	r := m.crush.Rule(p.CrushRule)
	if r == nil {
		return nil
	}
	seen := map[int32]bool{}
	var walk func(id int32)
	walk = func(id int32) {
		if id >= 0 {
			seen[id] = true
			return
		}
		b := m.crush.Bucket(id)
		if b == nil {
			return
		}
		for _, it := range b.Items {
			walk(it)
		}
	}
	for _, st := range r.Steps {
		if st.Op == crush.OpTake {
			walk(st.Arg1)
		}
	}
	ids := make([]int32, 0, len(seen))
	for id := range m.osds {
		if seen[int32(id)] {
			ids = append(ids, int32(id))
		}
	}
	return ids
}

// PoolFullOSDs returns the OSDs that make pool p full: those its rule can
// place data on that exist, are in and are marked full.
func (m *Map) PoolFullOSDs(p *Pool) []int32 {
	var ids []int32
	for _, id := range m.RuleOSDs(p) {
		if m.IsIn(id) && m.IsFull(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// FormatRatio prints a ratio as the decimal it was set as ("0.95"), not
// as its float32 value widened ("0.949999988").
func FormatRatio(r float32) string { return strconv.FormatFloat(float64(r), 'g', -1, 32) }

// Ratio64 is r as the float64 of that decimal, for arithmetic in float64.
func Ratio64(r float32) float64 {
	f, _ := strconv.ParseFloat(FormatRatio(r), 64)
	return f
}

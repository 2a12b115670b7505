package osdmap

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/crush"
)

// ErrRuleViolation is the class of errors RuleLimits.Check returns: a set
// of OSDs the pool's CRUSH rule could never have chosen (two copies in
// one failure domain, an OSD outside the rule's root).
var ErrRuleViolation = errors.New("osdmap: placement breaks the crush rule")

// RuleLimits are the constraints a pool's CRUSH rule puts on the set of
// OSDs that hold one of its PGs, as Ceph's CrushWrapper::verify_upmap
// checks them before an upmap is accepted: every OSD lies under the
// rule's take item (the device class's shadow tree for a class rule),
// no OSD appears twice, and no failure domain holds more copies than the
// rule gives it. For "take root; chooseleaf_firstn 0 type host; emit"
// that is one copy per host; for "choose_firstn 2 type rack;
// chooseleaf_firstn 2 type host" it is two per rack and one per host.
//
// It also carries each eligible OSD's CRUSH weight under the take item,
// which is what the balancer weighs its targets by.
type RuleLimits struct {
	levels []limitLevel
	// osds maps each OSD under the take item to its ancestors, one per
	// level (the OSD itself where the hierarchy has no bucket of the
	// level's type), and its CRUSH weight.
	osds map[int32]limitOSD
}

type limitLevel struct {
	typ int32 // CRUSH bucket type
	max int   // copies one bucket of the type may hold
}

type limitOSD struct {
	domains []int32
	weight  uint32
}

// PoolRuleLimits returns the constraints pool p's rule puts on its PGs.
// Rules with more than one take step, or with a choose step before a take,
// are refused (errors.Is ErrRuleViolation): Cuttle does not reason about
// them, and neither places upmaps on such pools.
func (m *Map) PoolRuleLimits(p *Pool) (*RuleLimits, error) {
	cm := m.crush
	r := cm.Rule(p.CrushRule)
	if r == nil {
		return nil, fmt.Errorf("%w: pool %d: no crush rule %d", ErrRuleViolation, p.ID, p.CrushRule)
	}
	take, takes := int32(0), 0
	var chooses []crush.Step
	for _, st := range r.Steps {
		switch {
		case st.Op == crush.OpTake:
			take, takes = st.Arg1, takes+1
		case st.Op.IsChoose():
			if takes == 0 {
				return nil, fmt.Errorf("%w: rule %s chooses before it takes", ErrRuleViolation, r.Name)
			}
			chooses = append(chooses, st)
		}
	}
	if takes != 1 {
		return nil, fmt.Errorf("%w: rule %s has %d take steps; only single-take rules are supported", ErrRuleViolation, r.Name, takes)
	}
	l := &RuleLimits{osds: map[int32]limitOSD{}}
	for i, st := range chooses {
		if st.Arg2 <= 0 {
			continue // a choice among devices: only distinctness
		}
		// A bucket of this step's type holds what the later steps
		// choose inside it; a chooseleaf step puts one device in each.
		per := 1
		if st.Op == crush.OpChooseFirstN || st.Op == crush.OpChooseIndep {
			for _, later := range chooses[i+1:] {
				per *= numRep(later.Arg1, p.Size)
			}
		}
		l.levels = append(l.levels, limitLevel{typ: st.Arg2, max: max(per, 1)})
	}
	var path []int32
	var walk func(item int32, weight uint32)
	walk = func(item int32, weight uint32) {
		if item >= 0 {
			if _, seen := l.osds[item]; seen {
				return
			}
			o := limitOSD{domains: make([]int32, len(l.levels)), weight: weight}
			for i, lv := range l.levels {
				o.domains[i] = item
				for _, b := range slices.Backward(path) {
					if cm.Bucket(b).Type == lv.typ {
						o.domains[i] = b
						break
					}
				}
			}
			l.osds[item] = o
			return
		}
		b := cm.Bucket(item)
		if b == nil || slices.Contains(path, item) {
			return
		}
		path = append(path, item)
		for i, it := range b.Items {
			walk(it, b.Weights[i])
		}
		path = path[:len(path)-1]
	}
	walk(take, crush.WeightOne)
	return l, nil
}

// numRep resolves a choose step's count against the pool size, as CRUSH
// does: zero or less means size plus the count.
func numRep(n int32, size int) int {
	if n <= 0 {
		return max(size+int(n), 1)
	}
	return int(n)
}

// Eligible reports whether the rule can place data on osd (it lies under
// the rule's take item).
func (l *RuleLimits) Eligible(osd int32) bool {
	_, ok := l.osds[osd]
	return ok
}

// CrushWeight returns osd's CRUSH weight (16.16) under the rule's take
// item, 0 for an OSD the rule cannot use.
func (l *RuleLimits) CrushWeight(osd int32) uint32 { return l.osds[osd].weight }

// OSDs returns the OSDs under the rule's take item, in id order.
func (l *RuleLimits) OSDs() []int32 {
	out := make([]int32, 0, len(l.osds))
	for id := range l.osds {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Check verifies that osds (a PG's set; crush.ItemNone holes of erasure
// pools are skipped) is one the rule allows. Its errors wrap
// ErrRuleViolation.
func (l *RuleLimits) Check(osds []int32) error {
	for i, o := range osds {
		if o == crush.ItemNone {
			continue
		}
		if !l.Eligible(o) {
			return fmt.Errorf("%w: osd.%d is not under the rule's root", ErrRuleViolation, o)
		}
		if slices.Contains(osds[:i], o) {
			return fmt.Errorf("%w: osd.%d appears twice", ErrRuleViolation, o)
		}
	}
	for li, lv := range l.levels {
		for i, o := range osds {
			if o == crush.ItemNone {
				continue
			}
			d, n := l.osds[o].domains[li], 1
			for _, other := range osds[i+1:] {
				if other != crush.ItemNone && l.osds[other].domains[li] == d {
					n++
				}
			}
			if n > lv.max {
				return fmt.Errorf("%w: %d copies share failure domain %d (type %d), the rule allows %d",
					ErrRuleViolation, n, d, lv.typ, lv.max)
			}
		}
	}
	return nil
}

// Upmapped returns pg's set after its upmaps, before down OSDs are
// dropped: the set RuleLimits.Check judges. It appends to out.
func (m *Map) Upmapped(pg PG, s *Scratch, out []int32) ([]int32, error) {
	raw, _, _, err := m.PGToRawOSDs(pg, s)
	if err != nil {
		return out, err
	}
	return m.applyUpmap(pg, raw, out), nil
}

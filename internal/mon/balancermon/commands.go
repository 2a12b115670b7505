package balancermon

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

func (s *Service) prepareOn(moncmd.Command) ([]byte, moncmd.Reply) {
	if s.st.active {
		return nil, moncmd.Reply{Status: "the balancer is already on"}
	}
	next := s.st.clone()
	next.active = true
	return s.propose(next, "balancer on (mode "+next.mode+")")
}

func (s *Service) prepareOff(moncmd.Command) ([]byte, moncmd.Reply) {
	if !s.st.active {
		return nil, moncmd.Reply{Status: "the balancer is already off"}
	}
	next := s.st.clone()
	next.active = false
	return s.propose(next, "balancer off")
}

func (s *Service) prepareMode(c moncmd.Command) ([]byte, moncmd.Reply) {
	mode, err := c.Str("mode")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	if mode != ModeNone && mode != ModeUpmap {
		return nil, moncmd.Errorf(moncmd.EINVAL, "balancer mode %q: want %s or %s (crush-compat is not supported)", mode, ModeUpmap, ModeNone)
	}
	if s.st.mode == mode {
		return nil, moncmd.Reply{Status: "balancer mode is already " + mode}
	}
	next := s.st.clone()
	next.mode = mode
	return s.propose(next, "balancer mode "+mode)
}

// prepareOptimize handles "balancer optimize plan [pools]": it computes
// a plan on the applied map and stores it under its name.
func (s *Service) prepareOptimize(c moncmd.Command) ([]byte, moncmd.Reply) {
	name, err := c.Str("plan")
	if err != nil || name == "" || len(name) > maxName {
		return nil, moncmd.Errorf(moncmd.EINVAL, "balancer optimize: a plan name of 1 to %d bytes is needed", maxName)
	}
	m := s.cfg.Map()
	if m == nil {
		return nil, errNoMap()
	}
	pools, r := resolvePools(m, c.StrOr("pools", ""))
	if r != nil {
		return nil, *r
	}
	if _, exists := s.st.plan(name); !exists && len(s.st.plans) >= maxPlans {
		return nil, moncmd.Errorf(moncmd.EBUSY, "balancer optimize: %d plans stored; remove some (balancer rm PLAN)", maxPlans)
	}
	if s.st.mode != ModeUpmap {
		return nil, moncmd.Errorf(moncmd.EINVAL, "balancer optimize: mode is %s; set balancer mode upmap first", s.st.mode)
	}
	bp := balancer.Optimize(m, s.options(pools))
	if bp.Empty() {
		return nil, moncmd.Reply{Status: fmt.Sprintf("no plan stored: nothing to move (every OSD within %d PG copies of its target, or no move allowed helps)",
			max(s.options(nil).MaxDeviation, balancer.DefaultMaxDeviation))}
	}
	items, rm := planArgs(bp)
	next := s.st.clone()
	next.putPlan(plan{name: name, epoch: bp.Epoch, pools: pools, items: items, rm: rm, moves: bp.Moves})
	return s.propose(next, fmt.Sprintf("plan %s: %d moves at epoch %d", name, len(bp.Moves), bp.Epoch))
}

func (s *Service) prepareRm(c moncmd.Command) ([]byte, moncmd.Reply) {
	name, err := c.Str("plan")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	if _, ok := s.st.plan(name); !ok {
		return nil, moncmd.Errorf(moncmd.ENOENT, "no plan %q (balancer status lists them)", name)
	}
	next := s.st.clone()
	next.plans = slices.DeleteFunc(next.plans, func(p plan) bool { return p.name == name })
	return s.propose(next, "removed plan "+name)
}

// resolvePools reads pool names or ids separated by commas or spaces.
func resolvePools(m *osdmap.Map, v string) ([]int64, *moncmd.Reply) {
	var out []int64
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		p := m.PoolByName(f)
		if p == nil {
			if id, err := strconv.ParseInt(f, 10, 64); err == nil {
				p = m.Pool(id)
			}
		}
		if p == nil {
			r := moncmd.Errorf(moncmd.ENOENT, "pool %q does not exist", f)
			return nil, &r
		}
		if !slices.Contains(out, p.ID) {
			out = append(out, p.ID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// planArgs turns a plan into the items and rm arguments of "osd
// pg-upmap-plan".
func planArgs(p *balancer.Plan) (items, rm string) {
	var ents, rms []string
	for _, pg := range slices.SortedFunc(maps.Keys(p.Changes.Items), osdmap.ComparePG) {
		e := pg.String()
		for _, it := range p.Changes.Items[pg] {
			e += fmt.Sprintf(" %d %d", it.From, it.To)
		}
		ents = append(ents, e)
	}
	for _, pg := range p.Changes.RmItems {
		rms = append(rms, pg.String())
	}
	return strings.Join(ents, ";"), strings.Join(rms, " ")
}

func errNoMap() moncmd.Reply {
	return moncmd.Errorf(moncmd.ENOENT, "no OSD map yet: the cluster was not created")
}

func replyJSON(v any, text string) moncmd.Reply {
	data, err := json.Marshal(v)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "balancermon: encoding reply: %v", err)
	}
	return moncmd.Reply{Data: data, Text: text}
}

package balancermon

import (
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// StatusView is "balancer status".
type StatusView struct {
	Active bool     `json:"active"`
	Mode   string   `json:"mode"`
	Plans  []string `json:"plans"`
	// LastOptimize and LastResult are this monitor's last automatic
	// round (the leader runs them), when it ran one.
	LastOptimize string `json:"last_optimize_started,omitempty"`
	LastResult   string `json:"last_optimize_result,omitempty"`
	// Score is the applied map's, as "balancer eval" gives it.
	Score float64 `json:"score"`
}

func (s *Service) queryStatus(moncmd.Command) moncmd.Reply {
	v := StatusView{Active: s.st.active, Mode: s.st.mode, Plans: []string{}, LastResult: s.lastResult}
	if !s.lastRound.IsZero() {
		v.LastOptimize = s.lastRound.UTC().Format("2006-01-02T15:04:05Z")
	}
	for _, p := range s.st.plans {
		v.Plans = append(v.Plans, p.name)
	}
	if m := s.cfg.Map(); m != nil {
		v.Score = balancer.Eval(m, nil).Score
	}
	var b strings.Builder
	fmt.Fprintf(&b, "active %v\nmode %s\nscore %.6f\nplans %s\n", v.Active, v.Mode, v.Score, strings.Join(v.Plans, " "))
	if v.LastOptimize != "" {
		fmt.Fprintf(&b, "last round %s: %s\n", v.LastOptimize, v.LastResult)
	}
	return replyJSON(v, b.String())
}

// queryEval handles "balancer eval [pools] [plan]": the applied map's
// spread, or the spread the plan would make of the map it was made on.
func (s *Service) queryEval(c moncmd.Command) moncmd.Reply {
	m := s.cfg.Map()
	if m == nil {
		return errNoMap()
	}
	pools, r := resolvePools(m, c.StrOr("pools", ""))
	if r != nil {
		return *r
	}
	if name := c.StrOr("plan", ""); name != "" {
		p, ok := s.st.plan(name)
		if !ok {
			return moncmd.Errorf(moncmd.ENOENT, "no plan %q (balancer status lists them)", name)
		}
		if p.epoch != m.Epoch() {
			return moncmd.Errorf(moncmd.EBUSY, "plan %s was made at epoch %d and the map is at %d: make it again", name, p.epoch, m.Epoch())
		}
		after, err := applyPlan(m, p)
		if err != nil {
			return moncmd.Errorf(moncmd.EINVAL, "plan %s: %v", name, err)
		}
		m = after
	}
	ev := balancer.Eval(m, pools)
	return replyJSON(ev, ev.Text())
}

// applyPlan returns the map p makes of m (its epoch), for evaluation.
func applyPlan(m *osdmap.Map, p plan) (*osdmap.Map, error) {
	inc := m.NewIncremental()
	for _, e := range strings.Split(p.items, ";") {
		f := strings.Fields(e)
		if len(f) == 0 {
			continue
		}
		pg, err := osdmap.ParsePG(f[0])
		if err != nil {
			return nil, err
		}
		var items []osdmap.UpmapItem
		for i := 1; i+1 < len(f); i += 2 {
			var it osdmap.UpmapItem
			if _, err := fmt.Sscan(f[i], &it.From); err != nil {
				return nil, err
			}
			if _, err := fmt.Sscan(f[i+1], &it.To); err != nil {
				return nil, err
			}
			items = append(items, it)
		}
		if inc.NewPGUpmapItems == nil {
			inc.NewPGUpmapItems = map[osdmap.PG][]osdmap.UpmapItem{}
		}
		inc.NewPGUpmapItems[pg] = items
	}
	for _, f := range strings.Fields(p.rm) {
		pg, err := osdmap.ParsePG(f)
		if err != nil {
			return nil, err
		}
		if m.PGUpmapItems(pg) != nil {
			inc.OldPGUpmapItems = append(inc.OldPGUpmapItems, pg)
		}
	}
	return m.Apply(inc)
}

// MoveView is one move of a plan in "balancer show".
type MoveView struct {
	PG   string `json:"pgid"`
	From int32  `json:"from"`
	To   int32  `json:"to"`
}

// ShowView is "balancer show": a plan, and the command that executes it.
type ShowView struct {
	Name    string     `json:"name"`
	Epoch   uint32     `json:"epoch"`
	Pools   []int64    `json:"pools"`
	Moves   []MoveView `json:"moves"`
	Command struct {
		Prefix string            `json:"prefix"`
		Args   map[string]string `json:"args"`
	} `json:"command"`
}

func (s *Service) queryShow(c moncmd.Command) moncmd.Reply {
	name, err := c.Str("plan")
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL)
	}
	p, ok := s.st.plan(name)
	if !ok {
		return moncmd.Errorf(moncmd.ENOENT, "no plan %q (balancer status lists them)", name)
	}
	v := ShowView{Name: p.name, Epoch: uint32(p.epoch), Pools: p.pools, Moves: []MoveView{}}
	if v.Pools == nil {
		v.Pools = []int64{}
	}
	cmd := planCommand(p.epoch, p.items, p.rm)
	v.Command.Prefix, v.Command.Args = cmd.Prefix, cmd.Args
	var b strings.Builder
	fmt.Fprintf(&b, "# plan %s, made at osdmap epoch %d\n", p.name, p.epoch)
	for _, mv := range p.moves {
		v.Moves = append(v.Moves, MoveView{PG: mv.PG.String(), From: mv.From, To: mv.To})
		fmt.Fprintf(&b, "# move pg %s: osd.%d -> osd.%d\n", mv.PG, mv.From, mv.To)
	}
	for _, e := range strings.Split(p.items, ";") {
		if f := strings.Fields(e); len(f) > 0 {
			fmt.Fprintf(&b, "cuttle osd pg-upmap-items %s\n", strings.Join(f, " "))
		}
	}
	for _, pg := range strings.Fields(p.rm) {
		fmt.Fprintf(&b, "cuttle osd rm-pg-upmap-items %s\n", pg)
	}
	return replyJSON(v, b.String())
}

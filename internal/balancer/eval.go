package balancer

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/osdmap"
)

// PoolEval is the spread of one pool's PG copies over its OSDs.
type PoolEval struct {
	Pool int64  `json:"pool"`
	Name string `json:"pool_name"`
	// OSDs counts the OSDs that share the pool's copies (in, under the
	// rule's root); Copies counts the copies on them.
	OSDs   int `json:"osds"`
	Copies int `json:"pg_copies"`
	// Min, Max and Stddev are of the copies per OSD (stddev about the
	// mean, unweighted); MaxDeviation is the largest distance of an
	// OSD's copies from its weighted target.
	Min          int     `json:"min"`
	Max          int     `json:"max"`
	Mean         float64 `json:"mean"`
	Stddev       float64 `json:"stddev"`
	MaxDeviation float64 `json:"max_deviation"`
	// Score is 0 for a perfect spread and grows towards 1: the sum, over
	// overfull OSDs, of the OSD's share of the weight times
	// erf(relative excess / sqrt 2), as Ceph's balancer scores.
	Score float64 `json:"score"`
	// Skipped says why the pool was not judged (its rule), if it was not.
	Skipped string `json:"skipped,omitempty"`
}

// Evaluation scores a map: each pool's spread and the overall score, the
// pools' scores weighted by their copies.
type Evaluation struct {
	Epoch osdmap.Epoch `json:"epoch"`
	Score float64      `json:"score"`
	Pools []PoolEval   `json:"pools"`
}

// Eval scores m's spread of PG copies, for pools (empty: every pool).
func Eval(m *osdmap.Map, pools []int64) Evaluation {
	ev := Evaluation{Epoch: m.Epoch(), Pools: []PoolEval{}}
	copies := 0
	for _, p := range m.Pools() {
		if len(pools) > 0 && !slices.Contains(pools, p.ID) {
			continue
		}
		pe := PoolEval{Pool: p.ID, Name: p.Name}
		st, err := newPoolState(m, &p)
		if err != nil {
			pe.Skipped = err.Error()
			ev.Pools = append(ev.Pools, pe)
			continue
		}
		pe = st.eval()
		ev.Pools = append(ev.Pools, pe)
		ev.Score += pe.Score * float64(pe.Copies)
		copies += pe.Copies
	}
	if copies > 0 {
		ev.Score /= float64(copies)
	}
	return ev
}

func (st *poolState) eval() PoolEval {
	pe := PoolEval{Pool: st.pool.ID, Name: st.pool.Name, OSDs: len(st.osds)}
	if len(st.osds) == 0 {
		return pe
	}
	total := 0.0
	pe.Min = math.MaxInt
	for _, o := range st.osds {
		c := st.count[o]
		pe.Copies += c
		pe.Min, pe.Max = min(pe.Min, c), max(pe.Max, c)
		total += st.weight[o]
	}
	pe.Mean = float64(pe.Copies) / float64(len(st.osds))
	for _, o := range st.osds {
		d := float64(st.count[o]) - pe.Mean
		pe.Stddev += d * d
		pe.MaxDeviation = max(pe.MaxDeviation, math.Abs(st.dev(o)))
		if t := st.target[o]; t > 0 && st.dev(o) > 0 {
			pe.Score += st.weight[o] / total * math.Erf(st.dev(o)/t/math.Sqrt2)
		}
	}
	pe.Stddev = math.Sqrt(pe.Stddev / float64(len(st.osds)))
	return pe
}

// Text formats the evaluation for people, one line per pool.
func (ev Evaluation) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %d score %.6f (lower is better)\n", ev.Epoch, ev.Score)
	for _, p := range ev.Pools {
		if p.Skipped != "" {
			fmt.Fprintf(&b, "pool %d (%s): skipped: %s\n", p.Pool, p.Name, p.Skipped)
			continue
		}
		fmt.Fprintf(&b, "pool %d (%s): %d pg copies on %d osds: min %d max %d mean %.2f stddev %.3f max deviation %.2f score %.6f\n",
			p.Pool, p.Name, p.Copies, p.OSDs, p.Min, p.Max, p.Mean, p.Stddev, p.MaxDeviation, p.Score)
	}
	return b.String()
}

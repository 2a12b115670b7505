package balancermon

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Modes the balancer knows. "none" computes nothing; "upmap" places
// pg_upmap_items.
const (
	ModeNone  = "none"
	ModeUpmap = "upmap"
)

// Limits on decoded state.
const (
	maxPlans    = 64
	maxName     = 128
	maxMoves    = 1 << 16
	maxPools    = 1 << 10
	maxCmdBytes = 8 << 20
)

// state is the service's replicated state:
//
//	envelope v1 (compat 1) {
//	  version uvarint, active bool, mode string,
//	  plans count uvarint, each: name string, epoch u32,
//	    pools count, varint each; items string; rm string;
//	    moves count, each: pool varint, seed uvarint, from varint, to varint
//	}
//
// version counts the applied changes; a proposal names the version it
// was prepared against.
type state struct {
	version uint64
	active  bool
	mode    string
	plans   []plan // by name
}

// plan is a stored "balancer optimize" result.
type plan struct {
	name  string
	epoch osdmap.Epoch
	pools []int64
	// items and rm are the arguments of "osd pg-upmap-plan".
	items string
	rm    string
	moves []balancer.Move
}

func newState() state { return state{mode: ModeUpmap} }

func (st state) clone() state {
	st.plans = slices.Clone(st.plans)
	return st
}

func (st state) plan(name string) (plan, bool) {
	i := slices.IndexFunc(st.plans, func(p plan) bool { return p.name == name })
	if i < 0 {
		return plan{}, false
	}
	return st.plans[i], true
}

// putPlan adds or replaces p, keeping the plans sorted by name.
func (st *state) putPlan(p plan) {
	st.plans = slices.DeleteFunc(st.plans, func(q plan) bool { return q.name == p.name })
	i, _ := slices.BinarySearchFunc(st.plans, p.name, func(q plan, n string) int { return strings.Compare(q.name, n) })
	st.plans = slices.Insert(st.plans, i, p)
}

func (st state) encode(e *encoding.Encoder) {
	m := e.Begin(1, 1)
	e.Uvarint(st.version)
	e.Bool(st.active)
	e.String(st.mode)
	e.Uvarint(uint64(len(st.plans)))
	for _, p := range st.plans {
		e.String(p.name)
		e.Uint32(uint32(p.epoch))
		e.Uvarint(uint64(len(p.pools)))
		for _, id := range p.pools {
			e.Varint(id)
		}
		e.String(p.items)
		e.String(p.rm)
		e.Uvarint(uint64(len(p.moves)))
		for _, mv := range p.moves {
			e.Varint(mv.PG.Pool)
			e.Uvarint(uint64(mv.PG.Seed))
			e.Varint(int64(mv.From))
			e.Varint(int64(mv.To))
		}
	}
	e.End(m)
}

func decodeState(d *encoding.Decoder) state {
	d.Begin(1)
	st := state{version: d.Uvarint(), active: d.Bool(), mode: d.String(maxName)}
	if d.Err() == nil && st.mode != ModeNone && st.mode != ModeUpmap {
		d.Fail(fmt.Errorf("%w: balancer mode %q", encoding.ErrCorrupt, st.mode))
	}
	n := d.Count(1)
	if n > maxPlans {
		d.Fail(fmt.Errorf("%w: %d plans", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		p := plan{name: d.String(maxName), epoch: osdmap.Epoch(d.Uint32())}
		np := d.Count(1)
		if np > maxPools {
			d.Fail(fmt.Errorf("%w: %d pools", encoding.ErrCorrupt, np))
		}
		for j := 0; j < np && d.Err() == nil; j++ {
			p.pools = append(p.pools, d.Varint())
		}
		p.items, p.rm = d.String(maxCmdBytes), d.String(maxCmdBytes)
		nm := d.Count(4)
		if nm > maxMoves {
			d.Fail(fmt.Errorf("%w: %d moves", encoding.ErrCorrupt, nm))
		}
		for j := 0; j < nm && d.Err() == nil; j++ {
			pool, seed := d.Varint(), d.Uvarint()
			from, to := d.Varint(), d.Varint()
			if d.Err() == nil && (seed > 1<<32-1 || from < 0 || to < 0 || from >= osdmap.MaxOSDs || to >= osdmap.MaxOSDs) {
				d.Fail(fmt.Errorf("%w: move %d.%x %d->%d", encoding.ErrCorrupt, pool, seed, from, to))
			}
			p.moves = append(p.moves, balancer.Move{PG: osdmap.PG{Pool: pool, Seed: uint32(seed)}, From: int32(from), To: int32(to)})
		}
		if d.Err() == nil && (p.name == "" || (i > 0 && st.plans[i-1].name >= p.name)) {
			d.Fail(fmt.Errorf("%w: plan name %q out of order", encoding.ErrCorrupt, p.name))
		}
		st.plans = append(st.plans, p)
	}
	d.End()
	return st
}

// proposal is a change of the state: the whole next state, and the
// reply the client gets.
//
//	envelope v1 (compat 1) { base uvarint, state, status string, text string }
type proposal struct {
	base   uint64
	next   state
	status string
}

func (p proposal) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(p.base)
	p.next.encode(&e)
	e.String(p.status)
	e.End(m)
	return e.Data()
}

func decodeProposal(b []byte) (proposal, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	p := proposal{base: d.Uvarint()}
	p.next = decodeState(d)
	p.status = d.String(maxCmdBytes)
	d.End()
	if err := d.Finish(); err != nil {
		return proposal{}, fmt.Errorf("balancermon: proposal: %w", err)
	}
	return p, nil
}

func encodeState(st state) []byte {
	var e encoding.Encoder
	st.encode(&e)
	return e.Data()
}

func decodeStateBytes(b []byte) (state, error) {
	d := encoding.NewDecoder(b)
	st := decodeState(d)
	if err := d.Finish(); err != nil {
		return state{}, fmt.Errorf("balancermon: state: %w", err)
	}
	return st, nil
}

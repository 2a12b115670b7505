package osd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/osd/peering"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Temporary acting sets (pg_temp). When CRUSH makes primary an OSD whose
// history of the PG ends before the authority's log begins (a new OSD, or
// one back from a long absence), that OSD would have to copy the whole
// PG before serving. Instead it asks the monitors for a temporary acting
// set led by the authority, with the complete members of the old acting
// set and, last, the OSDs that need the copy. The PG serves from the old
// members while the new ones are backfilled behind client I/O; once
// every member is complete, the primary removes the temporary set and
// CRUSH's choice takes over, with nothing left to copy.

// tempActing returns the acting set to ask for: the authority, the
// complete members (current ones first, then those of past intervals,
// until the pool's size is reached), then the members to backfill.
func (p *pg) tempActing(m *osdmap.Map, plan peering.Result, members []peering.Member, replicas []int32) []int32 {
	p.mu.Lock()
	size := p.pool.Size
	p.mu.Unlock()
	self := p.o.cfg.ID
	complete := func(x int32) bool { return !slices.Contains(plan.Backfill, x) }
	temp := []int32{plan.Auth}
	for _, x := range replicas {
		if complete(x) && !slices.Contains(temp, x) {
			temp = append(temp, x)
		}
	}
	for _, mem := range members {
		x := mem.OSD
		if len(temp) >= size {
			break
		}
		if x != self && complete(x) && m.IsUp(x) && mem.Info.LastUpdate != (wire.Version{}) && !slices.Contains(temp, x) {
			temp = append(temp, x)
		}
	}
	for _, x := range append([]int32{self}, replicas...) {
		if !complete(x) && !slices.Contains(temp, x) {
			temp = append(temp, x)
		}
	}
	return temp
}

// requestTemp asks the monitors for temp as the PG's acting set and waits
// for the interval to end (the map that carries it). Should the map
// leave the acting set as it was (its first OSDs went down meanwhile),
// peering starts over.
func (p *pg) requestTemp(r *peerRun, temp []int32) error {
	p.step(r, fmt.Sprintf("asking for pg_temp %v to backfill this OSD while others serve", temp))
	p.o.log.Info("peering: asking for a temporary acting set", "pg", p.id.String(), "pg_temp", temp)
	if err := p.setTemp(temp); err != nil {
		return err
	}
	timer := p.o.cfg.Clock.NewTimer(peerAnswerWait)
	defer timer.Stop()
	select {
	case <-r.done:
		return errIntervalEnded
	case <-p.o.ctx.Done():
		return errIntervalEnded
	case <-timer.C():
		return fmt.Errorf("pg_temp %v did not change the acting set: %w", temp, errPriorChanged)
	}
}

// clearTemp removes the PG's temporary acting set once every member is
// complete, trying again while the monitors cannot be reached.
func (p *pg) clearTemp(r *peerRun, m *osdmap.Map) {
	m = p.newerMap(m)
	if m.PGTemp(p.id) == nil {
		return
	}
	p.o.log.Info("recovery: every member is complete; removing the temporary acting set", "pg", p.id.String())
	for {
		err := p.setTemp(nil)
		if err == nil {
			return
		}
		p.o.log.Warn("cannot remove pg_temp; trying again", "pg", p.id.String(), "err", err)
		if !p.rest(r, peerRetry) {
			return
		}
	}
}

// setTemp sends "osd pg-temp" (osds empty: remove).
func (p *pg) setTemp(osds []int32) error {
	ids := make([]string, len(osds))
	for i, x := range osds {
		ids[i] = strconv.Itoa(int(x))
	}
	ctx, cancel := context.WithTimeout(p.o.ctx, peerAnswerWait)
	defer cancel()
	reply, err := p.o.mon.Run(ctx, wire.NewCommand("osd pg-temp", "pgid", p.id.String(), "osds", strings.Join(ids, ",")))
	if err == nil {
		err = reply.Err()
	}
	if err != nil {
		return fmt.Errorf("osd pg-temp %v %v: %w", p.id, osds, err)
	}
	return nil
}

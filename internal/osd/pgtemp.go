package osd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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
// CRUSH's choice takes over, with nothing left to copy. Peering chooses
// the set (peering.TempActing) and waits for the map that brings it
// (peering.Machine); this file talks to the monitors.

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

package osd

import (
	"context"
	"fmt"
	"sync"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// up_thru. Before a primary activates a PG in a new interval, the map
// must record its up_thru at or after the interval's start (peering asks
// with peering.RequestUpThru and waits for peering.UpThruRecorded): an
// interval whose primary's up_thru never reached its start never went
// read-write, and later peering neither asks nor waits for its OSDs
// (peering.BuildIntervals). Every PG's request goes through one upThru
// per OSD, which sends the monitors one "osd alive" for the highest
// epoch wanted (as Ceph's OSD coalesces its MOSDAlive), and tells each
// waiting peering when a map it activates records enough.

// upThru coalesces the PGs' requests for this OSD's up_thru.
type upThru struct {
	mu      sync.Mutex
	waiters map[*peerRun]uint64 // peering runs waiting, and the epoch each wants
	kick    chan struct{}       // wakes upThruLoop
}

// upThruRecorded tells a peering run that the map records this OSD's
// up_thru as epoch (peering.UpThruRecorded).
type upThruRecorded struct{ epoch uint64 }

func newUpThru() *upThru {
	return &upThru{waiters: map[*peerRun]uint64{}, kick: make(chan struct{}, 1)}
}

// want asks for up_thru at least epoch on behalf of run r, which hears
// upThruRecorded once the OSD's map records it (at once if it does).
func (o *OSD) wantUpThru(r *peerRun, epoch uint64) {
	u := o.upThru
	u.mu.Lock()
	if have := o.mapUpThru(o.currentMap()); have >= epoch {
		u.mu.Unlock()
		r.post(o.cfg.ID, upThruRecorded{have})
		return
	}
	u.waiters[r] = max(u.waiters[r], epoch)
	u.mu.Unlock()
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// mapUpThru is this OSD's up_thru in m (0 without a map).
func (o *OSD) mapUpThru(m *osdmap.Map) uint64 {
	if m == nil || o.cfg.ID >= m.MaxOSD() {
		return 0
	}
	return uint64(m.OSD(o.cfg.ID).UpThru)
}

// noteUpThru tells the runs waiting for an up_thru that m records what
// they want; it forgets runs whose interval ended. activate calls it once
// m is the OSD's map.
func (o *OSD) noteUpThru(m *osdmap.Map) {
	have := o.mapUpThru(m)
	u := o.upThru
	u.mu.Lock()
	defer u.mu.Unlock()
	for r, want := range u.waiters {
		select {
		case <-r.done:
			delete(u.waiters, r)
			continue
		default:
		}
		if have >= want {
			r.post(o.cfg.ID, upThruRecorded{have})
			delete(u.waiters, r)
		}
	}
}

// upThruLoop sends "osd alive" for the highest up_thru wanted whenever a
// PG asks for more than the map records. A request that fails is sent
// again when a PG asks again (its peering does every few seconds while
// it waits).
func (o *OSD) upThruLoop() {
	u := o.upThru
	for {
		select {
		case <-u.kick:
		case <-o.ctx.Done():
			return
		}
		u.mu.Lock()
		var want uint64
		for r, w := range u.waiters {
			select {
			case <-r.done:
				delete(u.waiters, r)
				continue
			default:
			}
			want = max(want, w)
		}
		u.mu.Unlock()
		if want == 0 || o.mapUpThru(o.currentMap()) >= want {
			continue
		}
		if err := o.sendAlive(want); err != nil && o.ctx.Err() == nil {
			o.log.Warn("asking the monitors for up_thru", "want", want, "err", err)
		}
	}
}

// sendAlive asks the monitors to record up_thru want.
func (o *OSD) sendAlive(want uint64) error {
	ctx, cancel := context.WithTimeout(o.ctx, peerAnswerWait)
	defer cancel()
	r, err := o.mon.Run(ctx, wire.NewCommand("osd alive", "id", fmt.Sprint(o.cfg.ID), "addr", o.addr, "want", fmt.Sprint(want)))
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return fmt.Errorf("osd alive %d: %w", want, err)
	}
	return nil
}

package osd

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/osd/reserve"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/prometheus/client_golang/prometheus"
)

// Recovery reservations, as Ceph's local and remote reservations: a PG
// recovers or backfills only once its primary holds one of its own
// recovery slots (the local reservation, osd_max_backfills) and then, in
// OSD order, one slot on every member it will push to (the remote
// reservation, the member's osd_max_backfills). However many primaries
// recover at once, an OSD then receives the pushes of at most
// osd_max_backfills PGs (client writes' priority pushes and repairs
// aside, which take no reservation, as in Ceph). Taking the members'
// slots in one global order (ascending OSD id) means two primaries never
// wait for each other's.
//
// The decisions are internal/osd/reserve's (a Reserver for the local
// slots, a Remote for the member's); this file drives them: it blocks the
// recoverer until granted (missing.go), sends and answers PGReserve, and
// on each new map drops the member's reservations whose interval ended
// here — so a primary that died or lost the PG never keeps a slot.
// While it waits, the PG shows recovery_wait or backfill_wait.

// resKey names a PG's recovery in one interval on its primary.
type resKey struct {
	pg       osdmap.PG
	interval uint64
}

// reservations are the OSD's recovery reservations. Safe for concurrent
// use; its lock is taken under no other lock of the OSD's, and none is
// taken under it.
type reservations struct {
	mu      sync.Mutex
	local   *reserve.Reserver[resKey]
	waiters map[resKey]chan struct{} // closed when the local slot is granted
	remote  *reserve.Remote
	// asked are, per PG recovering on this primary, the members asked
	// for a slot (true: granted).
	asked map[resKey]map[int32]bool
	// unreserved counts the pushes this OSD applied as a member of an
	// active PG whose primary held no slot here: client writes' priority
	// pushes and repairs.
	unreserved uint64
}

func newReservations(limit int) *reservations {
	return &reservations{local: reserve.NewReserver[resKey](limit), waiters: map[resKey]chan struct{}{},
		remote: reserve.NewRemote(limit), asked: map[resKey]map[int32]bool{}}
}

// acquireLocal waits for one of this OSD's recovery slots for k at
// priority prio, and reports true, or false if a or b closes first (then
// no slot is held).
func (rs *reservations) acquireLocal(k resKey, prio int, a, b <-chan struct{}) bool {
	rs.mu.Lock()
	ch := make(chan struct{})
	rs.waiters[k] = ch
	rs.wakeLocked(rs.local.Request(k, prio))
	rs.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-a:
	case <-b:
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.waiters, k)
	rs.wakeLocked(rs.local.Cancel(k)) // granted as it gave up: passed on
	return false
}

// releaseLocal gives back k's slot.
func (rs *reservations) releaseLocal(k resKey) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.wakeLocked(rs.local.Cancel(k))
}

func (rs *reservations) wakeLocked(granted []resKey) {
	for _, k := range granted {
		if ch := rs.waiters[k]; ch != nil {
			close(ch)
			delete(rs.waiters, k)
		}
	}
}

// setLimit changes both sides' slots (osd_max_backfills) and returns the
// members' grants to send.
func (rs *reservations) setLimit(n int) []reserve.Grant {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.wakeLocked(rs.local.SetLimit(n))
	return rs.remote.SetLimit(n)
}

// localState returns the local slots held and their number.
func (rs *reservations) localState() (held, limit int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	st := rs.local.State()
	return st.Held, st.Limit
}

// noteAsked records that the primary asked member x for k's slot, and
// noteGranted that x granted it.
func (rs *reservations) noteAsked(k resKey, x int32, granted bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.asked[k] == nil {
		rs.asked[k] = map[int32]bool{}
	}
	rs.asked[k][x] = rs.asked[k][x] || granted
}

// granted reports whether member x granted k's slot.
func (rs *reservations) granted(k resKey, x int32) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.asked[k][x]
}

// forget returns the members asked for k's slots, in order, and forgets
// them.
func (rs *reservations) forget(k resKey) []int32 {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]int32, 0, len(rs.asked[k]))
	for x := range rs.asked[k] {
		out = append(out, x)
	}
	delete(rs.asked, k)
	slices.Sort(out)
	return out
}

// reserveMembers asks each member in targets, in order, for a slot for
// the PG's recovery in r's interval, one at a time, and reports true once
// all granted, false if the interval ended first. A member that does not
// answer is asked again every peerRetry (it grants a request it holds
// again; one it queues keeps its place).
func (p *pg) reserveMembers(r *peerRun, targets []int32, prio int, backfill bool) bool {
	k := resKey{p.id, r.interval}
	for _, x := range targets {
		c, done := p.await(waitKey{typ: wire.TypePGReserve, from: x})
		p.o.res.noteAsked(k, x, false)
		for {
			m := wire.PGReserve{PGInterval: p.intervalHeader(r), Op: wire.ReserveRequest, Priority: int32(prio), Backfill: backfill}
			if err := p.o.sendToOSD(x, msgr.Message{Type: wire.TypePGReserve, Version: 1, Payload: m.Encode()}); err != nil {
				p.o.log.Debug("recovery: reservation request not sent", "pg", p.id.String(), "to", x, "err", err)
			}
			_, err := p.receive(r, c, peerRetry)
			if err == nil {
				break
			}
			if !errors.Is(err, errScrubTimeout) {
				done()
				return false
			}
		}
		done()
		p.o.res.noteAsked(k, x, true)
	}
	return true
}

// releaseMembers tells every member asked for a slot for r's interval
// that the PG no longer needs it (done, or the interval ended: a member
// drops it by itself then, but may not have seen the map yet).
func (p *pg) releaseMembers(r *peerRun) {
	for _, x := range p.o.res.forget(resKey{p.id, r.interval}) {
		m := wire.PGReserve{PGInterval: p.intervalHeader(r), Op: wire.ReserveRelease}
		if err := p.o.sendToOSD(x, msgr.Message{Type: wire.TypePGReserve, Version: 1, Payload: m.Encode()}); err != nil {
			p.o.log.Debug("recovery: reservation release not sent", "pg", p.id.String(), "to", x, "err", err)
		}
	}
}

// handleReserve acts on a PGReserve once this OSD has the sender's map:
// a member queues, grants and releases the primaries' requests; a
// primary hands a grant to its recoverer, and gives back a grant it does
// not want (its recoverer gave up) at once.
func (o *OSD) handleReserve(from msgr.Peer, m wire.PGReserve) {
	o.whenMap(from.Session, m.Epoch, func() {
		p, sender, same := o.peerPG(from, m.PGInterval)
		switch m.Op {
		case wire.ReserveRequest:
			if p == nil || !same {
				return // the interval ended here: the primary learns so from its map
			}
			p.mu.Lock()
			primary := p.primary
			p.mu.Unlock()
			if primary != sender {
				o.log.Warn("recovery: reservation request from an OSD that is not the PG's primary", "pg", m.PG.String(), "from", sender, "primary", primary)
				return
			}
			o.res.mu.Lock()
			grants := o.res.remote.Request(reserve.Request{PG: m.PG, From: sender, Interval: m.IntervalStart, Priority: int(m.Priority)})
			o.res.mu.Unlock()
			o.sendGrants(grants)
		case wire.ReserveRelease:
			o.res.mu.Lock()
			grants := o.res.remote.Release(m.PG, sender, m.IntervalStart)
			o.res.mu.Unlock()
			o.sendGrants(grants)
		case wire.ReserveGrant:
			if p == nil || !same {
				return // the member drops it on the map that ended the interval
			}
			if p.deliver(waitKey{typ: wire.TypePGReserve, from: sender}, m) || o.res.granted(resKey{m.PG, m.IntervalStart}, sender) {
				return
			}
			rel := wire.PGReserve{PGInterval: wire.PGInterval{PG: m.PG, Epoch: o.Epoch(), IntervalStart: m.IntervalStart}, Op: wire.ReserveRelease}
			o.reply(from, wire.TypePGReserve, rel.Encode())
		}
	})
}

// sendGrants tells primaries of the slots granted to them.
func (o *OSD) sendGrants(grants []reserve.Grant) {
	for _, g := range grants {
		m := wire.PGReserve{PGInterval: wire.PGInterval{PG: g.PG, Epoch: o.Epoch(), IntervalStart: g.Interval}, Op: wire.ReserveGrant}
		msg := msgr.Message{Type: wire.TypePGReserve, Version: 1, Payload: m.Encode()}
		o.log.Debug("recovery: slot granted", "pg", g.PG.String(), "to", g.To)
		o.spawn(func() {
			if err := o.sendToOSD(g.To, msg); err != nil {
				o.log.Debug("recovery: grant not sent", "pg", g.PG.String(), "to", g.To, "err", err)
			}
		})
	}
}

// pruneReservations drops, after a new map, the member's reservations
// whose PG has left this OSD or started another interval here (its
// primary died, restarted or moved), and grants their slots to the
// requests waiting. A request of an interval newer than the PG's here is
// kept: it passed the check when it came, against a newer map.
func (o *OSD) pruneReservations() {
	type now struct {
		interval uint64
		primary  int32
	}
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	cur := make(map[osdmap.PG]now, len(pgs))
	for _, p := range pgs {
		p.mu.Lock()
		cur[p.id] = now{p.info.SameIntervalSince, p.primary}
		p.mu.Unlock()
	}
	o.res.mu.Lock()
	dropped, grants := o.res.remote.Prune(func(q reserve.Request) bool {
		c, ok := cur[q.PG]
		return ok && (c.interval < q.Interval || c.interval == q.Interval && c.primary == q.From)
	})
	o.res.mu.Unlock()
	for _, q := range dropped {
		o.log.Info("recovery: dropping a reservation whose interval ended", "pg", q.PG.String(), "primary", q.From, "interval", q.Interval)
	}
	o.sendGrants(grants)
}

// notePush counts a push applied as a member of pg in its interval
// without a slot held for it here.
func (o *OSD) notePush(pg osdmap.PG, from int32, interval uint64) {
	o.res.mu.Lock()
	defer o.res.mu.Unlock()
	if q, held := o.res.remote.Holds(pg); !held || q.From != from || q.Interval != interval {
		o.res.unreserved++
	}
}

// reservationDump answers dump_recovery_reservations.
type reservationDump struct {
	Local  reservationSide `json:"local_reservations"`
	Remote reservationSide `json:"remote_reservations"`
	// UnreservedPushes counts the pushes this OSD applied as a member
	// with no slot held for them: client writes' priority pushes and
	// repairs.
	UnreservedPushes uint64 `json:"unreserved_pushes"`
}

type reservationSide struct {
	Limit   int               `json:"max_allowed"`
	MaxHeld int               `json:"max_held"` // the most held at once since the OSD started
	Held    []reservationItem `json:"in_progress"`
	Waiting []reservationItem `json:"queue"`
}

type reservationItem struct {
	PG       string `json:"pgid"`
	Primary  int32  `json:"primary,omitempty"` // remote: the PG's primary
	Interval uint64 `json:"interval"`
	Priority int    `json:"prio"`
}

func (o *OSD) dumpReservations() reservationDump {
	o.res.mu.Lock()
	defer o.res.mu.Unlock()
	var d reservationDump
	st := o.res.local.State()
	d.Local = reservationSide{Limit: st.Limit, MaxHeld: st.MaxHeld, Held: []reservationItem{}, Waiting: []reservationItem{}}
	for _, e := range o.res.local.Entries() {
		it := reservationItem{PG: e.Key.pg.String(), Primary: o.cfg.ID, Interval: e.Key.interval, Priority: e.Priority}
		if e.Held {
			d.Local.Held = append(d.Local.Held, it)
		} else {
			d.Local.Waiting = append(d.Local.Waiting, it)
		}
	}
	slices.SortFunc(d.Local.Held, func(a, b reservationItem) int { return strings.Compare(a.PG, b.PG) })
	st = o.res.remote.State()
	d.Remote = reservationSide{Limit: st.Limit, MaxHeld: st.MaxHeld, Held: []reservationItem{}, Waiting: []reservationItem{}}
	for _, e := range o.res.remote.Entries() {
		it := reservationItem{PG: e.PG.String(), Primary: e.From, Interval: e.Interval, Priority: e.Priority}
		if e.Held {
			d.Remote.Held = append(d.Remote.Held, it)
		} else {
			d.Remote.Waiting = append(d.Remote.Waiting, it)
		}
	}
	d.UnreservedPushes = o.res.unreserved
	return d
}

// recoveryReservations answers dump_recovery_reservations.
func (o *OSD) recoveryReservations() wire.Reply {
	d := o.dumpReservations()
	var b strings.Builder
	for _, side := range []struct {
		name string
		s    reservationSide
	}{{"local", d.Local}, {"remote", d.Remote}} {
		fmt.Fprintf(&b, "%s: %d of %d held (at most %d at once), %d waiting\n", side.name, len(side.s.Held), side.s.Limit, side.s.MaxHeld, len(side.s.Waiting))
		for _, it := range side.s.Held {
			fmt.Fprintf(&b, "  held     pg %-8s primary osd.%d interval %d prio %d\n", it.PG, it.Primary, it.Interval, it.Priority)
		}
		for _, it := range side.s.Waiting {
			fmt.Fprintf(&b, "  waiting  pg %-8s primary osd.%d interval %d prio %d\n", it.PG, it.Primary, it.Interval, it.Priority)
		}
	}
	fmt.Fprintf(&b, "pushes applied without a reservation (priority pushes, repairs): %d\n", d.UnreservedPushes)
	return jsonReply(d, b.String())
}

// reservationCollector reports the reservations when scraped.
type reservationCollector struct{ o *OSD }

var (
	resHeldDesc = prometheus.NewDesc("cuttle_osd_recovery_reservations",
		"Recovery reservations held (state=held) or queued (state=waiting): local, of PGs this OSD is primary of; remote, of primaries pushing to it.", []string{"side", "state"}, nil)
	resMaxDesc = prometheus.NewDesc("cuttle_osd_recovery_reservations_max_held",
		"The most recovery reservations held at once since the OSD started, by side; never above osd_max_backfills.", []string{"side"}, nil)
	resUnreservedDesc = prometheus.NewDesc("cuttle_osd_unreserved_pushes_total",
		"Pushes this OSD applied as a member of an active PG with no reservation held for them: client writes' priority pushes and repairs.", nil, nil)
)

func (reservationCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- resHeldDesc
	ch <- resMaxDesc
	ch <- resUnreservedDesc
}

func (c reservationCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.o.dumpReservations()
	for _, side := range []struct {
		name string
		s    reservationSide
	}{{"local", d.Local}, {"remote", d.Remote}} {
		ch <- prometheus.MustNewConstMetric(resHeldDesc, prometheus.GaugeValue, float64(len(side.s.Held)), side.name, "held")
		ch <- prometheus.MustNewConstMetric(resHeldDesc, prometheus.GaugeValue, float64(len(side.s.Waiting)), side.name, "waiting")
		ch <- prometheus.MustNewConstMetric(resMaxDesc, prometheus.GaugeValue, float64(side.s.MaxHeld), side.name)
	}
	ch <- prometheus.MustNewConstMetric(resUnreservedDesc, prometheus.CounterValue, float64(d.UnreservedPushes))
}

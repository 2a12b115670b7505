package osd

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Failure detection, as in section 5.3 of the Ceph paper: each OSD watches
// the OSDs it shares PGs with, and keeps a messenger session open to each.
// Any message from a peer proves it alive (replication traffic counts);
// a peer quiet for HeartbeatInterval is pinged, and one quiet for
// HeartbeatGrace is reported to the monitors ("osd failure"), again on
// every tick while it stays quiet. A peer whose connection is refused
// (the messenger's EventDialRefused: nothing listens at its address any
// more, so its process is gone; a connection it reset is dialled again at
// once and refused the same way) is reported at once, immediate=true,
// and on every tick until it is heard from again: the monitors need no
// grace for it, only enough failure domains (osdmon). A hung peer with
// its connections open refuses nothing and gets the whole grace. A peer
// heard from again after a report has the report cancelled (alive=true).
// A peer is watched from when this OSD first sees it in its PGs, or sees
// a new incarnation of it (a new up_from), so a peer just booted gets the
// full grace; reports name the incarnation, so that one about a process
// already replaced is ignored.

// heartbeats is the OSD's view of its peers' liveness.
type heartbeats struct {
	mu    sync.Mutex
	peers map[int32]*peerBeat
}

// peerBeat is what the OSD knows of one watched peer.
type peerBeat struct {
	upFrom   osdmap.Epoch // the incarnation watched
	since    time.Time    // watched since
	heard    time.Time    // last message from it (zero: none yet)
	pinged   time.Time    // last ping sent
	refused  time.Time    // last dial to it refused (zero: none)
	reported time.Time    // first report of the standing one (zero: none stands)
}

// gone reports whether the peer's connections were refused since it was
// last heard from: its process is gone.
func (pb *peerBeat) gone() bool { return !pb.refused.IsZero() && !pb.heard.After(pb.refused) }

// quiet is how long the peer has been silent at now.
func (pb *peerBeat) quiet(now time.Time) time.Duration {
	last := pb.since
	if pb.heard.After(last) {
		last = pb.heard
	}
	return now.Sub(last)
}

// heard records a message from peer OSD name at now.
func (h *heartbeats) heard(name string, now time.Time) {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return
	}
	h.mu.Lock()
	if pb := h.peers[int32(id)]; pb != nil {
		pb.heard = now
	}
	h.mu.Unlock()
}

// heartbeatAction is what one tick, or one refusal, decided for one peer.
type heartbeatAction struct {
	id        int32
	upFrom    osdmap.Epoch // the incarnation concerned
	ping      bool
	report    bool // report failed, failedFor ago
	immediate bool // ... now: its connections are refused
	cancel    bool // report alive again
	failedFor time.Duration
}

// refused records, at now, that a dial to peer id, up from upFrom, was
// refused, and returns the report to send at once: the first refusal
// since the peer was last heard from is reported without waiting for a
// tick. A peer not watched yet (no tick has seen it in this OSD's PGs)
// is watched from now.
func (h *heartbeats) refused(id int32, upFrom osdmap.Epoch, now time.Time) (heartbeatAction, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.peers == nil {
		h.peers = map[int32]*peerBeat{}
	}
	pb := h.peers[id]
	if pb == nil || pb.upFrom != upFrom {
		pb = &peerBeat{upFrom: upFrom, since: now}
		h.peers[id] = pb
	}
	wasGone := pb.gone()
	pb.refused = now
	if wasGone {
		return heartbeatAction{}, false // reported already; ticks repeat it
	}
	if pb.reported.IsZero() {
		pb.reported = now
	}
	return heartbeatAction{id: id, upFrom: pb.upFrom, report: true, immediate: true, failedFor: pb.quiet(now)}, true
}

// tick updates the watched set to peers (with their up_from in m) and
// decides, at now, whom to ping, report and clear.
func (h *heartbeats) tick(m *osdmap.Map, peers []int32, now time.Time, interval, grace time.Duration) []heartbeatAction {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.peers == nil {
		h.peers = map[int32]*peerBeat{}
	}
	for id := range h.peers {
		if !slices.Contains(peers, id) {
			delete(h.peers, id)
		}
	}
	var out []heartbeatAction
	for _, id := range peers {
		upFrom := m.OSD(id).UpFrom
		pb := h.peers[id]
		if pb == nil || pb.upFrom != upFrom {
			pb = &peerBeat{upFrom: upFrom, since: now}
			h.peers[id] = pb
		}
		quiet := pb.quiet(now)
		a := heartbeatAction{id: id, upFrom: upFrom, failedFor: quiet}
		if quiet >= interval && now.Sub(pb.pinged) >= interval {
			a.ping = true
			pb.pinged = now
		}
		switch gone := pb.gone(); {
		case quiet >= grace || gone:
			a.report, a.immediate = true, gone
			if pb.reported.IsZero() {
				pb.reported = now
			}
		case !pb.reported.IsZero() && pb.heard.After(pb.reported):
			a.cancel = true
			pb.reported = time.Time{}
		}
		if a.ping || a.report || a.cancel {
			out = append(out, a)
		}
	}
	return out
}

// heartbeatPeers returns the other up OSDs of the acting sets of the PGs
// this OSD holds in m, in id order.
func (o *OSD) heartbeatPeers(m *osdmap.Map) []int32 {
	set := map[int32]bool{}
	for _, mp := range o.myMappings(m) {
		for _, id := range mp.Acting {
			if id >= 0 && id != o.cfg.ID && m.IsUp(id) {
				set[id] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// heartbeatLoop runs a heartbeat tick every half interval until the OSD
// closes.
func (o *OSD) heartbeatLoop() {
	defer o.wg.Done()
	t := o.cfg.Clock.NewTimer(o.options().HeartbeatInterval / 2)
	defer t.Stop()
	for {
		select {
		case <-t.C():
		case <-o.ctx.Done():
			return
		}
		o.heartbeatTick()
		t.Reset(o.options().HeartbeatInterval / 2) // osd_heartbeat_interval may change
	}
}

// heartbeatTick pings quiet peers and reports failed ones.
func (o *OSD) heartbeatTick() {
	o.mu.Lock()
	m, booted := o.osdmap, o.booted
	o.mu.Unlock()
	if m == nil || !booted || !m.IsUp(o.cfg.ID) {
		return
	}
	now := o.cfg.Clock.Now()
	opts := o.options()
	peers := o.heartbeatPeers(m)
	for _, id := range peers {
		// A session open to every peer, dialled again as soon as its
		// connection breaks, is what finds a dead peer refused.
		if _, err := o.ms.Connect(osdName(id), m.OSD(id).Addr); err != nil {
			return // the messenger is closed
		}
	}
	actions := o.hb.tick(m, peers, now, opts.HeartbeatInterval, opts.HeartbeatGrace)
	ping := wire.OSDPing{Epoch: uint64(m.Epoch()), Stamp: now.UnixNano()}.Encode()
	for _, a := range actions {
		if a.ping {
			if err := o.sendToOSDIn(m, a.id, msgr.Message{Type: wire.TypeOSDPing, Version: 1, Payload: ping}); err != nil {
				o.log.Debug("ping not sent", "peer", a.id, "err", err)
			}
		}
		if a.report || a.cancel {
			o.wg.Go(func() { o.reportPeer(a) })
		}
	}
}

// peerRefused handles the messenger's news that a dial to peer at addr
// was refused: if addr is where the map has that peer, and the peer
// shares a PG with this OSD, the monitors hear at once that it is gone.
func (o *OSD) peerRefused(peer auth.EntityName, addr string) {
	id, ok := osdID(peer.String())
	if !ok {
		return
	}
	o.mu.Lock()
	m, booted := o.osdmap, o.booted
	o.mu.Unlock()
	if m == nil || !booted || !m.IsUp(o.cfg.ID) || !m.IsUp(id) || m.OSD(id).Addr != addr ||
		!slices.Contains(o.heartbeatPeers(m), id) {
		return
	}
	if a, ok := o.hb.refused(id, m.OSD(id).UpFrom, o.cfg.Clock.Now()); ok {
		o.spawn(func() { o.reportPeer(a) })
	}
}

// osdName is the entity name of OSD id.
func osdName(id int32) auth.EntityName {
	return auth.EntityName{Type: "osd", ID: strconv.Itoa(int(id))}
}

// reportPeer tells the monitors that a peer failed, or is alive again.
func (o *OSD) reportPeer(a heartbeatAction) {
	ctx, cancel := context.WithTimeout(o.ctx, o.options().HeartbeatGrace)
	defer cancel()
	cmd := wire.NewCommand("osd failure", "target", fmt.Sprint(a.id), "reporter", fmt.Sprint(o.cfg.ID),
		"failed_for", strconv.FormatFloat(a.failedFor.Seconds(), 'f', 3, 64), "alive", strconv.FormatBool(a.cancel),
		"immediate", strconv.FormatBool(a.immediate), "up_from", fmt.Sprint(a.upFrom))
	switch {
	case a.report && a.immediate:
		o.log.Warn("peer's connection refused, its process is gone: reporting it", "peer", a.id, "quiet", a.failedFor.Round(time.Millisecond))
	case a.report:
		o.log.Warn("peer failed to answer heartbeats: reporting it", "peer", a.id, "quiet", a.failedFor.Round(time.Millisecond))
	default:
		o.log.Info("peer answers again: cancelling the failure report", "peer", a.id)
	}
	r, err := o.mon.Run(ctx, cmd)
	if err == nil {
		err = r.Err()
	}
	if err != nil && o.ctx.Err() == nil {
		o.log.Warn("failure report not taken", "peer", a.id, "err", err)
	}
}

// handlePing answers a peer's heartbeat (its arrival already counted as
// proof of life).
func (o *OSD) handlePing(from msgr.Peer, m wire.OSDPing) {
	if m.Reply {
		return
	}
	reply := wire.OSDPing{Reply: true, Epoch: o.Epoch(), Stamp: m.Stamp}.Encode()
	if err := from.Session.Send(o.ctx, msgr.Message{Type: wire.TypeOSDPing, Version: 1, Payload: reply}); err != nil {
		o.log.Debug("ping reply not sent", "to", from.Name.String(), "err", err)
	}
}

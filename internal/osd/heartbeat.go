package osd

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Failure detection, as in section 5.3 of the Ceph paper: each OSD watches
// the OSDs it shares PGs with. Any message from a peer proves it alive
// (replication traffic counts); a peer quiet for HeartbeatInterval is
// pinged, and one quiet for HeartbeatGrace is reported to the monitors
// ("osd failure"), again on every tick while it stays quiet. The monitors
// mark it down once enough failure domains report it (osdmon). A peer
// heard from again after a report has the report cancelled (alive=true).
// A peer is watched from when this OSD first sees it in its PGs, or sees
// a new incarnation of it (a new up_from), so a peer just booted gets the
// full grace.

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
	reported bool         // a failure report stands with the monitors
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

// heartbeatAction is what one tick decided for one peer.
type heartbeatAction struct {
	id        int32
	ping      bool
	report    bool // report failed, failedFor ago
	cancel    bool // report alive again
	failedFor time.Duration
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
		last := pb.since
		if pb.heard.After(last) {
			last = pb.heard
		}
		quiet := now.Sub(last)
		a := heartbeatAction{id: id, failedFor: quiet}
		if quiet >= interval && now.Sub(pb.pinged) >= interval {
			a.ping = true
			pb.pinged = now
		}
		switch {
		case quiet >= grace:
			a.report = true
			pb.reported = true
		case pb.reported && quiet < interval:
			a.cancel = true
			pb.reported = false
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
	actions := o.hb.tick(m, o.heartbeatPeers(m), now, opts.HeartbeatInterval, opts.HeartbeatGrace)
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

// reportPeer tells the monitors that a peer failed, or is alive again.
func (o *OSD) reportPeer(a heartbeatAction) {
	ctx, cancel := context.WithTimeout(o.ctx, o.options().HeartbeatGrace)
	defer cancel()
	cmd := wire.NewCommand("osd failure", "target", fmt.Sprint(a.id), "reporter", fmt.Sprint(o.cfg.ID),
		"failed_for", strconv.FormatFloat(a.failedFor.Seconds(), 'f', 3, 64), "alive", strconv.FormatBool(a.cancel))
	if a.report {
		o.log.Warn("peer failed to answer heartbeats: reporting it", "peer", a.id, "quiet", a.failedFor.Round(time.Millisecond))
	} else {
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

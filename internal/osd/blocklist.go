package osd

import (
	"strconv"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/osd/watch"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Fencing (docs/OSD.md, "The blocklist"): the OSD map's blocklist names
// client instances (HOST:PORT/NONCE), addresses (HOST:PORT) and hosts
// that the OSDs must no longer serve, each until an expiry. A client op
// is checked against the map the OSD or its PG has when the op is let in
// (handleOp), each time it is (re)queued and when it starts to run
// (pg.checkLocked), so no op of a client runs after a map that fences it
// has reached the PG — whether the op came before or after that map. A
// refused op is answered EBLOCKLISTED (Ceph's errno, ESHUTDOWN), which
// the client does not retry. Writes already replicating when the map
// arrives finish: they were started under a map that allowed them.
// Watches of fenced clients end at once (evictBlocklisted), without a
// word to the client; their new watches, pings and notifies are refused
// like any op.

// blocklisted reports whether from, a client, is blocklisted in m now:
// by its instance address (HOST:PORT/NONCE, as its session shows it), or,
// for an op (id not nil), by the instance the op names, ENTITY/INCARNATION
// in hex (rados.Conn.Instance: what a lock holder records, so that who
// breaks its lock can fence that process wherever it connects from).
// Other OSDs are never fenced here (they send no client ops), nor the
// OSD's own requests (no session).
func (o *OSD) blocklisted(m *osdmap.Map, from msgr.Peer, id *wire.ReqID) bool {
	if m == nil || m.BlocklistLen() == 0 || from.Session == nil || from.Name.Type == "osd" {
		return false
	}
	now := o.cfg.Clock.Now()
	if addr := from.Session.PeerAddr(); addr != "" && m.IsBlocklisted(addr, now) {
		return true
	}
	return id != nil && id.Client != "" && m.IsBlocklisted(instanceName(id), now)
}

// instanceName is an op's client instance as rados.Conn.Instance names it.
func instanceName(id *wire.ReqID) string {
	return id.Client + "/" + strconv.FormatUint(id.Incarnation, 16)
}

// evictBlocklisted ends the watches of the clients m fences, in every PG
// (as Ceph's primary does with check_blocklisted_watchers on a new map).
func (o *OSD) evictBlocklisted(m *osdmap.Map) {
	if m.BlocklistLen() == 0 {
		return
	}
	c := &o.watchConns
	c.mu.Lock()
	conns := map[watch.ConnID]bool{}
	for id, peer := range c.peers {
		if o.blocklisted(m, peer, nil) {
			conns[id] = true
		}
	}
	c.mu.Unlock()
	if len(conns) == 0 {
		return
	}
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	o.log.Info("ending the watches of blocklisted clients", "sessions", len(conns), "epoch", m.Epoch())
	for _, p := range pgs {
		p.mu.Lock()
		epoch := p.epoch
		p.mu.Unlock()
		pw := p.watch
		pw.mu.Lock()
		acts := pw.st.Evict(conns)
		p.armWatchLocked()
		pw.mu.Unlock()
		p.doWatchActions(acts, epoch)
	}
}

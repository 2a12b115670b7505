package osd

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// onMapUpdate receives map updates from the monitor client's goroutine,
// which must not block: a full queue drops the update, and the renewal
// in mapLoop asks again from the epoch after the OSD's own.
func (o *OSD) onMapUpdate(u wire.OSDMapUpdate) {
	select {
	case o.updates <- u:
	default:
		o.log.Warn("map update queue full; dropping an update", "newest", u.Newest)
	}
}

// mapLoop applies map updates in order and renews the subscription when
// none arrives for a while (a monitor that died takes the subscription
// with it).
func (o *OSD) mapLoop() {
	defer o.wg.Done()
	renew := o.cfg.Clock.NewTimer(o.cfg.MapRenew)
	defer renew.Stop()
	for {
		select {
		case u := <-o.updates:
			o.applyUpdate(u)
			renew.Reset(o.cfg.MapRenew)
		case <-renew.C():
			o.resubscribe()
			renew.Reset(o.cfg.MapRenew)
		case <-o.ctx.Done():
			return
		}
	}
}

func (o *OSD) resubscribe() {
	ctx, cancel := context.WithTimeout(o.ctx, o.cfg.MapRenew)
	defer cancel()
	if err := o.mon.Subscribe(ctx, o.Epoch()+1); err != nil && o.ctx.Err() == nil {
		o.log.Warn("renewing the map subscription", "err", err)
	}
}

// applyUpdate builds the newest map it can from u and activates it.
func (o *OSD) applyUpdate(u wire.OSDMapUpdate) {
	cur := o.currentMap()
	m := cur
	if len(u.Full) > 0 && (m == nil || uint64(m.Epoch()) < u.FullEpoch) {
		full, err := osdmap.UnmarshalMap(u.Full)
		if err != nil {
			o.log.Error("undecodable full map from the monitors", "epoch", u.FullEpoch, "err", err)
			return
		}
		m = full
		o.history.add(m)
	}
	for _, b := range u.Incs {
		inc, err := osdmap.UnmarshalIncremental(b)
		if err != nil {
			o.log.Error("undecodable incremental map from the monitors", "err", err)
			break
		}
		if m == nil || inc.Epoch <= m.Epoch() {
			continue
		}
		next, err := m.Apply(inc)
		if err != nil { // a gap: ask for what is missing
			o.log.Info("map gap; asking again", "have", m.Epoch(), "got", inc.Epoch)
			break
		}
		m = next
		o.history.add(m)
	}
	if m != cur {
		o.activate(m)
	}
	if m == nil || uint64(m.Epoch()) < u.Newest {
		o.resubscribe()
	}
}

// activate makes m the OSD's map: PGs it now holds are created, every PG
// learns its new acting set, and messages waiting for the map proceed.
// PGs see the map before the OSD publishes it, so a request routed by the
// new epoch never meets a PG that has not seen it.
func (o *OSD) activate(m *osdmap.Map) {
	o.splitPGs(m) // split.go: children exist before any PG sees m
	mappings := o.myMappings(m)
	o.mu.Lock()
	old := o.osdmap
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	var create []osdmap.PG
	for id := range mappings {
		if o.pgs[id] == nil {
			create = append(create, id)
		}
	}
	o.mu.Unlock()
	o.markDownChanged(old, m)
	// Before any PG sees m: a write it lets in is checked against m's
	// fullness.
	o.space.noteMap(m, o.cfg.ID)
	o.refreshSpace()
	var created []*pg
	for _, id := range create {
		p, err := o.createPG(id, uint64(m.Epoch()), m.Pool(id.Pool).PGNum)
		if err != nil {
			o.log.Error("creating a placement group", "pg", id.String(), "err", err)
			continue
		}
		created = append(created, p)
	}
	for _, p := range append(pgs, created...) {
		mp, ok := mappings[p.id]
		p.advance(m, mp, ok, o.intervalStart(p, m, ok))
	}
	o.mu.Lock()
	for _, p := range created {
		o.pgs[p.id] = p
	}
	o.setLogLimitLocked()
	o.osdmap = m
	close(o.mapSeen)
	o.mapSeen = make(chan struct{})
	rebooting := o.booted && !m.IsUp(o.cfg.ID) && !o.stopping.Load() && !o.leaving.Load()
	o.booted = o.booted || m.IsUp(o.cfg.ID)
	o.mu.Unlock()
	o.noteUpThru(m)
	o.evictBlocklisted(m) // blocklist.go
	o.pruneReservations() // a member's slots held for intervals that ended
	o.drainBacklog()
	if rebooting {
		o.log.Warn("the map marks this OSD down while it runs; booting again", "epoch", m.Epoch())
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			if err := o.boot(o.ctx); err != nil && o.ctx.Err() == nil {
				o.log.Error("boot", "err", err)
			}
		}()
	}
}

// markDownChanged closes the messenger's sessions to every other OSD that
// was up in old and in m is down, restarted (a new up_from) or moved (a
// new address), before the PGs learn of m: writes of the new interval
// then go out on new sessions, never queued behind the old incarnation's
// on a session that its successor would reset, dropping them.
func (o *OSD) markDownChanged(old, m *osdmap.Map) {
	if old == nil {
		return
	}
	for id := range old.MaxOSD() {
		if id == o.cfg.ID || !old.IsUp(id) {
			continue
		}
		was, now := old.OSD(id), m.OSD(id)
		if id < m.MaxOSD() && m.IsUp(id) && now.UpFrom == was.UpFrom && now.Addr == was.Addr {
			continue
		}
		o.log.Info("peer down or restarted: closing its sessions", "peer", id, "epoch", m.Epoch())
		o.ms.MarkDown(auth.EntityName{Type: "osd", ID: strconv.Itoa(int(id))})
	}
}

// myMappings returns the placement of every PG whose acting set holds
// this OSD.
func (o *OSD) myMappings(m *osdmap.Map) map[osdmap.PG]osdmap.Mapping {
	out := map[osdmap.PG]osdmap.Mapping{}
	var s osdmap.Scratch
	for _, pool := range m.Pools() {
		for seed := range pool.PGNum {
			id := osdmap.PG{Pool: pool.ID, Seed: seed}
			mp, err := m.PGToUpActing(id, &s)
			if err != nil {
				continue
			}
			if slices.Contains(mp.Acting, o.cfg.ID) {
				mp.Acting, mp.Up, mp.Raw = slices.Clone(mp.Acting), slices.Clone(mp.Up), slices.Clone(mp.Raw)
				out[id] = mp
			}
		}
	}
	return out
}

// createPG makes the collection and meta object of a PG new to this OSD,
// laid out for pg_num pgNum.
func (o *OSD) createPG(id osdmap.PG, epoch uint64, pgNum uint32) (*pg, error) {
	info := pglog.Info{PG: id, EpochCreated: epoch, SameIntervalSince: epoch}
	o.waitDeleted(id)
	exists, err := o.cfg.Store.CollectionExists(o.ctx, objectstore.PGCollection(id.Pool, id.Seed))
	if err != nil {
		return nil, err
	}
	if half, err := o.halfDeleted(id); err != nil {
		return nil, err
	} else if exists && half {
		if err := o.deletePG(id); err != nil {
			return nil, err
		}
		exists = false
	}
	if exists { // left by an earlier life of the PG here
		return o.loadPG(o.ctx, id)
	}
	var t objectstore.Transaction
	pglog.CreateTxn(&t, info)
	setLayoutTxn(&t, id, pgNum)
	markSnapIndexTxn(&t, id) // empty, and complete (snapindex.go)
	if err := o.apply(&t); err != nil {
		return nil, fmt.Errorf("pg %v: %w", id, err)
	}
	p := newPG(o, info, pglog.NewLog(info.LogTail), nil)
	p.layout = pgNum
	return p, nil
}

// whenMap runs f now if the OSD has epoch and nothing from the same
// session waits before it, and otherwise queues it behind what waits; f
// runs once the map arrives. Messages go through it so that those of one
// session keep their order, while one session waiting (even for an epoch
// that never comes) holds up no other.
func (o *OSD) whenMap(from *msgr.Session, epoch uint64, f func()) {
	o.mu.Lock()
	epoch = max(epoch, 1) // nothing is served before the first map
	if len(o.backlog[from]) == 0 && o.epochLocked() >= epoch {
		o.mu.Unlock()
		f()
		return
	}
	if len(o.backlog[from]) >= maxBacklog {
		// A peer that keeps sending for an epoch that does not come
		// would grow the backlog without bound: drop its session (it
		// reconnects and resends).
		delete(o.backlog, from)
		o.mu.Unlock()
		o.log.Warn("closing a session whose messages wait for a map that does not come", "epoch", epoch)
		if from != nil {
			from.Close()
		}
		return
	}
	o.backlog[from] = append(o.backlog[from], func() bool {
		if o.Epoch() < epoch {
			return false
		}
		f()
		return true
	})
	o.mu.Unlock()
}

// maxBacklog bounds the messages of one session waiting for a map.
const maxBacklog = 1 << 16

// drainBacklog runs the queued messages of each session, in order, until
// one still waits for a newer map.
func (o *OSD) drainBacklog() {
	o.mu.Lock()
	sessions := make([]*msgr.Session, 0, len(o.backlog))
	for s := range o.backlog {
		sessions = append(sessions, s)
	}
	o.mu.Unlock()
	for _, s := range sessions {
		o.drainSession(s)
	}
}

func (o *OSD) drainSession(s *msgr.Session) {
	for {
		o.mu.Lock()
		q := o.backlog[s]
		if len(q) == 0 {
			delete(o.backlog, s)
			o.mu.Unlock()
			return
		}
		f := q[0]
		o.mu.Unlock()
		if !f() {
			return
		}
		o.mu.Lock()
		if q := o.backlog[s]; len(q) > 0 {
			o.backlog[s] = q[1:]
		}
		o.mu.Unlock()
	}
}

// forgetSession drops what a closed session left waiting, and its cap
// checker.
func (o *OSD) forgetSession(s *msgr.Session) {
	o.mu.Lock()
	delete(o.backlog, s)
	delete(o.checkers, s)
	o.mu.Unlock()
}

// currentMap returns the map the OSD has published (nil before the
// first).
func (o *OSD) currentMap() *osdmap.Map {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.osdmap
}

// lookupPG returns the PG and the OSD's map.
func (o *OSD) lookupPG(id osdmap.PG) (*pg, *osdmap.Map) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pgs[id], o.osdmap
}

package osd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/peering"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Peering and log-based recovery, as in section 5.4 of the Ceph paper.
// Every interval starts with the PG inactive. Its primary asks each
// member of the acting set and of the past intervals that may have taken
// writes for its info, log and missing set (PGQuery, PGNotify), lets
// peering.Plan pick the authoritative history, fetches from the
// authority the objects it lacks itself (PGPull, PGPush; all of them if
// its history ends before the authority's log begins) and adopts the
// authoritative log, then has every other member adopt it too, with the
// list of objects that member lacks (PGActivate), and goes active.
// Requests that arrive meanwhile wait, parked. What the other members
// lack is pushed behind client I/O (missing.go). An interval that ends
// abandons its peering; the next starts over.
//
// The protocol's decisions (whom to ask, when to ask again, when to go
// down, whom to pull an object from and when to give up on it, ask for
// pg_temp or activate) are peering.Machine's; peerdriver.go carries them
// out. This file holds the run's queue, the store work the driver does
// for the machine (applying a push, adopting a log, finishing), and the
// member side.
//
// A primary whose own history ends before the authority's log begins
// asks for a temporary acting set instead (pgtemp.go).

// peerRetry is how often an unanswered query is sent again, and how long
// a failed attempt or a failed read waits before it is tried again.
const peerRetry = peering.RetryInterval

// peerAnswerWait bounds the silence while recovery waits for a member's
// acknowledgements, or a pg_temp request for its map (see
// peering.AnswerWait).
const peerAnswerWait = peering.AnswerWait

// errNoAnswer means a member did not answer in time.
var errNoAnswer = peering.ErrNoAnswer

// peerRun is the peering of one interval on its primary: the messages
// for it, queued by the dispatcher, and its end.
type peerRun struct {
	interval uint64
	done     chan struct{} // closed when the interval ends
	mu       sync.Mutex
	events   []peerEvent
	wake     chan struct{} // signalled when an event is queued
}

type peerEvent struct {
	from int32
	msg  any // wire.PGNotify, wire.PGPush, wire.PGAck, unfoundLost or upThruRecorded
}

func newPeerRun(interval uint64) *peerRun {
	return &peerRun{interval: interval, done: make(chan struct{}), wake: make(chan struct{}, 1)}
}

func (r *peerRun) post(from int32, msg any) {
	r.mu.Lock()
	r.events = append(r.events, peerEvent{from, msg})
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// next returns the next event, or false if the interval ended, ctx ended
// or timeout passed (timed reports the last).
func (r *peerRun) next(ctx context.Context, timer <-chan time.Time) (ev peerEvent, ok, timed bool) {
	for {
		r.mu.Lock()
		if len(r.events) > 0 {
			ev = r.events[0]
			r.events = r.events[1:]
			r.mu.Unlock()
			return ev, true, false
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-r.done:
			return peerEvent{}, false, false
		case <-ctx.Done():
			return peerEvent{}, false, false
		case <-timer:
			return peerEvent{}, false, true
		}
	}
}

// startPeeringLocked begins the interval's peering if this OSD is its
// primary; the caller holds p.mu and has just started the interval.
func (p *pg) startPeeringLocked(m *osdmap.Map) {
	if p.run != nil {
		close(p.run.done)
		p.run = nil
	}
	p.activated = false
	p.holdWatchesLocked()
	p.recPlan = nil
	p.down, p.blockedBy, p.peerStep = "", nil, ""
	p.unfound = nil
	p.recovering, p.missingCopies = "", 0
	if !p.isPrimaryLocked() || len(p.acting) == 0 {
		return
	}
	r := newPeerRun(p.info.SameIntervalSince)
	p.run = r
	p.o.wg.Go(func() { p.peerUntilActive(r, m) })
}

// newerMap returns the OSD's published map if it is newer than m, and m
// otherwise. A PG learns a map before the OSD publishes it (activate),
// so the published one may be older than the one peering began with:
// going back to it would see OSDs that just booted as down, and peering
// would neither ask nor activate them.
func (p *pg) newerMap(m *osdmap.Map) *osdmap.Map {
	if cur := p.o.currentMap(); cur != nil && (m == nil || cur.Epoch() > m.Epoch()) {
		return cur
	}
	return m
}

var errIntervalEnded = errors.New("the interval ended")

// copied counts one object copy made.
func (p *pg) copied() {
	p.mu.Lock()
	p.missingCopies = max(p.missingCopies-1, 0)
	p.mu.Unlock()
	p.o.statsChanged()
}

// step records what the interval's peering is doing, for operators.
func (p *pg) step(r *peerRun, what string) {
	p.mu.Lock()
	if p.run == r {
		p.peerStep = what
	}
	p.mu.Unlock()
}

// pushVersion is the version of a pushed object, from its info attribute.
func pushVersion(m wire.PGPush) wire.Version {
	for _, kv := range m.Attrs {
		if kv.Key == ops.InfoAttr {
			return ops.VersionOf(kv.Value)
		}
	}
	return wire.Version{}
}

// readableVersion is the version of this OSD's copy of id if all of it
// (data, attributes, omap) can be read, and zero otherwise.
func (p *pg) readableVersion(id objid.ID) wire.Version {
	st, err := p.objectState(id)
	if err != nil {
		p.o.log.Warn("peering: this OSD's copy cannot be read", "pg", p.id.String(), "object", id.String(), "err", err)
		return wire.Version{}
	}
	if !st.Exists {
		return wire.Version{}
	}
	return pushVersion(st)
}

// storedVersion is the version of this OSD's copy of id, from its info
// attribute (zero if it has none, or it cannot be read).
func (p *pg) storedVersion(id objid.ID) wire.Version {
	b, err := p.o.cfg.Store.GetAttr(p.o.ctx, p.coll, id, ops.InfoAttr)
	if err != nil {
		return wire.Version{}
	}
	return ops.VersionOf(b)
}

// finishPeering records the start, notes what each replica lacks and
// lets the parked requests in.
func (p *pg) finishPeering(r *peerRun, plan peering.Result, missing map[int32][]objid.ID) error {
	p.mu.Lock()
	if p.run != r {
		p.mu.Unlock()
		return errIntervalEnded
	}
	p.info.LastEpochStarted = r.interval
	// The trimmed snaps every member with a history agrees on (Plan,
	// purgedSnaps): the trimmer's work is the pool's removed snaps less
	// these. The replicas' activations carried the same.
	p.info.PurgedSnaps = plan.Info.PurgedSnaps
	c, err := p.saveInfoLocked()
	if err != nil {
		p.mu.Unlock()
		return err
	}
	p.activated = true
	p.recoverer = r // peering's Serve runs it
	p.holdWatchesLocked()
	p.unfound, p.loseUnfound, p.revertUnfound = nil, false, false
	p.notePeerMissingLocked(plan, missing)
	parked := p.parked
	p.parked = nil
	p.mu.Unlock()
	if err := c.Wait(p.o.ctx); err != nil {
		return err
	}
	p.o.statsChanged()
	p.o.log.Info("peering: active", "pg", p.id.String(), "interval", r.interval, "authority", plan.Auth,
		"last_update", plan.Info.LastUpdate.String(), "backfilled", plan.Backfill)
	for _, q := range parked {
		p.enqueue(q)
	}
	return nil
}

// adopt makes info and entries this OSD's history of the PG, keeping its
// own identity and interval, and missing the objects it lacks; with keep
// non-nil it also removes every object of the PG not in keep (the end of
// a primary's backfill, or the start of a replica's).
func (p *pg) adopt(auth pglog.Info, entries []pglog.Entry, interval uint64, keep map[objid.ID]bool, missing []objid.ID) error {
	log := pglog.NewLog(auth.LogTail)
	for _, e := range entries {
		if err := log.Append(e); err != nil {
			return err
		}
	}
	var t objectstore.Transaction
	if keep != nil {
		objs, err := p.allObjects()
		if err != nil {
			return err
		}
		var gone []objid.ID
		for _, o := range objs {
			if !keep[o] {
				t.Remove(p.coll, o)
				gone = append(gone, o)
			}
		}
		if err := p.reindexRemovalsTxn(&t, gone); err != nil {
			return err
		}
	}
	p.mu.Lock()
	info := auth
	info.PG, info.EpochCreated = p.id, p.info.EpochCreated
	info.SameIntervalSince, info.LastEpochStarted = p.info.SameIntervalSince, interval
	pglog.ReplaceTxn(&t, info, entries)
	pglog.ClearMissingTxn(&t, p.id)
	pglog.SetMissingTxn(&t, p.id, missing...)
	p.info, p.log = info, log
	p.missing = make(map[objid.ID]bool, len(missing))
	for _, id := range missing {
		p.missing[id] = true
	}
	p.mu.Unlock()
	return p.o.apply(&t)
}

// objectState reads an object's whole state here, for a push.
func (p *pg) objectState(id objid.ID) (wire.PGPush, error) {
	ctx, st := p.o.ctx, p.o.cfg.Store
	out := wire.PGPush{Object: id}
	if _, err := st.Stat(ctx, p.coll, id); errors.Is(err, objectstore.ErrNotFound) {
		return out, nil
	} else if err != nil {
		return out, fmt.Errorf("read %v for recovery: %w", id, err)
	}
	var err error
	out.Exists = true
	if out.Data, err = st.Read(ctx, p.coll, id, 0, 0); err != nil {
		return out, fmt.Errorf("read %v for recovery: %w", id, err)
	}
	attrs, err := st.GetAttrs(ctx, p.coll, id)
	if err != nil {
		return out, fmt.Errorf("read %v for recovery: %w", id, err)
	}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		out.Attrs = append(out.Attrs, wire.KV{Key: k, Value: attrs[k]})
	}
	if out.OmapHeader, err = st.OmapGetHeader(ctx, p.coll, id); err != nil {
		return out, fmt.Errorf("read %v for recovery: %w", id, err)
	}
	kvs, _, err := st.OmapIterate(ctx, p.coll, id, "", "", 0)
	if err != nil {
		return out, fmt.Errorf("read %v for recovery: %w", id, err)
	}
	for _, kv := range kvs {
		out.Omap = append(out.Omap, wire.KV{Key: kv.Key, Value: kv.Value})
	}
	return out, nil
}

// pushTxn returns the transaction that makes this OSD's copy of the
// pushed object equal to the pusher's (nil: it is absent on both).
func (p *pg) pushTxn(m wire.PGPush) (*objectstore.Transaction, error) {
	_, err := p.o.cfg.Store.Stat(p.o.ctx, p.coll, m.Object)
	exists := err == nil
	if err != nil && !errors.Is(err, objectstore.ErrNotFound) {
		return nil, err
	}
	if !exists && !m.Exists {
		return nil, nil
	}
	t := new(objectstore.Transaction)
	if exists {
		t.Remove(p.coll, m.Object)
	}
	if m.Exists {
		t.Touch(p.coll, m.Object)
		if len(m.Data) > 0 {
			t.Write(p.coll, m.Object, 0, m.Data)
		}
		if len(m.Attrs) > 0 {
			attrs := make(map[string][]byte, len(m.Attrs))
			for _, kv := range m.Attrs {
				attrs[kv.Key] = kv.Value
			}
			t.SetAttrs(p.coll, m.Object, attrs)
		}
		if len(m.OmapHeader) > 0 {
			t.OmapSetHeader(p.coll, m.Object, m.OmapHeader)
		}
		if len(m.Omap) > 0 {
			kv := make(map[string][]byte, len(m.Omap))
			for _, e := range m.Omap {
				kv[e.Key] = e.Value
			}
			t.OmapSetKeys(p.coll, m.Object, kv)
		}
	}
	if holdsSnapSet(m.Object) {
		// A head or snapdir brings its snap set, or takes it away: the
		// snap index follows in the same transaction.
		after := heldState{exists: m.Exists}
		for _, kv := range m.Attrs {
			if kv.Key == SnapSetAttr {
				after.attr = kv.Value
			}
		}
		if err := p.reindexTxn(t, m.Object.WithSnap(objid.NoSnap), map[objid.ID]heldState{m.Object: after}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// applyPush applies a pushed object and waits until it is committed.
func (p *pg) applyPush(m wire.PGPush) error {
	p.mu.Lock()
	pool := p.pool
	p.mu.Unlock()
	if m.Object.Pool != p.id.Pool || pool.HashToPG(m.Object.Hash) != p.id {
		return fmt.Errorf("pushed object %v is not in pg %v", m.Object, p.id)
	}
	t, err := p.pushTxn(m)
	if err != nil {
		return err
	}
	if t == nil {
		t = new(objectstore.Transaction)
	}
	pglog.RecoveredTxn(t, p.id, m.Object)
	if err := p.o.apply(t); err != nil {
		return err
	}
	p.mu.Lock()
	delete(p.missing, m.Object)
	p.mu.Unlock()
	return nil
}

// allObjects lists the PG's client objects here, in hash order.
func (p *pg) allObjects() ([]objid.ID, error) {
	var out []objid.ID
	cursor := objid.ID{}
	for {
		objs, next, err := p.o.cfg.Store.ListObjects(p.o.ctx, p.coll, cursor, 1024)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.Pool == p.id.Pool {
				out = append(out, o)
			}
		}
		if next.IsMax() {
			return out, nil
		}
		cursor = next
	}
}

// header names the PG in run r's interval.
func (p *pg) header(r *peerRun, m *osdmap.Map) wire.PGInterval {
	return wire.PGInterval{PG: p.id, Epoch: uint64(m.Epoch()), IntervalStart: r.interval}
}

func (p *pg) sendPeer(m *osdmap.Map, to int32, typ uint16, payload []byte) {
	if err := p.o.sendToOSDIn(m, to, msgr.Message{Type: typ, Version: 1, Payload: payload}); err != nil {
		p.o.log.Debug("peering message not sent", "pg", p.id.String(), "to", to, "err", err)
	}
}

// decodeMember decodes a member's report.
func decodeMember(osd int32, rawInfo []byte, rawLog [][]byte) (peering.Member, error) {
	info, err := pglog.DecodeInfo(rawInfo)
	if err != nil {
		return peering.Member{}, err
	}
	mem := peering.Member{OSD: osd, Info: info, Log: make([]pglog.Entry, 0, len(rawLog))}
	for _, b := range rawLog {
		e, err := pglog.DecodeEntry(b)
		if err != nil {
			return peering.Member{}, err
		}
		mem.Log = append(mem.Log, e)
	}
	return mem, nil
}

// The member side. Each handler waits for the sender's map epoch, then
// acts only if the PG here is in the sender's interval.

// peerPG returns the PG a peering message names, the sender's id, and
// whether this OSD holds the PG in the sender's interval h.
func (o *OSD) peerPG(from msgr.Peer, h wire.PGInterval) (*pg, int32, bool) {
	sender, ok := osdID(from.Name.String())
	if !ok {
		return nil, 0, false
	}
	p, _ := o.lookupPG(h.PG)
	if p == nil {
		return nil, sender, false
	}
	p.mu.Lock()
	same := p.info.SameIntervalSince == h.IntervalStart
	p.mu.Unlock()
	return p, sender, same
}

// handlePeering routes a decoded peering message. Queries and pulls only
// read, so they are answered in any interval: a primary asks the OSDs of
// past intervals (strays) too, and may copy from one.
func (o *OSD) handlePeering(from msgr.Peer, h wire.PGInterval, msg any) {
	o.whenMap(from.Session, h.Epoch, func() {
		p, sender, same := o.peerPG(from, h)
		if q, isQuery := msg.(wire.PGQuery); isQuery {
			o.answerQuery(from, p, q)
			return
		}
		if _, isRemove := msg.(wire.PGRemove); isRemove { // to a stray, in another interval
			if p != nil {
				o.takeRemove(p, sender)
			}
			return
		}
		if pull, isPull := msg.(wire.PGPull); isPull && p == nil {
			for _, id := range pull.Objects { // nothing here to give
				o.reply(from, wire.TypePGAck, wire.PGAck{PGInterval: pull.PGInterval, Object: id, Result: -wire.ENOENT}.Encode())
			}
			return
		}
		if p == nil {
			return
		}
		if pull, isPull := msg.(wire.PGPull); isPull && !same {
			o.wg.Go(func() { p.answerPull(from, pull) })
			return
		}
		if !same {
			return
		}
		switch m := msg.(type) {
		case wire.PGNotify:
			p.postToRun(sender, m)
		case wire.PGAck: // for a repair (scrub.go), or for peering
			if !p.deliver(waitKey{typ: wire.TypePGAck, from: sender, object: m.Object}, m) {
				p.postToRun(sender, m)
			}
		case wire.PGPull:
			o.wg.Go(func() { p.answerPull(from, m) })
		case wire.PGPush: // to apply, or the answer to this primary's pull
			if !p.deliver(waitKey{typ: wire.TypePGPush, from: sender, object: m.Object}, m) && !p.postToRun(sender, m) {
				o.notePush(h.PG, sender, h.IntervalStart) // reservations.go
				o.wg.Go(func() { p.takePush(from, m) })
			}
		case wire.PGActivate:
			o.wg.Go(func() { p.takeActivate(from, sender, m) })
		case wire.ScrubRequest:
			o.wg.Go(func() { p.answerScrub(from, m) })
		case wire.ScrubMap:
			p.deliver(waitKey{typ: wire.TypeScrubMap, from: sender, token: m.Token}, m)
		case wire.PGInfo:
			o.wg.Go(func() { p.takeInfo(sender, m) })
		}
	})
}

// postToRun hands msg to the primary's peering of this interval and
// reports whether there is one (on a member there is none).
func (p *pg) postToRun(from int32, msg any) bool {
	p.mu.Lock()
	r := p.run
	p.mu.Unlock()
	if r != nil {
		r.post(from, msg)
	}
	return r != nil
}

// answerQuery reports this OSD's info and log of the PG (p), or an empty
// history if it holds none (p nil).
func (o *OSD) answerQuery(from msgr.Peer, p *pg, q wire.PGQuery) {
	n := wire.PGNotify{PGInterval: wire.PGInterval{PG: q.PG, Epoch: o.Epoch(), IntervalStart: q.IntervalStart},
		Info: pglog.Info{PG: q.PG}.Encode()}
	if p != nil {
		p.mu.Lock()
		n.Info = p.info.Encode()
		for _, e := range p.log.Entries() {
			n.Log = append(n.Log, e.Encode())
		}
		n.Missing = slices.SortedFunc(maps.Keys(p.missing), objid.Compare)
		p.mu.Unlock()
	}
	o.reply(from, wire.TypePGNotify, n.Encode())
}

// answerPull pushes the objects the primary asked for. It refuses those
// it lacks (its missing set), which the primary then fetches elsewhere;
// to a search it sends whatever copy it holds (the primary checks the
// version: it may be the one searched for, or an older one to revert
// to).
func (p *pg) answerPull(from msgr.Peer, q wire.PGPull) {
	objs := q.Objects
	for _, id := range objs {
		p.mu.Lock()
		lacks := p.missing[id]
		p.mu.Unlock()
		if lacks && !q.Search {
			p.reply(from, wire.TypePGAck, wire.PGAck{PGInterval: q.PGInterval, Object: id, Result: -wire.ENOENT}.Encode())
			continue
		}
		push, err := p.objectState(id)
		if err != nil {
			// The primary hears of it, and asks another copy.
			p.o.log.Error("cannot read an object the primary pulls", "pg", p.id.String(), "object", id.String(), "err", err)
			p.reply(from, wire.TypePGAck, wire.PGAck{PGInterval: q.PGInterval, Object: id, Result: storeErrno(err)}.Encode())
			continue
		}
		push.PGInterval = q.PGInterval
		p.reply(from, wire.TypePGPush, push.Encode())
	}
}

// takePush applies a pushed object and acknowledges it once committed.
func (p *pg) takePush(from msgr.Peer, m wire.PGPush) {
	ack := wire.PGAck{PGInterval: m.PGInterval, Object: m.Object}
	if err := p.applyPush(m); p.o.stopping.Load() {
		return // the store failed: no answer, peering goes on without this OSD
	} else if err != nil {
		p.o.log.Error("peering: a pushed object was not applied", "pg", p.id.String(), "object", m.Object.String(), "err", err)
		ack.Result = storeErrno(err)
	}
	p.reply(from, wire.TypePGAck, ack.Encode())
}

// takeActivate adopts the authoritative history from the primary.
func (p *pg) takeActivate(from msgr.Peer, sender int32, m wire.PGActivate) {
	ack := wire.PGAck{PGInterval: m.PGInterval, Activate: true}
	err := func() error {
		p.mu.Lock()
		primary := p.primary
		p.mu.Unlock()
		if sender != primary {
			return fmt.Errorf("activation from osd.%d, but osd.%d is primary", sender, primary)
		}
		mem, err := decodeMember(sender, m.Info, m.Log)
		if err != nil {
			return err
		}
		var keep map[objid.ID]bool
		missing := m.Missing
		if m.Backfill {
			// Every object is pushed but the copies already current.
			keep, missing = p.currentCopies(m.Missing, m.Versions)
			ack.Current = slices.SortedFunc(maps.Keys(keep), objid.Compare)
		}
		return p.adopt(mem.Info, mem.Log, m.IntervalStart, keep, missing)
	}()
	if p.o.stopping.Load() {
		return // the store failed: no answer, peering goes on without this OSD
	}
	if err != nil {
		p.o.log.Error("peering: activation failed", "pg", p.id.String(), "err", err)
		ack.Result = -wire.EINVAL
	}
	p.reply(from, wire.TypePGAck, ack.Encode())
}

// currentCopies splits a backfill's objects (with the primary's version
// of each, if given) into the copies this OSD holds at that version
// already, which it keeps, and those it lacks. A copy its own missing
// set names is not current, whatever it says.
func (p *pg) currentCopies(objs []objid.ID, versions []wire.Version) (keep map[objid.ID]bool, lacks []objid.ID) {
	keep = map[objid.ID]bool{}
	if len(versions) != len(objs) {
		return keep, objs
	}
	for i, id := range objs {
		p.mu.Lock()
		stale := p.missing[id]
		p.mu.Unlock()
		if v := versions[i]; v != (wire.Version{}) && !stale && p.storedVersion(id) == v {
			keep[id] = true
			continue
		}
		lacks = append(lacks, id)
	}
	return keep, lacks
}

// reply sends a peering message back on the session it came on.
func (p *pg) reply(to msgr.Peer, typ uint16, payload []byte) { p.o.reply(to, typ, payload) }

func (o *OSD) reply(to msgr.Peer, typ uint16, payload []byte) {
	if err := to.Session.Send(o.ctx, msgr.Message{Type: typ, Version: 1, Payload: payload}); err != nil {
		o.log.Debug("peering reply not sent", "to", to.Name.String(), "err", err)
	}
}

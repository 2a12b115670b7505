package osd

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/watch"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// Watch/notify on the primary: this file drives each PG's watch.State.
// Watches are registered by OpWatch, a write (the ops package persists
// the watch as an attribute of the object), and their state changes
// when that write executes; pings, notifies, acks and listings are
// served from the state, in the object's turn of the op queue, after
// the object's persisted watches are loaded into it (a new primary thus
// knows the watches of the old one and gives their clients the timeout
// to reconnect). A notify's request is answered when the state completes
// it. A watch that expires is removed from the object by a write the OSD
// sends itself; none expires while the PG serves no ops
// (holdWatchesLocked). An interval that moves the primary elsewhere forgets the
// state: notifies in progress are answered ESTALE and resent by their
// clients to the new primary, where watchers reconnect.

// Watch/notify defaults: the watch timeout of a watch that asks for none
// (Config.WatchTimeout's default, Ceph's osd_client_watch_timeout) and
// librados' notify timeout.
const (
	defaultWatchTimeout  = 30 * time.Second
	defaultNotifyTimeout = 10 * time.Second
	maxNotifyTimeout     = time.Hour
)

// pgWatch is a PG's watch state and what drives it.
type pgWatch struct {
	mu       sync.Mutex
	st       *watch.State
	timer    clock.Timer
	notifies map[uint64]*request // notify requests awaiting completion
}

func newPGWatch(timeout time.Duration) *pgWatch {
	return &pgWatch{st: watch.New(timeout), notifies: map[uint64]*request{}}
}

// setWatchTimeout gives every PG's watch state a new default watch
// timeout (osd_client_watch_timeout), for the watches it times from now.
func (o *OSD) setWatchTimeout(d time.Duration) {
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	for _, p := range pgs {
		p.watch.mu.Lock()
		p.watch.st.SetDefaultTimeout(d)
		p.watch.mu.Unlock()
	}
}

// watchConns names client sessions for the watch states.
type watchConns struct {
	mu    sync.Mutex
	next  watch.ConnID
	ids   map[*msgr.Session]watch.ConnID
	peers map[watch.ConnID]msgr.Peer
}

// connOf returns the ConnID of from's session, naming it if new (0 for
// the OSD's own requests, which have none).
func (o *OSD) connOf(from msgr.Peer) watch.ConnID {
	if from.Session == nil {
		return 0
	}
	c := &o.watchConns
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.ids[from.Session]; ok {
		return id
	}
	if c.ids == nil {
		c.ids, c.peers = map[*msgr.Session]watch.ConnID{}, map[watch.ConnID]msgr.Peer{}
	}
	c.next++
	c.ids[from.Session], c.peers[c.next] = c.next, from
	return c.next
}

func (o *OSD) peerOf(id watch.ConnID) (msgr.Peer, bool) {
	c := &o.watchConns
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.peers[id]
	return p, ok
}

// watchSessionLost tells every PG's watch state that a client session
// closed: its watches wait their timeout for a reconnect.
func (o *OSD) watchSessionLost(s *msgr.Session) {
	c := &o.watchConns
	c.mu.Lock()
	id, ok := c.ids[s]
	delete(c.ids, s)
	delete(c.peers, id)
	c.mu.Unlock()
	if !ok {
		return
	}
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	now := o.cfg.Clock.Now()
	for _, p := range pgs {
		pw := p.watch
		pw.mu.Lock()
		pw.st.ConnLost(id, now)
		p.armWatchLocked()
		pw.mu.Unlock()
	}
}

// isWatchOp reports whether code is served from the watch state.
func isWatchOp(code wire.ObjectOpCode) bool {
	switch code {
	case wire.OpWatchPing, wire.OpNotify, wire.OpNotifyAck, wire.OpListWatchers:
		return true
	}
	return false
}

// serveWatchOp serves r if it is a ping, notify, ack or listing, and
// reports whether it was one. It runs in the object's turn of the op
// queue, with the PG active and this OSD its primary.
func (p *pg) serveWatchOp(r *request, epoch uint64) bool {
	if !slices.ContainsFunc(r.op.Ops, func(op wire.ObjectOp) bool { return isWatchOp(op.Code) }) {
		return false
	}
	if len(r.op.Ops) != 1 {
		r.replyError(-wire.EINVAL, epoch)
		return true
	}
	op := &r.op.Ops[0]
	obj := r.op.Object
	pw := p.watch
	if err := p.loadWatches(obj); err != nil {
		p.o.log.Error("watches not loaded", "pg", p.id.String(), "object", obj.String(), "err", err)
		r.replyError(storeErrno(err), epoch)
		return true
	}
	if op.Code == wire.OpNotify || op.Code == wire.OpListWatchers {
		// As Ceph's: ENOENT for an object that does not exist.
		if _, err := p.o.cfg.Store.Stat(p.o.ctx, p.coll, obj); errors.Is(err, objectstore.ErrNotFound) {
			r.replyError(-wire.ENOENT, epoch)
			return true
		} else if err != nil {
			r.replyError(storeErrno(err), epoch)
			return true
		}
	}
	now := p.o.cfg.Clock.Now()
	ok := func(res wire.ObjectOpResult) {
		r.reply(wire.OSDOpReply{Epoch: epoch, Flags: wire.ReplyApplied | wire.ReplyCommitted, Ops: []wire.ObjectOpResult{res}})
	}
	pw.mu.Lock()
	var acts []watch.Action
	switch op.Code {
	case wire.OpWatchPing:
		errno := pw.st.Ping(obj, wire.WatcherID{Client: r.from.Name.String(), Cookie: op.Version}, now)
		p.armWatchLocked()
		pw.mu.Unlock()
		if errno != 0 {
			r.replyError(-errno, epoch)
		} else {
			ok(wire.ObjectOpResult{})
		}
		return true
	case wire.OpListWatchers:
		ws := pw.st.Watchers(obj)
		pw.mu.Unlock()
		ok(wire.ObjectOpResult{Data: wire.EncodeWatchers(ws)})
		return true
	case wire.OpNotifyAck:
		acts = pw.st.Ack(op.Offset, wire.WatcherID{Client: r.from.Name.String(), Cookie: op.Version}, slices.Clone(op.Data))
	case wire.OpNotify:
		timeout := time.Duration(op.Length) * time.Millisecond
		if op.Length == 0 {
			timeout = defaultNotifyTimeout
		}
		timeout = min(timeout, maxNotifyTimeout)
		id := epoch<<24 + p.o.notifySeq.Add(1)&(1<<24-1)
		pw.notifies[id] = r
		acts = pw.st.Notify(obj, id, r.from.Name.String(), slices.Clone(op.Data), timeout, now)
	}
	p.armWatchLocked()
	pw.mu.Unlock()
	if op.Code == wire.OpNotifyAck {
		ok(wire.ObjectOpResult{})
	}
	p.doWatchActions(acts, epoch)
	return true
}

// loadWatches loads obj's persisted watches into the watch state, once.
func (p *pg) loadWatches(obj objid.ID) error {
	pw := p.watch
	pw.mu.Lock()
	loaded := pw.st.Loaded(obj)
	pw.mu.Unlock()
	if loaded {
		return nil
	}
	attrs, err := p.o.cfg.Store.GetAttrs(p.o.ctx, p.coll, obj)
	if err != nil && !errors.Is(err, objectstore.ErrNotFound) {
		return err
	}
	now := p.o.cfg.Clock.Now()
	pw.mu.Lock()
	pw.st.Load(obj, ops.Watchers(attrs), now)
	p.armWatchLocked()
	pw.mu.Unlock()
	return nil
}

// watchEffects changes the watch state after write r executed (res, with
// no failure): watches registered or ended, the object deleted. It runs
// with the PG lock held, in the object's turn of the op queue.
func (p *pg) watchEffectsLocked(r *request, res *ops.Result) {
	var acts []watch.Action
	deleted := res.Existed && !res.Exists
	for i := range r.op.Ops {
		op := &r.op.Ops[i]
		if op.Code != wire.OpWatch || deleted {
			continue
		}
		if err := p.loadWatches(r.op.Object); err != nil {
			p.o.log.Error("watches not loaded", "pg", p.id.String(), "object", r.op.Object.String(), "err", err)
		}
		id := ops.WatcherOf(r.from.Name.String(), op)
		pw := p.watch
		pw.mu.Lock()
		if op.Flags == wire.WatchUnregister {
			acts = append(acts, pw.st.Unwatch(r.op.Object, id)...)
		} else {
			w := wire.WatchInfo{WatcherID: id, TimeoutSec: uint32(op.Length)}
			acts = append(acts, pw.st.Watch(r.op.Object, w, p.o.connOf(r.from), p.o.cfg.Clock.Now())...)
		}
		p.armWatchLocked()
		pw.mu.Unlock()
	}
	if deleted {
		pw := p.watch
		pw.mu.Lock()
		acts = append(acts, pw.st.Deleted(r.op.Object)...)
		p.armWatchLocked()
		pw.mu.Unlock()
	}
	p.doWatchActions(acts, p.epoch)
}

// doWatchActions carries out what the watch state decided. It neither
// blocks nor takes the PG lock: the OSD's own writes start in a
// goroutine.
func (p *pg) doWatchActions(acts []watch.Action, epoch uint64) {
	for _, a := range acts {
		switch a.Kind {
		case watch.ActionSendNotify, watch.ActionSendError:
			peer, ok := p.o.peerOf(a.Conn)
			if !ok {
				continue // the session closed meanwhile; the reconnect resends
			}
			m := wire.WatchNotify{Kind: wire.WatchEventNotify, Object: a.Object.Name, Cookie: a.Watcher.Cookie,
				NotifyID: a.NotifyID, Notifier: a.Notifier, Payload: a.Payload}
			if a.Kind == watch.ActionSendError {
				m = wire.WatchNotify{Kind: wire.WatchEventError, Object: a.Object.Name, Cookie: a.Watcher.Cookie, Errno: a.Errno}
			}
			p.o.sendNow(peer, msgr.Message{Type: wire.TypeWatchNotify, Version: 1, Payload: m.Encode()})
		case watch.ActionCompleteNotify:
			pw := p.watch
			pw.mu.Lock()
			r := pw.notifies[a.NotifyID]
			delete(pw.notifies, a.NotifyID)
			pw.mu.Unlock()
			if r != nil {
				r.reply(wire.OSDOpReply{Epoch: epoch, Flags: wire.ReplyApplied | wire.ReplyCommitted,
					Ops: []wire.ObjectOpResult{{Data: a.Result.Encode()}}})
			}
		case watch.ActionRemoveWatch:
			p.o.spawn(func() { p.removeWatch(a.Object, a.Watcher) })
		}
	}
}

// removeWatch removes an expired watch's record from its object, by a
// write of the OSD's own through the op queue and replication; if the
// interval ends first, the next primary expires the watch again.
func (p *pg) removeWatch(obj objid.ID, w wire.WatchInfo) {
	o := p.o
	p.mu.Lock()
	epoch := p.epoch
	p.mu.Unlock()
	name := auth.EntityName{Type: "osd", ID: strconv.Itoa(int(o.cfg.ID))}
	r := &request{o: o, from: msgr.Peer{Name: name}, write: true, op: wire.OSDOp{
		Req:   wire.ReqID{Client: name.String(), Incarnation: o.nonce, Tid: o.watchTid.Add(1)},
		Epoch: epoch, PG: p.id, Object: obj,
		Ops: []wire.ObjectOp{{Code: wire.OpWatch, Flags: wire.WatchUnregister, Version: w.Cookie, Name: w.Client}},
	}}
	p.enqueue(r)
}

// holdWatchesLocked holds the PG's watches from expiring while it serves
// no ops (it peers, fewer OSDs act than min_size, or another OSD is the
// primary): its watchers' pings wait parked meanwhile, so their silence
// says nothing. When it serves ops again each watch has its timeout
// anew, as Ceph's primary, which times no watch out while its PG is not
// active and loads the watches afresh at activation. The caller holds
// p.mu, and calls it wherever the PG may go active or stop being so.
func (p *pg) holdWatchesLocked() {
	pw := p.watch
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if p.activeLocked() {
		if !pw.st.Held() {
			return
		}
		pw.st.Release(p.o.cfg.Clock.Now())
	} else {
		if pw.st.Held() {
			return
		}
		pw.st.Hold()
	}
	p.armWatchLocked()
}

// armWatchLocked sets the PG's watch timer to the state's next deadline;
// pw.mu is held.
func (p *pg) armWatchLocked() {
	pw := p.watch
	d, ok := pw.st.Deadline()
	if pw.timer != nil {
		pw.timer.Stop()
		pw.timer = nil
	}
	if !ok {
		return
	}
	pw.timer = p.o.cfg.Clock.AfterFunc(max(d.Sub(p.o.cfg.Clock.Now()), 0), p.watchTick)
}

// watchTick runs the watch state's timeouts.
func (p *pg) watchTick() {
	if p.o.ctx.Err() != nil {
		return
	}
	p.mu.Lock()
	epoch := p.epoch
	p.holdWatchesLocked()
	p.mu.Unlock()
	pw := p.watch
	pw.mu.Lock()
	acts := pw.st.Tick(p.o.cfg.Clock.Now())
	p.armWatchLocked()
	pw.mu.Unlock()
	p.doWatchActions(acts, epoch)
}

// watchResetLocked forgets the PG's watch state at the end of an
// interval, unless this OSD stays the primary (the state is still true
// then, and clients see no change of target to reconnect on), and
// returns the notifies in progress, to be answered ESTALE.
func (p *pg) watchResetLocked() []*request {
	if p.isPrimaryLocked() {
		return nil
	}
	pw := p.watch
	pw.mu.Lock()
	defer pw.mu.Unlock()
	var out []*request
	for _, id := range pw.st.Reset() {
		if r := pw.notifies[id]; r != nil {
			out = append(out, r)
		}
	}
	clear(pw.notifies)
	if pw.timer != nil {
		pw.timer.Stop()
		pw.timer = nil
	}
	return out
}

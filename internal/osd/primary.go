package osd

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/replication"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/internal/osd/txncrc"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// request is a client op being served.
type request struct {
	o     *OSD
	from  msgr.Peer
	op    wire.OSDOp
	since time.Time
	write bool

	// release hands the message's buffer back to the messenger once the
	// request is answered: its data is no longer used then (the store
	// has committed any write of it).
	release func()
	// pieceCRCs gives the piece checksums the messenger computed for data
	// of the message (msgr.Message.PieceCRCsOf).
	pieceCRCs func([]byte) []uint32
	// stored is closed once the store has committed the request's
	// transaction (nil: none queued); the buffer goes back only then,
	// even if the request was answered before (an interval ended).
	stored <-chan struct{}

	// internal, if not nil, takes the replies of a request the OSD made
	// itself (a snap trim) instead of a client.
	internal func(wire.OSDOpReply)
	// class is the request's class in the op queue: opq.Client (the
	// zero value) but for the OSD's own snap trims.
	class opq.Class
	// trimIndexed are, for a snap trim, the head's index entries the
	// trimmer read (snaptrim.go).
	trimIndexed []snaps.IndexEntry

	mu       sync.Mutex
	state    string // for dump_ops_in_flight
	done     func() // ends tracking; nil once called
	result   int32
	bytesIn  int
	bytesOut int
}

func (r *request) setState(s string) {
	r.mu.Lock()
	r.state = s
	r.mu.Unlock()
}

func (r *request) getState() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// reply sends r to the client without blocking (OSD.sendNow); a client
// that went away is not an error.
// The reply that ends the request (committed, or a failure) ends its
// tracking.
func (r *request) reply(rep wire.OSDOpReply) { r.replyThen(rep, nil, nil) }

// replyThen replies and calls sent, if not nil, once the reply no longer
// needs the buffers its data sits in; tailCRC, if not nil, gives the
// messenger the checksums of read data the store returned with it.
func (r *request) replyThen(rep wire.OSDOpReply, sent func(), tailCRC func([]byte) (uint32, bool)) {
	rep.Tid, rep.Attempt = r.op.Req.Tid, r.op.Attempt
	// Read data goes out from the buffer the store read it into.
	segs := rep.EncodeSegments()
	msg := msgr.Message{Type: wire.TypeOSDOpReply, Version: 1, Payload: segs[0], Tail: segs[1:], Done: sent, TailCRC: tailCRC}
	switch {
	case r.internal != nil:
		r.internal(rep) // the OSD's own request that waits for its answer (snaptrim.go)
		if sent != nil {
			sent()
		}
	case r.from.Session != nil:
		r.o.sendNow(r.from, msg)
	case sent != nil:
		sent() // the OSD's own request (removeWatch): no one to answer
	}
	if rep.Flags&wire.ReplyCommitted == 0 {
		return
	}
	r.mu.Lock()
	done := r.done
	r.done = nil
	r.result = rep.Result
	for i := range r.op.Ops {
		r.bytesIn += len(r.op.Ops[i].Data)
	}
	for i := range rep.Ops {
		r.bytesOut += len(rep.Ops[i].Data)
	}
	r.mu.Unlock()
	if done != nil {
		done()
		r.releaseWhenStored()
	}
}

// releaseWhenStored hands the message buffer back once no queued
// transaction refers to it. The rep ops of a write refer to it too: a
// write answered as committed was received whole by every replica, so
// its rep ops are written and never retransmitted; a write abandoned
// with its interval may still have rep ops queued, and its buffers are
// left to the collector instead (dropBuffer).
func (r *request) releaseWhenStored() {
	r.mu.Lock()
	stored, release := r.stored, r.release
	r.mu.Unlock()
	switch {
	case release == nil:
	case stored == nil || isClosed(stored):
		release()
	default:
		go func() {
			select {
			case <-stored:
				release()
			case <-r.o.ctx.Done():
			}
		}()
	}
}

// takeRelease takes from r what hands its message buffer back, so that
// answering r does not: a write answered before its replicas committed
// it (ack primary) keeps the buffer until they did, its rep ops
// referring to it.
func (r *request) takeRelease() func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.release
	r.release = nil
	return f
}

// dropBuffer makes sure r's message buffer never goes back to the
// messenger's pool: something the messenger may still send refers to it.
func (r *request) dropBuffer() {
	r.mu.Lock()
	r.release = nil
	r.mu.Unlock()
}

// replyError answers with a failure (a negated errno) and epoch.
func (r *request) replyError(result int32, epoch uint64) {
	r.reply(wire.OSDOpReply{Epoch: epoch, Result: result, Flags: wire.ReplyApplied | wire.ReplyCommitted})
}

// handleOp routes a client op once the OSD has the client's map epoch;
// release returns its message's buffer once it is answered.
func (o *OSD) handleOp(from msgr.Peer, op wire.OSDOp, release func(), pieceCRCs func([]byte) []uint32) {
	r := &request{o: o, from: from, op: op, write: o.cfg.Classes.IsWrite(op.Ops), release: release, pieceCRCs: pieceCRCs}
	r.done = o.track(r)
	r.setState("waiting for map")
	o.whenMap(from.Session, op.Epoch, func() {
		p, m := o.lookupPG(op.PG)
		if o.blocklisted(m, from, &op.Req) {
			r.replyError(-wire.EBLOCKLISTED, uint64(m.Epoch()))
			return
		}
		if err := o.authorize(from, m, &op); errors.Is(err, errNoPool) {
			r.replyError(-wire.ENOENT, uint64(m.Epoch()))
			return
		} else if err != nil {
			o.log.Info("op refused", "client", from.Name.String(), "pg", op.PG.String(), "err", err)
			r.replyError(-wire.EPERM, uint64(m.Epoch()))
			return
		}
		if p == nil {
			r.replyError(-wire.ESTALE, uint64(m.Epoch()))
			return
		}
		if res := snapRefusal(m.Pool(op.PG.Pool), &op, r.write); res != 0 {
			r.replyError(res, uint64(m.Epoch()))
			return
		}
		if op.Flags&wire.FlagBalanceReads != 0 && !r.write && o.serveBalancedRead(r, p, uint64(m.Epoch())) {
			return // replread.go
		}
		r.setState("queued")
		p.enqueue(r)
	})
}

// bytesOfData is how many bytes of data the request's ops carry.
func (r *request) bytesOfData() int {
	n := 0
	for i := range r.op.Ops {
		n += len(r.op.Ops[i].Data)
	}
	return n
}

// listing reports whether the request is a PG listing, which names no
// object (its object is a cursor).
func (r *request) listing() bool {
	return len(r.op.Ops) == 1 && r.op.Ops[0].Code == wire.OpListObjects
}

// checkLocked returns the errno that refuses r here and now (0: none) and
// whether r must wait for the PG to become active.
func (p *pg) checkLocked(r *request) (result int32, park bool) {
	switch {
	case p.o.blocklisted(p.fences, r.from, &r.op.Req):
		// Checked whenever a request is let in, run or resent, so a
		// request queued or parked before the map that fences its
		// client never runs after it (blocklist.go).
		return -wire.EBLOCKLISTED, false
	case !p.isPrimaryLocked() || r.op.Epoch < p.info.SameIntervalSince:
		return -wire.ESTALE, false
	case !r.listing() && r.op.Object.Pool != p.id.Pool:
		return -wire.EINVAL, false
	case !r.listing() && p.pool.HashToPG(r.op.Object.Hash) != p.id:
		// The object is not in this PG: the client's map predates a
		// split, or it is broken.
		return -wire.ESTALE, false
	case r.listing() && r.op.Object.Pool == p.id.Pool && !r.op.Object.IsMax() &&
		p.pool.HashToPG(r.op.Object.Hash) != p.id:
		// The listing's position is another PG's since a split or merge:
		// the client finds that PG with a newer map.
		return -wire.ESTALE, false
	case len(r.op.Ops) == 0:
		return -wire.EINVAL, false
	case r.write && p.holdWrites:
		// A pending merge: the PG's versions must not move until the
		// map that merges it (mergepg.go); the client waits for it.
		return -wire.ESTALE, false
	case !p.activeLocked():
		return 0, true
	case !r.listing() && p.recPlan.IsUnfound(r.op.Object):
		// As Ceph's OSD, an op on an unfound object waits until it is
		// found (a later peering) or marked lost (unfound.go).
		return 0, true
	}
	return 0, false
}

// enqueue queues r behind the requests to its object, or refuses it.
func (p *pg) enqueue(r *request) {
	p.mu.Lock()
	result, park := p.checkLocked(r)
	switch {
	case result != 0:
		epoch := p.epoch
		p.mu.Unlock()
		r.replyError(result, epoch)
		return
	case park:
		r.setState("waiting for min_size")
		p.parked = append(p.parked, r)
		p.mu.Unlock()
		return
	case r.listing():
		p.mu.Unlock()
		p.o.wg.Go(func() { p.list(r) })
		return
	}
	key := objectKey(r.op.Object)
	start := p.queue.Add(key, r.class, opq.CostOf(r.bytesOfData()), r)
	p.mu.Unlock()
	if start {
		p.o.wg.Go(func() { p.runKey(key, r) })
	}
}

// appliedHere goes on once write w of request r has applied here; the
// store runs it in its pipeline (Completion.OnApplied), so it takes the
// PG lock through withLock.
func (p *pg) appliedHere(key qkey, r *request, w *write, c *objectstore.Completion) {
	p.withLock(func() { p.afterApplied(key, r, w, c) })
}

// withLock runs f with the PG lock held, f releasing it: at once if the
// lock is free, else in a goroutine (OSD.spawn) that waits for it. The
// store's completion callbacks go through it: they run in the store's
// pipeline, and a PG holds its lock while it queues to the store, where
// Queue may wait for that pipeline, so waiting for the lock there could
// deadlock.
func (p *pg) withLock(f func()) {
	if p.mu.TryLock() {
		f()
		return
	}
	p.o.spawn(func() {
		p.mu.Lock()
		f()
	})
}

// afterApplied acks the local apply of w, lets the object's next item
// run and awaits the local commit. The caller holds the PG lock; it is
// released.
func (p *pg) afterApplied(key qkey, r *request, w *write, c *objectstore.Completion) {
	next, more := p.queue.Done(key)
	p.startWaitingLocked()
	p.ackHeld(w, p.o.cfg.ID, wire.ReplyApplied, 0)
	c.OnCommitted(func(err error) { p.committedHere(w, err) })
	p.ended(key, r)
	if more {
		p.o.spawn(func() { p.runKey(key, next) })
	}
}

// serve runs one request: a read at once, a write through replication.
// For a write it returns the write and its local completion, which the
// object's next request must wait for; nil ones otherwise.
func (p *pg) serve(r *request) (*write, *objectstore.Completion) {
	r.setState("started")
	if r.write {
		return p.serveWrite(r)
	}
	if !p.holdReadForCommit(r) { // before the checks: the interval may end meanwhile (replread.go)
		return nil, nil
	}
	p.mu.Lock()
	result, _ := p.checkLocked(r)
	epoch := p.epoch
	p.mu.Unlock()
	if result != 0 {
		r.replyError(result, epoch)
		return nil, nil
	}
	if p.serveWatchOp(r, epoch) {
		return nil, nil
	}
	if isSnapOp(r, wire.OpListSnaps) {
		p.serveListSnaps(r, epoch) // snapops.go
		return nil, nil
	}
	env := p.env(r, wire.Version{})
	target, code, err := p.readTarget(r.op.Object) // a snapshot's clone (snapops.go)
	if err == nil && code != 0 {
		r.replyError(code, epoch)
		return nil, nil
	}
	env.Object = target
	var res *ops.Result
	if err == nil {
		res, err = ops.Execute(p.o.ctx, env, r.op.Ops)
	}
	if errors.Is(err, objectstore.ErrCorrupt) && p.repairFromReplica(target, err) {
		res, err = ops.Execute(p.o.ctx, env, r.op.Ops)
	}
	if err != nil {
		p.o.log.Error("read failed in the store", "pg", p.id.String(), "object", r.op.Object.String(), "err", err)
		r.replyError(storeErrno(err), epoch)
		return nil, nil
	}
	rep := wire.OSDOpReply{Epoch: epoch, Result: -res.Code, Flags: wire.ReplyApplied | wire.ReplyCommitted,
		Version: res.Info.Version, Ops: res.Ops}
	r.replyThen(rep, p.recycler(res.Buffers), res.TailCRC)
	return nil, nil
}

// recycler returns what hands bufs back to the store once a reply that
// carries them is sent, or nil.
func (p *pg) recycler(bufs [][]byte) func() {
	rc, ok := p.o.cfg.Store.(objectstore.Recycler)
	if !ok || len(bufs) == 0 {
		return nil
	}
	return func() {
		for _, b := range bufs {
			rc.Recycle(b)
		}
	}
}

func (p *pg) env(r *request, v wire.Version) *ops.Env {
	e := &ops.Env{Store: p.o.cfg.Store, Collection: p.coll, Object: r.op.Object, Classes: p.o.cfg.Classes,
		Version: v, Now: p.o.cfg.Clock.Now()}
	// Only class methods and watches ask who called; naming the caller
	// for every op allocated a string each time.
	if slices.ContainsFunc(r.op.Ops, func(o wire.ObjectOp) bool { return o.Code == wire.OpCall || o.Code == wire.OpWatch }) {
		e.Caller = r.from.Name.String()
	}
	return e
}

// storeErrno maps a store failure to what the client is told.
func storeErrno(err error) int32 {
	switch {
	case errors.Is(err, objectstore.ErrNoSpace):
		return -wire.ENOSPC
	case errors.Is(err, objectstore.ErrInvalid):
		return -wire.EINVAL
	case errors.Is(err, context.Canceled):
		return -wire.ESTALE
	}
	return -wire.EIO
}

// write is one write replicating: who has applied and committed it, and
// the requests to answer (the original and any resends of it).
type write struct {
	tid       uint64
	object    objid.ID
	version   wire.Version
	first     wire.Version // its first log entry's (a clone's before the head's)
	last      wire.Version // its last log entry's (the PG's last_update it made)
	reqs      []*request
	acks      replication.Acks // who has applied and committed it
	abandoned bool             // the interval ended
	ops       []wire.ObjectOpResult
	// objects are those its log entries change (the head, and a
	// snapshot's clone or snapdir): what a replica that refused it
	// lacks.
	objects []objid.ID
	// bytes is the data the write carries (the replication lag a
	// replica that has yet to commit it owes).
	bytes int
	// answered is set once the clients were answered before every
	// member committed (ack primary: replication.Answer); reqs is empty
	// then, and held hands back their message buffers once the replicas
	// committed (or is dropped with the interval).
	answered bool
	held     []func()
}

// serveWrite executes a write, logs and queues it, and sends it to the
// replicas. It returns the write and its local completion, or nil ones
// when it has answered already.
func (p *pg) serveWrite(r *request) (*write, *objectstore.Completion) {
	if !p.recoverFirst(r.op.Object) {
		p.mu.Lock()
		epoch := p.epoch
		p.mu.Unlock()
		r.replyError(-wire.ESTALE, epoch) // the interval ended
		return nil, nil
	}
	p.mu.Lock()
	if result, _ := p.checkLocked(r); result != 0 {
		epoch := p.epoch
		p.mu.Unlock()
		r.replyError(result, epoch)
		return nil, nil
	}
	if p.answerResendLocked(r) {
		p.mu.Unlock()
		return nil, nil
	}
	// Checked before anything is applied here or sent to a replica.
	if why := p.fullRefusalLocked(r); why != "" {
		epoch := p.epoch
		p.mu.Unlock()
		p.o.log.Debug("write refused: no space", "pg", p.id.String(), "object", r.op.Object.String(), "reason", why)
		r.replyError(-wire.ENOSPC, epoch)
		return nil, nil
	}
	w, c, err := p.startWriteLocked(r)
	epoch := p.epoch
	p.mu.Unlock()
	if isStoreFailure(err) {
		p.o.storeFailed(err) // unanswered: the client resends to the next primary
		return nil, nil
	}
	if err != nil {
		p.o.log.Error("write failed", "pg", p.id.String(), "object", r.op.Object.String(), "err", err)
		r.replyError(storeErrno(err), epoch)
		return nil, nil
	}
	if w == nil || c == nil {
		return nil, nil // answered already (a failed or empty op)
	}
	return w, c
}

// committedHere records the local commit of w; it runs in the store's
// pipeline (Completion.OnCommitted), so it takes the PG lock through
// withLock.
func (p *pg) committedHere(w *write, err error) {
	result := int32(0)
	if isStoreFailure(err) {
		go p.o.storeFailed(err) // unanswered: the client resends to the next primary
		return
	} else if err != nil {
		p.o.log.Error("local commit failed", "pg", p.id.String(), "err", err)
		result = storeErrno(err)
	}
	p.withLock(func() { p.ackHeld(w, p.o.cfg.ID, wire.ReplyCommitted, result) })
}

// answerResendLocked answers a write the PG has seen before (same request
// id): it joins the write if it is still replicating, and otherwise gets
// the logged outcome. It reports whether r was such a resend.
func (p *pg) answerResendLocked(r *request) bool {
	e, ok := p.log.Lookup(r.op.Req)
	if !ok {
		return false
	}
	for _, w := range p.writes {
		if w.version == e.Version && !w.answered {
			w.reqs = append(w.reqs, r)
			return true
		}
	}
	r.reply(wire.OSDOpReply{Epoch: p.epoch, Result: e.Result, Flags: wire.ReplyApplied | wire.ReplyCommitted, Version: e.Version})
	return true
}

// startWriteLocked executes r with the next version; if it changes the
// object it queues the transaction (with the log entry) here and sends it
// to the replicas. It returns the write and the local completion, or nil
// ones when r was answered already.
func (p *pg) startWriteLocked(r *request) (*write, *objectstore.Completion, error) {
	sw, loaded, err := p.prepareSnapWrite(r) // clone first? (snapops.go)
	if errors.Is(err, snaps.ErrTooManyClones) {
		r.replyError(-wire.EMLINK, p.epoch)
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	cloneV := wire.Version{Epoch: p.epoch, Counter: p.info.LastUpdate.Counter + 1}
	v := wire.Version{Epoch: p.epoch, Counter: cloneV.Counter + sw.entriesBefore()}
	prior := p.info.LastUpdate
	var res *ops.Result
	if isSnapOp(r, wire.OpRollback) {
		res = p.rollback(r, sw, v) // snapops.go
	} else if isSnapOp(r, opSnapTrim) {
		res, err = p.snapTrim(sw, v) // snaptrim.go
		if err != nil {
			return nil, nil, err
		}
	} else {
		env := p.env(r, v)
		env.Loaded = loaded // the head as prepareSnapWrite read it, or nil
		if res, err = ops.Execute(p.o.ctx, env, r.op.Ops); err != nil {
			return nil, nil, err
		}
	}
	if res.Code == 0 {
		p.watchEffectsLocked(r, res)
	}
	if res.Code != 0 || !res.Wrote() {
		r.reply(wire.OSDOpReply{Epoch: p.epoch, Result: -res.Code, Flags: wire.ReplyApplied | wire.ReplyCommitted,
			Version: res.Info.Version, Ops: res.Ops})
		return nil, nil, nil
	}
	kind := pglog.Modify
	if !res.Exists {
		kind = pglog.Delete
	}
	entry := pglog.Entry{Version: v, Prior: prior, Kind: kind, Object: r.op.Object, Req: r.op.Req}
	info := p.info
	info.Stats = info.Stats.Add(res.Existed, res.Exists, res.SizeBefore, res.Size)
	txn := &res.Txn
	before, after, stats := sw.finish(p.id, txn, res, r.op.Ops, cloneV, wire.Version{Epoch: v.Epoch, Counter: v.Counter + 1}, info.Stats)
	info.Stats = stats
	var buf [3]pglog.Entry // a clone's, the head's and the snapdir's: on the stack
	entries := append(append(append(buf[:0], before...), entry), after...)
	last := entries[len(entries)-1].Version
	info.LastUpdate, info.LastComplete = last, last
	txncrc.Keep(txn, r.pieceCRCs)
	for _, e := range entries {
		pglog.AppendTxn(txn, p.id, e)
	}
	trimmed := logTrim(p.log.Len()+len(entries), int(p.o.logLimit.Load()))
	if trimmed > 0 {
		dropped := p.log.Oldest(trimmed)
		info.LogTail = dropped[len(dropped)-1].Version
		pglog.TrimTxn(txn, p.id, dropped)
	}
	pglog.SaveInfoTxn(txn, info)
	replicas := p.replicasLocked()
	var repop [][]byte
	if len(replicas) > 0 {
		// Encoded before Queue: the store may hold on to the transaction.
		repop = p.encodeRepOp(v, entry, info, txn, r.op.Flags&wire.FlagWantApplied != 0, slices.Concat(before, after))
	}
	c, err := p.o.cfg.Store.Queue(p.o.ctx, txn)
	if err != nil {
		return nil, nil, err
	}
	if p.o.space.wrote(r.bytesOfData()) {
		p.o.spawn(p.o.refreshSpace)
	}
	r.mu.Lock()
	r.stored = c.Committed()
	r.mu.Unlock()
	for _, e := range entries {
		if err := p.log.Append(e); err != nil {
			return nil, nil, err // cannot happen: the versions are past the head
		}
	}
	if trimmed > 0 {
		p.log.TrimTo(p.log.Len() - trimmed)
	}
	p.info = info
	r.setState("waiting for replicas")
	p.tid++
	w := &write{tid: p.tid, object: r.op.Object, version: v, first: entries[0].Version, last: last, reqs: []*request{r}, ops: res.Ops}
	for _, e := range entries {
		if !slices.Contains(w.objects, e.Object) {
			w.objects = append(w.objects, e.Object)
		}
	}
	w.bytes = r.bytesOfData()
	w.acks.Start(p.acting, r.op.Flags&wire.FlagWantApplied != 0)
	if p.pool.Ack == osdmap.AckPrimary && p.lagging < ackPrimaryLagLimit(p.o.options().AckPrimaryMaxLag, p.o.logLimit.Load()) {
		w.acks.AnswerOn(p.o.cfg.ID) // docs/OSD.md, "Acknowledging on the primary"
	}
	p.writes[w.tid] = w
	if len(replicas) > 0 {
		p.sendRepOps(repop, txncrc.Of(txn), replicas)
	}
	return w, c, nil
}

// logTrim returns how many of a PG log's oldest entries a write trims
// when the log would hold n entries with it and may keep limit. Once
// over the limit the log goes back a sixteenth of it (at most 64
// entries) below, so that trims come in batches, each one range
// deletion in the store (pglog.TrimTxn) rather than a deleted key per
// write, as Ceph trims at least osd_pg_log_trim_min entries at a time.
func logTrim(n, limit int) int {
	if n <= limit {
		return 0
	}
	batch := min(max(limit/16, 1), 64)
	return min(n-limit+batch-1, n-1)
}

// encodeRepOp encodes the message that carries a write to the replicas;
// the tid is the one the write is about to get. Large write data stays
// where it is, in the client's message: see releaseWhenStored for why
// that buffer outlives the messages that refer to it.
func (p *pg) encodeRepOp(v wire.Version, entry pglog.Entry, info pglog.Info, txn *objectstore.Transaction, wantApplied bool, extra []pglog.Entry) [][]byte {
	msg := wire.RepOp{PG: p.id, Epoch: p.epoch, IntervalStart: p.info.SameIntervalSince, Tid: p.tid + 1,
		Version: v, WantApplied: wantApplied, Entry: entry.Encode(), Info: info.Encode(), Txn: txn}
	msg.CommittedBelow = p.committedWatermarkLocked(append(extra, entry)) // replread.go
	for _, e := range extra {
		msg.Extra = append(msg.Extra, e.Encode())
	}
	return msg.EncodeSegments()
}

// sendRepOps sends a write to each replica, in version order (the PG
// lock is held, and each replica's session keeps order). The payload is
// shared: the messenger does not modify what it sends.
//
// tailCRC gives the messenger the checksums of write data it knows.
func (p *pg) sendRepOps(segs [][]byte, tailCRC func([]byte) (uint32, bool), replicas []int32) {
	for _, id := range replicas {
		msg := msgr.Message{Type: wire.TypeRepOp, Version: 1, Payload: segs[0], Tail: segs[1:], TailCRC: tailCRC}
		if err := p.o.sendToOSD(id, msg); err != nil {
			p.o.log.Warn("rep op not sent", "pg", p.id.String(), "osd", id, "err", err)
		}
	}
}

// ack records that osd applied or committed write w (result non-zero if
// it failed), and answers the clients when everyone has.
func (p *pg) ack(w *write, osd int32, flags uint32, result int32) {
	p.mu.Lock()
	p.ackHeld(w, osd, flags, result)
}

// ackHeld is ack with the PG lock held; it releases it.
func (p *pg) ackHeld(w *write, osd int32, flags uint32, result int32) {
	if w.abandoned {
		p.mu.Unlock()
		return
	}
	stage := stageOf(flags)
	out := w.acks.Ack(osd, stage, result)
	if stage == replication.Committed && osd != p.o.cfg.ID && w.acks.Committed(osd) {
		p.noteReplicaCommitLocked(osd, w.version)
	}
	switch out {
	case replication.Nothing:
		p.mu.Unlock()
		return // nothing to answer yet
	case replication.CommittedAll:
		delete(p.writes, w.tid)
		p.readHolds.Wake(w.tid)
		p.armIdleWatermarkLocked(w.last) // replread.go
		if w.answered {
			// Answered on the primary's commit (ack primary): the
			// replicas have it now, and the buffers may go back.
			p.lagging--
			held := w.held
			w.held = nil
			p.mu.Unlock()
			for _, f := range held {
				f()
			}
			return
		}
	case replication.Answer:
		w.answered = true
		p.lagging++
		for _, r := range w.reqs {
			if f := r.takeRelease(); f != nil {
				w.held = append(w.held, f)
			}
		}
	}
	reqs, epoch, result := slices.Clone(w.reqs), p.epoch, w.acks.Result()
	if out == replication.Answer {
		w.reqs = nil
	}
	p.mu.Unlock()
	for _, r := range reqs {
		switch {
		case out == replication.CommittedAll || out == replication.Answer:
			r.reply(wire.OSDOpReply{Epoch: epoch, Result: result, Flags: wire.ReplyApplied | wire.ReplyCommitted,
				Version: w.version, Ops: w.ops})
		case r.op.Flags&wire.FlagWantApplied != 0:
			r.reply(wire.OSDOpReply{Epoch: epoch, Flags: wire.ReplyApplied, Version: w.version, Ops: w.ops})
		}
	}
}

// stageOf returns how far an ack's flags say its OSD got with a write.
func stageOf(flags uint32) replication.Stage {
	switch {
	case flags&wire.ReplyCommitted != 0:
		return replication.Committed
	case flags&wire.ReplyApplied != 0:
		return replication.Applied
	}
	return replication.Failed
}

// handleRepOpReply takes a replica's answer to a write.
func (o *OSD) handleRepOpReply(from msgr.Peer, m wire.RepOpReply) {
	p, _ := o.lookupPG(m.PG)
	if p == nil {
		return
	}
	osd, ok := osdID(from.Name.String())
	if !ok {
		return
	}
	p.mu.Lock()
	w := p.writes[m.Tid]
	refused := w != nil && !w.abandoned && m.Result == rejectedRepOp && m.Flags&wire.ReplyCommitted != 0
	var recover *peerRun
	if refused {
		// The replica's store refused it: it lacks the write's objects
		// now, and gets them pushed within the interval (missing.go).
		recover = p.replicaRefusedLocked(osd, w.objects)
	}
	p.mu.Unlock()
	if refused {
		p.o.statsChanged()
	}
	if recover != nil {
		p.o.wg.Go(func() { p.recoverReplicas(recover) })
	}
	if w == nil {
		return // finished, or abandoned with its interval
	}
	p.ack(w, osd, m.Flags, m.Result)
}

// list answers a PG listing: up to Length objects from the cursor (the
// op's object), in hash order, skipping the PG's own meta object.
func (p *pg) list(r *request) {
	op := r.op.Ops[0]
	limit := int(min(op.Length, 1<<16))
	if limit == 0 {
		limit = 1024
	}
	p.mu.Lock()
	epoch := p.epoch
	_, end := osdmap.BitwiseRange(p.id.Seed, p.pool.PGNum)
	p.mu.Unlock()
	var out wire.ObjectOpResult
	cursor := r.op.Object
	for len(out.Objects) < limit {
		objs, next, err := p.o.cfg.Store.ListObjects(p.o.ctx, p.coll, cursor, limit-len(out.Objects))
		if err != nil {
			r.replyError(storeErrno(err), epoch)
			return
		}
		for _, id := range objs {
			if id.Pool != p.id.Pool || id.Snap != objid.NoSnap {
				continue
			}
			if op.Flags&wire.ListAllNamespaces == 0 && id.Namespace != op.Name {
				continue
			}
			out.Objects = append(out.Objects, id)
		}
		cursor = next
		if next.IsMax() {
			break
		}
	}
	out.More = !cursor.IsMax()
	if out.More {
		out.Cursor = cursor
	} else if end < 1<<32 {
		// Listed to the PG's end: the listing goes on at the next
		// PG's first position, as this OSD's map cuts the pool.
		out.Cursor = objid.ID{Pool: p.id.Pool, Hash: objid.ReverseBits(uint32(end))}
	}
	r.reply(wire.OSDOpReply{Epoch: epoch, Flags: wire.ReplyApplied | wire.ReplyCommitted, Ops: []wire.ObjectOpResult{out}})
}

package rados

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The objecter (Ceph's Objecter) keeps every op in flight until its
// last reply: it targets each at the acting primary of its PG in the
// newest map (target.go), and sends it again when a new map moves the
// PG, when the OSD answers ESTALE (after the map reaches the OSD's
// epoch), or when the session to the OSD fails (after a backoff). Ops
// keep their ReqID across resends, so an OSD that already applied one
// answers with the first result; they are resent in tid order, so the
// ops of one client to one object stay in order.
//
// Everything below runs under mu, called from the caller's goroutine
// (submit), the messengers' dispatch goroutines (replies, session events
// and maps) and timers. Sends happen under mu too: that is what keeps
// resends and new ops in tid order. Session.Send blocks only while the
// session's in-flight budget is used up.

// Retry pacing.
const (
	// sessionBackoffMin and Max bound the delay before ops stranded by
	// a failed OSD session are sent again (the first retry is at once).
	sessionBackoffMin = 50 * time.Millisecond
	sessionBackoffMax = 5 * time.Second
	// mapRetryInterval is how often the monitors are asked again for a
	// map while ops wait for an epoch the client does not have.
	mapRetryInterval = 2 * time.Second
)

// sessionBackoff is the delay before the (n+1)th resend over failed
// sessions: sessionBackoffMin doubled n times, at most sessionBackoffMax.
func sessionBackoff(n int) time.Duration {
	return min(sessionBackoffMin<<min(n, 16), sessionBackoffMax)
}

type objecter struct {
	ms          *msgr.Messenger
	log         *slog.Logger
	clk         clock.Clock
	client      string
	incarnation uint64
	// requestMap asks the monitors for maps from epoch start on; it
	// must not block.
	requestMap func(start uint64)
	// pgState asks the monitors for a PG's state, for the error of an
	// op that timed out; it returns "" if they do not answer within
	// ctx. Nil: not asked.
	pgState   func(ctx context.Context, pg osdmap.PG) string
	ctx       context.Context // ended by close
	cancelCtx context.CancelFunc
	// commands are the admin commands waiting for OSD replies.
	commands commandWaiters

	mu        sync.Mutex
	closed    bool
	m         *osdmap.Map
	mapCh     chan struct{} // closed and replaced at every new map
	scratch   osdmap.Scratch
	targets   targetCache // under m
	lastTid   uint64
	ops       map[uint64]*op
	osds      map[int32]*osdSession
	wantEpoch uint64 // the newest epoch an op waits for
	mapRetry  clock.Timer
	// watchKick is closed and replaced at every OSD session failure, for
	// the watches to reconnect (watch.go); watches are the client's.
	watchKick chan struct{}
	watches   watchRegistry
	// reads is where reads go (replread.go): the policy, the choices'
	// randomness, and what the client has seen of each PG.
	reads readRouting
}

// osdSession is the client's session with one OSD.
type osdSession struct {
	s        *msgr.Session // nil until the next send connects
	addr     string
	failures int         // consecutive session failures without a reply
	lost     uint64      // session failures ever, for watches to notice (watch.go)
	retry    clock.Timer // pending resend of stranded ops, or nil
}

// op is one request in flight.
type op struct {
	tid     uint64
	msg     wire.OSDOp // Req, Object, Flags and Ops; PG, Epoch and Attempt are set per send
	name    string     // the object's name, for errors
	fixedPG bool       // msg.PG is given (a listing), not the object's
	t       target
	// session is the session the op was last sent on, nil while it is
	// not in flight (no primary, waiting for a map or a backoff).
	session   *msgr.Session
	attempts  uint32
	waitEpoch uint64 // after ESTALE: not sent before the map reaches it
	comp      *Completion
	onReply   func(*wire.OSDOpReply) // stores the results; may be nil
	// copiesReply says onReply keeps nothing of the reply, whose buffer
	// can then go back to the messenger.
	copiesReply bool
	// takeReply, if set, is handed the release of the reply's buffer
	// after onReply: the op's caller holds the buffer until then.
	takeReply func(release func())
	stop      func() bool // stops the context's AfterFunc, or nil
	timer     clock.Timer // ends the op at Config.OpTimeout, or nil
	// balanced says the op is a plain read a replica may serve under a
	// read policy; atPrimary that it goes to the primary all the same
	// (a replica was not current for it, or its session failed); sentTo
	// is the OSD it was last sent to (t.osd, or a replica).
	balanced, atPrimary bool
	sentTo              int32
}

func newObjecter(ms *msgr.Messenger, log *slog.Logger, clk clock.Clock, client string, incarnation uint64) *objecter {
	ctx, cancel := context.WithCancel(context.Background())
	return &objecter{ms: ms, log: log, clk: clk, client: client, incarnation: incarnation,
		requestMap: func(uint64) {}, ctx: ctx, cancelCtx: cancel,
		mapCh: make(chan struct{}), watchKick: make(chan struct{}), ops: make(map[uint64]*op), osds: make(map[int32]*osdSession),
		// Watch cookies count up from a value of the incarnation, so that
		// two processes of one entity (two client.admin) watching an
		// object are two watchers, not one.
		watches: watchRegistry{last: incarnation << 32}}
}

// submit starts p; its completion reports the outcome. ctx bounds the
// op: when it ends the op completes with its error (an OSD may still
// apply a write it had received). With watch false the caller waits
// for the op and ends it itself when ctx ends (Completion.waitOp),
// which spares a registration with ctx's parent for every op. timeout,
// if positive, ends the op with ErrTimedOut after that long: one
// runtime timer, cheaper than a context of its own.
func (o *objecter) submit(ctx context.Context, p *op, watch bool, timeout time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || ctx.Err() != nil {
		err := ErrClosed
		if !o.closed {
			err = ctxError(ctx)
		}
		p.comp.complete(0, err, nil)
		return
	}
	o.lastTid++
	p.tid = o.lastTid
	p.msg.Req = wire.ReqID{Client: o.client, Incarnation: o.incarnation, Tid: p.tid}
	o.ops[p.tid] = p
	tid := p.tid
	p.comp.obj, p.comp.tid = o, tid
	if watch && ctx.Done() != nil {
		p.stop = context.AfterFunc(ctx, func() { o.cancel(tid, ctxError(ctx)) })
	}
	if timeout > 0 {
		p.timer = o.clk.AfterFunc(timeout, func() { o.timedOut(tid, timeout) })
	}
	o.sendLocked(p)
}

// sendLocked (re)targets p under the current map and sends it, unless
// it must wait: for a map (ESTALE), for a primary, or for the backoff
// of its OSD's session.
func (o *objecter) sendLocked(p *op) {
	p.session = nil
	p.t = o.targets.get(o.m, &o.scratch, p.msg.Object, p.msg.PG, p.fixedPG)
	if p.t.noPool {
		pool := p.msg.Object.Pool
		if p.fixedPG {
			pool = p.msg.PG.Pool
		}
		o.finishLocked(p, 0, fmt.Errorf("%w: pool %d is not in the map at epoch %d", ErrPoolNotFound, pool, o.m.Epoch()), nil)
		return
	}
	if p.waitEpoch > uint64(o.m.Epoch()) {
		o.log.Debug("rados: op waits for a map", "tid", p.tid, "want", p.waitEpoch, "have", o.m.Epoch())
		o.wantMapLocked(p.waitEpoch)
		return
	}
	if p.t.osd < 0 {
		o.log.Debug("rados: op waits for a primary", "tid", p.tid, "pg", p.t.pg.String(), "epoch", o.m.Epoch())
		return // a map that gives the PG a primary resends it
	}
	dest, addr := o.readTargetLocked(p) // p.t.osd, or a replica for a balanced read (replread.go)
	os := o.osds[dest]
	if os == nil {
		os = &osdSession{}
		o.osds[dest] = os
	}
	if os.retry != nil {
		o.log.Debug("rados: op waits for its OSD's backoff", "tid", p.tid, "osd", dest)
		return // the backoff's timer resends it
	}
	peer := osdName(dest)
	if os.s != nil && os.addr != addr {
		old := os.s
		os.s = nil
		old.Close()
	}
	if os.s == nil {
		s, err := o.ms.Connect(peer, addr)
		if err != nil {
			o.finishLocked(p, 0, fmt.Errorf("rados: connect to %s: %w", peer, ErrClosed), nil)
			return
		}
		os.s, os.addr = s, addr
	}
	p.msg.PG, p.msg.Epoch, p.msg.Attempt = p.t.pg, uint64(o.m.Epoch()), p.attempts
	p.attempts++
	s := os.s
	// Large data goes out from the caller's buffer, which WriteOp's
	// contract keeps unchanged until the op completes.
	segs := p.msg.EncodeSegments()
	if err := s.Send(o.ctx, msgr.Message{Type: wire.TypeOSDOp, Version: 1, Payload: segs[0], Tail: segs[1:]}); err != nil {
		o.log.Debug("rados: send failed", "osd", dest, "tid", p.tid, "err", err)
		o.failSessionLocked(dest, s)
		return
	}
	p.session = s
}

// finishLocked ends p.
func (o *objecter) finishLocked(p *op, version uint64, err error, fill func()) {
	delete(o.ops, p.tid)
	if p.stop != nil {
		p.stop()
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	p.session = nil
	p.comp.complete(version, err, fill)
}

// cancel ends the op tid with err, if it is still in flight.
func (o *objecter) cancel(tid uint64, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p := o.ops[tid]; p != nil {
		o.finishLocked(p, 0, err, nil)
	}
}

// pgStateWait bounds the monitors' answer about a PG when an op times
// out: the error waits for it at most this long, and says nothing of
// the PG's state without it.
const pgStateWait = 1500 * time.Millisecond

// timedOut ends the op tid, if it is still in flight, with the op
// timeout's error, saying what it waited for: its PG, the PG's acting
// set and primary in the client's map, and the state the monitors
// report for the PG (asked here, briefly).
func (o *objecter) timedOut(tid uint64, d time.Duration) {
	o.mu.Lock()
	p := o.ops[tid]
	if p == nil {
		o.mu.Unlock()
		return
	}
	w := o.waitLocked(p)
	o.mu.Unlock()
	if w.hasPG && o.pgState != nil {
		ctx, cancel := context.WithTimeout(o.ctx, pgStateWait)
		w.state = o.pgState(ctx, w.pg)
		cancel()
	}
	o.cancel(tid, opTimeoutError(d, w.String()))
}

// waitLocked says what op p waits for under the current map.
func (o *objecter) waitLocked(p *op) opWait {
	w := opWait{object: p.name, epoch: uint64(o.m.Epoch()), waitEpoch: p.waitEpoch, primary: -1}
	pg, ok := opPG(o.m, p.msg.Object, p.msg.PG, p.fixedPG)
	if !ok {
		return w
	}
	mp, err := o.m.PGToUpActing(pg, &o.scratch)
	if err != nil {
		return w
	}
	w.hasPG, w.pg, w.acting, w.primary = true, mp.PG, slices.Clone(mp.Acting), mp.ActingPrimary
	w.sent = p.session != nil
	return w
}

// sortedOpsLocked returns the ops in flight in tid order.
func (o *objecter) sortedOpsLocked() []*op {
	ps := make([]*op, 0, len(o.ops))
	for _, p := range o.ops {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *op) int { return compareTid(a.tid, b.tid) })
	return ps
}

func compareTid(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// wantMapLocked asks the monitors for maps up to epoch, now and then
// every mapRetryInterval until the map reaches it.
func (o *objecter) wantMapLocked(epoch uint64) {
	if epoch > o.wantEpoch {
		o.wantEpoch = epoch
		o.requestMap(uint64(o.m.Epoch()) + 1)
	}
	if o.mapRetry == nil && !o.closed {
		o.mapRetry = o.clk.AfterFunc(mapRetryInterval, o.retryMap)
	}
}

func (o *objecter) retryMap() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mapRetry = nil
	if o.closed || o.wantEpoch <= uint64(o.m.Epoch()) {
		return
	}
	o.requestMap(uint64(o.m.Epoch()) + 1)
	o.mapRetry = o.clk.AfterFunc(mapRetryInterval, o.retryMap)
}

// close fails every op in flight with ErrClosed.
func (o *objecter) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.cancelCtx()
	for _, p := range o.sortedOpsLocked() {
		o.finishLocked(p, 0, ErrClosed, nil)
	}
	if o.mapRetry != nil {
		o.mapRetry.Stop()
	}
	for _, os := range o.osds {
		if os.retry != nil {
			os.retry.Stop()
		}
	}
}

// osdName is the entity name of osd.id.
func osdName(id int32) auth.EntityName {
	return auth.EntityName{Type: "osd", ID: strconv.Itoa(int(id))}
}

// osdID parses an OSD's entity name.
func osdID(n auth.EntityName) (int32, bool) {
	if n.Type != "osd" {
		return 0, false
	}
	id, err := strconv.ParseInt(n.ID, 10, 32)
	return int32(id), err == nil && id >= 0
}

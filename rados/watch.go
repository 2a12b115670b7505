package rados

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Watch/notify, as librados' watch2/notify2: a client watches an object
// on its PG's primary, which keeps the watch with the object; Notify on
// the object sends a payload to every watcher and returns their replies.
// A Watch pings its primary, and registers again (reconnects) when a new
// map moves the object's PG to another primary or the session to the
// primary fails; if the watch was lost meanwhile (it timed out, or the
// object was deleted) the handler is told with ErrNotConnected and the
// Watch ends: the application watches again and re-reads what it
// watches, for it may have missed notifies.

// WatchEvent is what a Watch's handler receives: a notify (its id, the
// notifier's entity name and payload), or, with Err set, the loss of the
// watch (ErrNotConnected), after which the Watch delivers nothing more.
type WatchEvent struct {
	NotifyID uint64
	Notifier string
	Payload  []byte
	Err      error
}

// WatchHandler handles a Watch's events, one at a time, in order; for a
// notify it returns the reply payload sent back to the notifier (nil for
// none). A handler that takes longer than the notify's timeout is
// reported by the notifier as timed out.
type WatchHandler func(WatchEvent) []byte

// WatcherID names a watch: the client entity and its cookie.
type WatcherID struct {
	Client string `json:"client"`
	Cookie uint64 `json:"cookie"`
}

// WatcherInfo is a watch as ListWatchers reports it.
type WatcherInfo struct {
	WatcherID
	// Timeout is the watch's timeout (0: the OSD's default, 30 s).
	Timeout time.Duration `json:"timeout_ns"`
}

// NotifyAck is one watcher's reply to a notify.
type NotifyAck struct {
	WatcherID
	Payload []byte `json:"payload"`
}

// NotifyResult is the outcome of a Notify: the watchers that replied, in
// watcher order, and those that did not within the timeout.
type NotifyResult struct {
	Acks     []NotifyAck `json:"acks"`
	TimedOut []WatcherID `json:"timed_out"`
}

// Watch is a registered watch; Unwatch ends it.
type Watch struct {
	io      *IOContext
	name    string
	id      objid.ID
	cookie  uint64
	handler WatchHandler
	clk     clock.Clock

	stop    chan struct{} // closed by Unwatch or the Conn's close
	stopped chan struct{} // closed when run returns
	once    sync.Once

	mu     sync.Mutex
	queue  []WatchEvent
	wake   chan struct{}
	err    error // set once the watch is lost
	events sync.WaitGroup
}

// watchPing is how often a Watch pings its primary: a sixth of the
// OSD's default watch timeout, as the Objecter's tick pings Ceph's.
const watchPing = 5 * time.Second

// Watch registers a watch on object name, which must exist (ErrNotFound
// otherwise); handler receives its notifies until Unwatch, and the loss
// of the watch should it happen.
func (io *IOContext) Watch(ctx context.Context, name string, handler WatchHandler) (*Watch, error) {
	id, err := io.objectID(name)
	if err != nil {
		return nil, err
	}
	o := io.conn.obj
	w := &Watch{io: io, name: name, id: id, cookie: o.watches.add(nil), handler: handler, clk: o.clk,
		stop: make(chan struct{}), stopped: make(chan struct{}), wake: make(chan struct{}, 1)}
	o.watches.set(w.cookie, w)
	reg := o.watchTarget(id)
	if err := w.register(ctx, wire.WatchRegister); err != nil {
		o.watches.remove(w.cookie)
		return nil, err
	}
	w.events.Add(1)
	go w.deliverLoop()
	go w.run(reg)
	return w, nil
}

// Cookie returns the watch's cookie, which names it among the client's.
func (w *Watch) Cookie() uint64 { return w.cookie }

// Err returns why the watch was lost (ErrNotConnected), nil while it
// holds.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Unwatch ends the watch: no event is delivered after it returns. It
// removes the watch from the object; that failing (the object was
// deleted) is not an error.
func (w *Watch) Unwatch(ctx context.Context) error {
	w.halt()
	<-w.stopped
	w.events.Wait()
	wr := NewWriteOp()
	wr.ops = append(wr.ops, wire.ObjectOp{Code: wire.OpWatch, Flags: wire.WatchUnregister, Version: w.cookie})
	wr.steps = append(wr.steps, nil)
	err := w.io.OperateWrite(ctx, w.name, wr)
	if errors.Is(err, ErrNotFound) {
		err = nil
	}
	return err
}

func (w *Watch) halt() {
	w.once.Do(func() {
		close(w.stop)
		w.io.conn.obj.watches.remove(w.cookie)
		w.mu.Lock()
		w.queue = nil
		w.mu.Unlock()
		select {
		case w.wake <- struct{}{}:
		default:
		}
	})
}

// register sends the watch op: a registration or a reconnect.
func (w *Watch) register(ctx context.Context, how uint32) error {
	wr := NewWriteOp()
	wr.ops = append(wr.ops, wire.ObjectOp{Code: wire.OpWatch, Flags: how, Version: w.cookie})
	wr.steps = append(wr.steps, nil)
	return w.io.OperateWrite(ctx, w.name, wr)
}

// run pings the primary and reconnects the watch when its target moves
// or its session fails, until the watch ends or is lost.
func (w *Watch) run(reg watchTarget) {
	defer close(w.stopped)
	o := w.io.conn.obj
	ping := w.clk.NewTimer(watchPing)
	defer ping.Stop()
	for {
		cur := o.watchTarget(w.id)
		reconnect := false
		switch {
		case cur.closed:
			return
		case cur.t.osd != reg.t.osd || needsResend(reg.t, cur.t) || cur.fails != reg.fails:
			reconnect = cur.t.osd >= 0
		}
		if reconnect {
			reg = cur
			if !w.check(w.register(o.ctx, wire.WatchReconnect)) {
				return
			}
			continue
		}
		select {
		case <-w.stop:
			return
		case <-cur.mapCh:
		case <-cur.kick:
		case <-ping.C():
			r := NewReadOp()
			r.addCopying(wire.ObjectOp{Code: wire.OpWatchPing, Version: w.cookie}, nil)
			ctx, cancel := context.WithTimeout(o.ctx, watchPing)
			err := w.io.OperateRead(ctx, w.name, r)
			cancel()
			if !w.check(err) {
				return
			}
			ping.Reset(watchPing)
		}
	}
}

// check reports whether the watch holds after a ping or reconnect that
// returned err; a lost watch is reported to the handler.
func (w *Watch) check(err error) bool {
	var oe *OpError
	if errors.As(err, &oe) && (oe.Errno == wire.ENOTCONN || oe.Errno == wire.ENOENT) {
		lost := fmt.Errorf("watch %d on %q: %w", w.cookie, w.name, ErrNotConnected)
		w.lose(lost)
		return false
	}
	if errors.Is(err, ErrBlocklisted) {
		// The OSDs ended the watch when the map fenced this client, and
		// refuse it from now on: the watch is lost for good.
		w.lose(fmt.Errorf("watch %d on %q: %w: %w", w.cookie, w.name, ErrNotConnected, err))
		return false
	}
	return !errors.Is(err, ErrClosed) // other failures (a timeout): try again at the next tick
}

// lose ends the watch with err, delivered to the handler last.
func (w *Watch) lose(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
		w.queue = append(w.queue, WatchEvent{Err: err})
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// deliver queues an OSD's event for the handler.
func (w *Watch) deliver(m wire.WatchNotify) {
	if m.Kind == wire.WatchEventError {
		w.lose(fmt.Errorf("watch %d on %q: %s: %w", w.cookie, w.name, wire.ErrnoName(m.Errno), ErrNotConnected))
		return
	}
	w.mu.Lock()
	if w.err == nil {
		w.queue = append(w.queue, WatchEvent{NotifyID: m.NotifyID, Notifier: m.Notifier, Payload: m.Payload})
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// maxAcksInFlight bounds the notify acks a Watch has sent and not yet
// had answered; past it, delivery waits for one.
const maxAcksInFlight = 64

// deliverLoop runs the handler on each queued event, in order, and acks
// each notify with the handler's reply. The ack goes out in the
// background: the next event's handler does not wait for the previous
// ack's round trip (under a stream of notifies, that queued every
// delivery behind the acks before it).
func (w *Watch) deliverLoop() {
	defer w.events.Done()
	acks := make(chan struct{}, maxAcksInFlight)
	for {
		w.mu.Lock()
		var ev WatchEvent
		have := len(w.queue) > 0
		if have {
			ev = w.queue[0]
			w.queue = w.queue[1:]
		}
		w.mu.Unlock()
		if !have {
			select {
			case <-w.wake:
				continue
			case <-w.stop:
				return
			}
		}
		reply := w.handler(ev)
		if ev.Err != nil {
			w.halt()
			return
		}
		select {
		case acks <- struct{}{}:
		case <-w.stop:
			return
		}
		w.events.Add(1)
		go func() {
			defer w.events.Done()
			defer func() { <-acks }()
			w.ack(ev.NotifyID, reply)
		}()
	}
}

// ack answers notify id with the handler's reply.
func (w *Watch) ack(id uint64, reply []byte) {
	r := NewReadOp()
	r.addCopying(wire.ObjectOp{Code: wire.OpNotifyAck, Version: w.cookie, Offset: id, Data: reply}, nil)
	ctx, cancel := context.WithTimeout(w.io.conn.obj.ctx, time.Minute)
	defer cancel()
	if err := w.io.OperateRead(ctx, w.name, r); err != nil {
		w.io.conn.log.Debug("rados: notify ack failed", "object", w.name, "notify", id, "err", err)
	}
}

// Notify sends payload to every watcher of object name and returns
// their replies once all replied or timeout passed (0: the OSD's
// default, 10 s). If some did not reply, the result lists them and the
// error is ErrTimedOut, as librados' notify2 returns ETIMEDOUT with its
// reply buffer.
func (io *IOContext) Notify(ctx context.Context, name string, payload []byte, timeout time.Duration) (NotifyResult, error) {
	if timeout < 0 || timeout > time.Hour {
		return NotifyResult{}, fmt.Errorf("%w: notify timeout %v (want 0 to 1h)", ErrInvalid, timeout)
	}
	if _, ok := ctx.Deadline(); !ok && io.conn.cfg.OpTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, io.conn.cfg.OpTimeout+timeout)
		defer cancel()
	}
	var data []byte
	r := NewReadOp()
	r.addCopying(wire.ObjectOp{Code: wire.OpNotify, Data: payload, Length: uint64(timeout / time.Millisecond)},
		func(res *wire.ObjectOpResult) { data = append([]byte(nil), res.Data...) })
	if err := io.OperateRead(ctx, name, r); err != nil {
		return NotifyResult{}, err
	}
	wr, err := wire.DecodeNotifyResult(data)
	if err != nil {
		return NotifyResult{}, fmt.Errorf("rados: notify %q: %w", name, err)
	}
	var out NotifyResult
	for _, a := range wr.Acks {
		out.Acks = append(out.Acks, NotifyAck{WatcherID: WatcherID{a.Client, a.Cookie}, Payload: a.Payload})
	}
	for _, t := range wr.TimedOut {
		out.TimedOut = append(out.TimedOut, WatcherID{t.Client, t.Cookie})
	}
	if len(out.TimedOut) > 0 {
		return out, fmt.Errorf("%w: notify %q: %d of %d watchers did not reply", ErrTimedOut, name,
			len(out.TimedOut), len(out.TimedOut)+len(out.Acks))
	}
	return out, nil
}

// ListWatchers returns the watches on object name, as its primary knows
// them.
func (io *IOContext) ListWatchers(ctx context.Context, name string) ([]WatcherInfo, error) {
	var data []byte
	r := NewReadOp()
	r.addCopying(wire.ObjectOp{Code: wire.OpListWatchers}, func(res *wire.ObjectOpResult) { data = append([]byte(nil), res.Data...) })
	if err := io.OperateRead(ctx, name, r); err != nil {
		return nil, err
	}
	ws, err := wire.DecodeWatchers(data)
	if err != nil {
		return nil, fmt.Errorf("rados: list watchers of %q: %w", name, err)
	}
	out := make([]WatcherInfo, 0, len(ws))
	for _, w := range ws {
		out = append(out, WatcherInfo{WatcherID: WatcherID{w.Client, w.Cookie}, Timeout: time.Duration(w.TimeoutSec) * time.Second})
	}
	return out, nil
}

// watchRegistry is a client's watches by cookie.
type watchRegistry struct {
	mu   sync.Mutex
	last uint64
	byID map[uint64]*Watch
}

// add reserves a cookie for w and returns it.
func (r *watchRegistry) add(w *Watch) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[uint64]*Watch{}
	}
	r.last++
	r.byID[r.last] = w
	return r.last
}

func (r *watchRegistry) set(cookie uint64, w *Watch) {
	r.mu.Lock()
	r.byID[cookie] = w
	r.mu.Unlock()
}

func (r *watchRegistry) remove(cookie uint64) {
	r.mu.Lock()
	delete(r.byID, cookie)
	r.mu.Unlock()
}

func (r *watchRegistry) get(cookie uint64) *Watch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[cookie]
}

// closeAll stops every watch without unregistering it (the Conn is
// closing: the OSDs time the watches out).
func (r *watchRegistry) closeAll() {
	r.mu.Lock()
	ws := make([]*Watch, 0, len(r.byID))
	for _, w := range r.byID {
		if w != nil {
			ws = append(ws, w)
		}
	}
	r.mu.Unlock()
	for _, w := range ws {
		w.halt()
	}
}

// watchTarget is where a watch's object goes under the client's map, and
// what a Watch waits on to notice a change.
type watchTarget struct {
	t      target
	fails  uint64        // session failures to that OSD so far
	mapCh  chan struct{} // closed at the next map
	kick   chan struct{} // closed at the next session failure
	closed bool
}

// watchTarget returns where object id goes now.
func (o *objecter) watchTarget(id objid.ID) watchTarget {
	o.mu.Lock()
	defer o.mu.Unlock()
	wt := watchTarget{mapCh: o.mapCh, kick: o.watchKick, closed: o.closed}
	if o.m == nil || o.closed {
		return wt
	}
	wt.t = o.targets.get(o.m, &o.scratch, id, osdmap.PG{}, false)
	if os := o.osds[wt.t.osd]; os != nil {
		wt.fails = os.lost
	}
	return wt
}

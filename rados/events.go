package rados

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The objecter's events: OSD replies and session changes (it is the
// Dispatcher of the client's OSD messenger), and maps from the monitors.

// Dispatch implements msgr.Dispatcher.
func (o *objecter) Dispatch(from msgr.Peer, msg msgr.Message) {
	if msg.Type == wire.TypeDaemonCommandReply {
		if err := o.commands.deliver(msg.Payload); err != nil {
			o.log.Warn("rados: bad command reply", "from", from.Name.String(), "err", err)
		}
		return
	}
	if msg.Type == wire.TypeWatchNotify {
		m, err := wire.DecodeWatchNotify(msg.Payload)
		o.ms.Release(msg)
		if err != nil {
			o.log.Warn("rados: bad watch notify", "from", from.Name.String(), "err", err)
			return
		}
		if w := o.watches.get(m.Cookie); w != nil {
			w.deliver(m)
		}
		return
	}
	if msg.Type != wire.TypeOSDOpReply {
		o.log.Debug("rados: unexpected message", "from", from.Name.String(), "type", msg.Type)
		return
	}
	r, err := wire.DecodeOSDOpReply(msg.Payload)
	if err != nil {
		o.log.Warn("rados: bad reply", "from", from.Name.String(), "err", err)
		return
	}
	if !o.handleReply(from, &r, msg) {
		o.ms.Release(msg)
	}
}

// HandleEvent implements msgr.Dispatcher: a failed (or reset) session to
// an OSD strands the ops sent on it, which go out again after a backoff.
func (o *objecter) HandleEvent(ev msgr.Event) {
	if ev.Kind != msgr.EventFailed && ev.Kind != msgr.EventReset {
		return
	}
	id, ok := osdID(ev.Peer)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		if os := o.osds[id]; os != nil {
			os.lost++
			close(o.watchKick)
			o.watchKick = make(chan struct{})
		}
		o.failSessionLocked(id, ev.Session)
	}
}

// handleReply applies an OSD's reply, decoded from msg, and reports
// whether the op kept slices of it (otherwise its payload may be reused).
func (o *objecter) handleReply(from msgr.Peer, r *wire.OSDOpReply, msg msgr.Message) (kept bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.ops[r.Tid]
	if p == nil || p.session == nil || p.session != from.Session {
		return false // done, cancelled, or answered on a session it was since moved from
	}
	if r.Attempt != p.msg.Attempt {
		// The answer to an earlier send, which its resend superseded on
		// this same session: the resend is answered too. An ESTALE
		// taken from here would name an epoch the op has already been
		// sent with, and the op would wait for a map that may not come.
		o.log.Debug("rados: answer to an earlier attempt ignored", "tid", p.tid, "attempt", r.Attempt, "latest", p.msg.Attempt)
		return false
	}
	if os := o.osds[p.sentTo]; os != nil && os.s == from.Session {
		os.failures = 0
	}
	switch {
	case (r.Result == -wire.ENOTCURRENT || r.Result == -wire.ESTALE) && p.balanced && p.sentTo != p.t.osd:
		// The replica is not current for this read (replread.go), or
		// does not hold the PG yet: the primary answers it (and says
		// ESTALE itself if the client's map is behind).
		p.atPrimary = true
		o.sendLocked(p)
	case r.Result == -wire.ESTALE:
		// The OSD's map is newer than ours or the PG has moved: wait for
		// its epoch (or, if it claims one we sent with, for the next),
		// then retarget.
		want := r.Epoch
		if want <= p.msg.Epoch {
			want = p.msg.Epoch + 1
		}
		p.waitEpoch = max(p.waitEpoch, want)
		o.sendLocked(p)
	case r.Result != 0:
		o.reads.sawLocked(p.t.pg, r.Version)
		err := explainNoSpace(replyError(p.name, p.msg.Ops, r), o.m, p.t.pg.Pool, p.t.osd)
		err = explainBlocklisted(err, o.ms.Nonce(), r.Epoch)
		o.finishLocked(p, r.Version.Counter, err, nil)
	case r.Flags&wire.ReplyCommitted != 0:
		o.reads.sawLocked(p.t.pg, r.Version)
		var fill func()
		switch {
		case p.onReply != nil && p.takeReply != nil:
			fill = func() {
				p.onReply(r)
				p.takeReply(func() { o.ms.Release(msg) })
			}
			kept = true
		case p.onReply != nil:
			fill = func() { p.onReply(r) }
			kept = !p.copiesReply
		}
		o.finishLocked(p, r.Version.Counter, nil, fill)
	case r.Flags&wire.ReplyApplied != 0:
		o.reads.sawLocked(p.t.pg, r.Version)
		p.comp.markApplied(r.Version.Counter)
	}
	return kept
}

// failSessionLocked strands the ops in flight on session s to OSD id and
// schedules their resend.
func (o *objecter) failSessionLocked(id int32, s *msgr.Session) {
	os := o.osds[id]
	if os == nil {
		return
	}
	stranded := false
	for _, p := range o.ops {
		if p.session == s {
			p.session = nil
			stranded = true
			if p.sentTo != p.t.osd {
				p.atPrimary = true // a replica's session failed: ask the primary
			}
		}
	}
	if os.s == s {
		os.s = nil
		os.failures++
	} else if !stranded {
		return // an old session with nothing on it
	}
	if os.retry != nil {
		return
	}
	delay := time.Duration(0)
	if os.failures > 1 {
		delay = sessionBackoff(os.failures - 2)
	}
	os.retry = o.clk.AfterFunc(delay, func() { o.resendStranded(id) })
}

// resendStranded sends again, in tid order, the ops bound for OSD id
// that are not in flight.
func (o *objecter) resendStranded(id int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if os := o.osds[id]; os != nil {
		os.retry = nil
	}
	if o.closed {
		return
	}
	for _, p := range o.sortedOpsLocked() {
		if p.session == nil && (p.t.osd == id || p.sentTo == id) {
			o.sendLocked(p)
		}
	}
}

// handleMap applies an update from the monitors and, if the map moved
// on, retargets the ops in flight.
func (o *objecter) handleMap(u wire.OSDMapUpdate) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	m, err := nextMap(o.m, u)
	if err != nil {
		o.log.Warn("rados: osd map update", "err", err)
	}
	if m == nil {
		o.requestMap(0) // nothing to build on: ask for a full map
		return
	}
	if m != o.m {
		o.m = m
		close(o.mapCh)
		o.mapCh = make(chan struct{})
		o.scanLocked()
	}
	if u.Newest > uint64(m.Epoch()) || err != nil {
		o.requestMap(uint64(m.Epoch()) + 1)
	}
}

// nextMap returns the newest map an update makes of cur: its full map if
// newer, then its incrementals that follow. It stops at the first
// incremental that does not apply (a gap) and returns what it has, with
// the error.
func nextMap(cur *osdmap.Map, u wire.OSDMapUpdate) (*osdmap.Map, error) {
	m := cur
	if len(u.Full) > 0 && (m == nil || u.FullEpoch > uint64(m.Epoch())) {
		full, err := osdmap.UnmarshalMap(u.Full)
		if err != nil {
			return m, fmt.Errorf("full map %d: %w", u.FullEpoch, err)
		}
		m = full
	}
	for _, b := range u.Incs {
		inc, err := osdmap.UnmarshalIncremental(b)
		if err != nil {
			return m, err
		}
		if m == nil {
			return nil, fmt.Errorf("incremental %d without a map", inc.Epoch)
		}
		if inc.Epoch <= m.Epoch() {
			continue
		}
		next, err := m.Apply(inc)
		if err != nil {
			return m, err
		}
		m = next
	}
	return m, nil
}

// scanLocked retargets every op in flight under a new map, in tid order:
// those whose primary moved go to the new one, and those that waited (for
// the map, or for a primary) go out if they now can.
func (o *objecter) scanLocked() {
	for _, p := range o.sortedOpsLocked() {
		if p.session == nil {
			o.sendLocked(p)
			continue
		}
		t := o.targets.get(o.m, &o.scratch, p.msg.Object, p.msg.PG, p.fixedPG)
		// A balanced read at a replica that left the acting set (down,
		// or moved) is sent again too.
		if needsResend(p.t, t) || p.sentTo != p.t.osd && !slices.Contains(t.acting, p.sentTo) {
			o.sendLocked(p)
		}
	}
}

// waitMap waits until the map satisfies cond.
func (o *objecter) waitMap(ctx context.Context, cond func(*osdmap.Map) bool) error {
	for {
		o.mu.Lock()
		m, ch, closed := o.m, o.mapCh, o.closed
		o.mu.Unlock()
		if closed {
			return ErrClosed
		}
		if m != nil && cond(m) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctxError(ctx)
		}
	}
}

// currentMap returns the newest map.
func (o *objecter) currentMap() *osdmap.Map {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m
}

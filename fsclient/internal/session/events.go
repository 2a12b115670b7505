package session

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// MapChanged takes the MDS map's holder of the session's rank at now.
// Another daemon (a failover or a restart) or none means the session
// must be re-established: with a session open before, the client
// reconnects when the new daemon is in reconnect (SendReconnect, then
// its unsafe requests replayed) and resends the requests without a
// reply once it is active; if the daemon is past reconnect when the
// client hears of it, the client missed the window: its caps are lost
// and it opens a new session. Without a session before, the client
// opens one once the daemon is active. Requests wait meanwhile.
func (s *Session) MapChanged(h Holder, now time.Time) {
	if s.state == Closed || s.state == Closing {
		return
	}
	if h.State == HolderNone {
		h = Holder{}
	}
	if h.GID != s.holder.GID {
		// Another incarnation, or none: nothing in flight reached it.
		for _, r := range s.reqs {
			r.sent = false
		}
		if s.state != Idle {
			s.mustReconnect = s.opened
			s.state = Idle
		}
	}
	prev := s.holder.State
	s.holder = h
	if h.GID == 0 {
		return
	}
	switch {
	case s.mustReconnect && s.state == Idle && h.State == HolderReconnect:
		s.reconnect(now)
	case s.mustReconnect && s.state == Idle && h.State >= HolderRejoin:
		// The reconnect window passed without this client.
		s.mustReconnect, s.opened = false, false
		s.emit(Action{Kind: CapsLost})
		if h.State >= HolderActive {
			s.open(now)
		}
	case s.state == Reconnecting && h.State >= HolderActive && prev < HolderActive:
		s.mustReconnect = false
		s.state = Open
		s.capsUntil = now.Add(s.timeout)
		s.resendUnanswered()
	case !s.mustReconnect && s.state == Idle && h.State >= HolderActive:
		s.open(now)
	}
}

// open connects to the holder and asks for a session.
func (s *Session) open(now time.Time) {
	s.state = Opening
	s.emit(Action{Kind: Connect, Name: s.holder.Name, Addr: s.holder.Addr, GID: s.holder.GID})
	s.emit(Action{Kind: SendSession, Session: s.openMsg()})
}

// openMsg is the session open: the MDS takes it on every messenger
// session (a first open, a new connection, a reconnect).
func (s *Session) openMsg() *wire.ClientSession {
	return &wire.ClientSession{Op: wire.SessionRequestOpen, Client: s.cfg.Client, ClientID: s.cfg.ClientID,
		Hostname: s.cfg.Hostname, Root: s.cfg.Root, Version: s.cfg.Version, Features: s.cfg.Features, Instance: s.cfg.Instance}
}

// reconnect reports the caps to a new holder in reconnect and replays
// the requests that had an unsafe reply.
func (s *Session) reconnect(now time.Time) {
	s.state = Reconnecting
	s.emit(Action{Kind: Connect, Name: s.holder.Name, Addr: s.holder.Addr, GID: s.holder.GID})
	s.emit(Action{Kind: SendSession, Session: s.openMsg()})
	s.emit(Action{Kind: SendReconnect})
	s.replayUnsafe()
}

// replayUnsafe sends again, marked as replays, the requests with an
// unsafe reply not yet sent to the current holder.
func (s *Session) replayUnsafe() {
	for _, tid := range s.sortedTids(func(r *request) bool { return r.unsafe && !r.sent }) {
		s.send(tid, wire.RequestReplay)
	}
}

// resendUnanswered sends, in tid order, every request not sent to the
// current holder (replayed unsafe ones were).
func (s *Session) resendUnanswered() {
	for _, tid := range s.sortedTids(func(r *request) bool { return !r.sent && !r.unsafe }) {
		s.send(tid, 0)
	}
}

// SessionMsg takes a session message from the holder at now.
func (s *Session) SessionMsg(m wire.ClientSession, now time.Time) {
	switch m.Op {
	case wire.SessionOpen:
		if s.state != Opening && s.state != Reconnecting {
			return
		}
		s.timeout = time.Duration(m.TimeoutSec) * time.Second
		s.capsUntil = now.Add(s.timeout)
		s.renewSent = now
		if s.state == Reconnecting {
			return // the rank's activation resends the rest
		}
		s.state = Open
		s.opened = true
		if s.holder.State >= HolderActive {
			s.replayUnsafe()
			s.resendUnanswered()
		}
	case wire.SessionRenew:
		sent, ok := s.renewTime[m.Seq]
		if !ok {
			return
		}
		for seq := range s.renewTime {
			if seq <= m.Seq {
				delete(s.renewTime, seq)
			}
		}
		if until := sent.Add(s.timeout); until.After(s.capsUntil) {
			s.capsUntil = until
		}
		if s.state == Stale {
			s.state = Open
			s.emit(Action{Kind: CapsRenewed})
		}
	case wire.SessionStale:
		if s.state == Open {
			s.state = Stale
			s.emit(Action{Kind: CapsStale})
			s.renew(now)
		}
	case wire.SessionClose:
		if s.state == Reconnecting {
			// The new rank did not expect this client (its reconnect
			// was refused): the caps are lost; a new session follows.
			s.mustReconnect, s.opened = false, false
			s.emit(Action{Kind: CapsLost})
			for _, r := range s.reqs {
				r.sent = false
			}
			s.state = Opening
			s.emit(Action{Kind: SendSession, Session: s.openMsg()})
			return
		}
		if s.state == Closing {
			s.end(ErrClosed)
			return
		}
		s.end(fmt.Errorf("%w by the MDS: %s", ErrClosed, m.Reason))
	case wire.SessionReject:
		s.end(fmt.Errorf("%w: %s", ErrRejected, m.Reason))
	case wire.SessionFlushMsg:
		s.emit(Action{Kind: SendSession, Session: &wire.ClientSession{Op: wire.SessionFlushMsgAck, Seq: m.Seq}})
	case wire.SessionRecallState:
		s.emit(Action{Kind: RecallCaps, MaxCaps: m.MaxCaps})
	case wire.SessionRequestFlush:
		s.emit(Action{Kind: FlushCaps})
	}
}

// end closes the session for good: every request fails with err.
func (s *Session) end(err error) {
	if s.state == Closed {
		return
	}
	s.state = Closed
	for _, tid := range s.sortedTids(func(*request) bool { return true }) {
		s.fail(tid, err)
	}
	s.emit(Action{Kind: CapsLost})
	s.emit(Action{Kind: SessionEnded, Err: err})
}

// renew sends a renewal.
func (s *Session) renew(now time.Time) {
	s.renewSeq++
	s.renewSent = now
	s.renewTime[s.renewSeq] = now
	s.emit(Action{Kind: SendSession, Session: &wire.ClientSession{Op: wire.SessionRequestRenew, Seq: s.renewSeq}})
}

// Tick advances time: an open session is renewed every third of its
// timeout.
func (s *Session) Tick(now time.Time) {
	if (s.state == Open || s.state == Stale) && s.timeout > 0 && now.Sub(s.renewSent) >= s.timeout/3 {
		s.renew(now)
	}
}

// ConnectionLost reports that the messenger session to the holder
// failed (client sessions are lossy: what was in flight may be lost).
// The client connects again and opens its session on the new
// connection (the MDS re-binds it; caps are kept), then replays the
// requests it had an unsafe reply for (whose safe reply may have been
// lost; the MDS answers a replay of an applied request from its journal)
// and resends those without a reply, with their tids. If the holder has
// changed, the map says so (MapChanged) and the reconnect path runs
// instead.
func (s *Session) ConnectionLost(now time.Time) {
	if s.holder.GID == 0 || s.state == Closed || s.state == Idle {
		return
	}
	for _, r := range s.reqs {
		r.sent = false
	}
	switch s.state {
	case Reconnecting:
		s.reconnect(now)
	case Closing:
		s.emit(Action{Kind: Connect, Name: s.holder.Name, Addr: s.holder.Addr, GID: s.holder.GID})
		s.emit(Action{Kind: SendSession, Session: &wire.ClientSession{Op: wire.SessionRequestClose, Seq: s.renewSeq}})
	default:
		s.open(now)
	}
}

// Close asks the MDS to close the session (unmount). Requests still
// pending fail once it is closed.
func (s *Session) Close() {
	switch s.state {
	case Closed, Closing:
		return
	case Idle:
		s.end(ErrClosed)
		return
	}
	s.state = Closing
	s.emit(Action{Kind: SendSession, Session: &wire.ClientSession{Op: wire.SessionRequestClose, Seq: s.renewSeq}})
}

package server

import (
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// Why sessions end, in the engine's terms.
const (
	endClosed  = locker.EndClosed
	endTimeout = locker.EndTimeout
	endEvicted = locker.EndEvicted
)

// Errnos the server answers requests with itself (negated in replies).
const (
	errnoPERM     = 1
	errnoAGAIN    = 11
	errnoINVAL    = 22
	errnoNOSPC    = 28
	errnoNOTCONN  = 107
	errnoSHUTDOWN = 108
)

// Dispatch implements msgr.Dispatcher: the file-system client protocol.
// A client opens a session (wire.SessionRequestOpen) on every messenger
// session before anything else; after a takeover it opens it again and
// sends its wire.ClientReconnect on it.
func (s *Server) Dispatch(from msgr.Peer, msg msgr.Message) {
	var err error
	switch msg.Type {
	case wire.TypeClientSession:
		var m wire.ClientSession
		if m, err = wire.DecodeClientSession(msg.Payload); err == nil {
			s.handleSession(from, m)
		}
	case wire.TypeClientRequest:
		var m *wire.ClientRequest
		if m, err = wire.DecodeClientRequest(msg.Payload); err == nil {
			s.handleRequest(from.Session, m)
		}
	case wire.TypeClientCaps:
		var m *wire.ClientCaps
		if m, err = wire.DecodeClientCaps(msg.Payload); err == nil {
			s.handleCaps(from.Session, m)
		}
	case wire.TypeClientReconnect:
		var m *wire.ClientReconnect
		if m, err = wire.DecodeClientReconnect(msg.Payload); err == nil {
			s.handleReconnect(from.Session, m)
		}
	case wire.TypeClientLease:
		var m wire.ClientLease
		if m, err = wire.DecodeClientLease(msg.Payload); err == nil {
			s.handleLease(from.Session, m)
		}
	default:
		err = fmt.Errorf("unexpected message type %d", msg.Type)
	}
	if err != nil {
		s.mu.Lock()
		s.metrics.badMessages++
		s.mu.Unlock()
		s.log.Warn("dropping a bad message", "peer", from.Name.String(), "type", msg.Type, "err", err)
	}
}

// HandleEvent implements msgr.Dispatcher: a client's messenger session
// that failed is unbound from its MDS session, which lives on until it
// times out or the client opens it again on a new messenger session.
func (s *Server) HandleEvent(ev msgr.Event) {
	if ev.Kind != msgr.EventFailed && ev.Kind != msgr.EventReset {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.byConn[ev.Session]; ok {
		delete(s.byConn, ev.Session)
		if s.conns[c] == ev.Session {
			delete(s.conns, c)
		}
	}
}

// bindLocked makes conn client's messenger session.
func (s *Server) bindLocked(c ClientID, conn *msgr.Session) {
	if old := s.conns[c]; old != nil && old != conn {
		delete(s.byConn, old)
	}
	s.conns[c] = conn
	s.byConn[conn] = c
}

// unbindLocked removes client's session and its binding.
func (s *Server) unbindLocked(c ClientID) {
	s.sessions.Close(c)
	s.ops.dropClient(c)
	if conn := s.conns[c]; conn != nil {
		delete(s.byConn, conn)
	}
	delete(s.conns, c)
}

// clientOf is the client whose session conn carries.
func (s *Server) clientOf(conn *msgr.Session) (ClientID, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.byConn[conn]
	return c, ok
}

// holdLocked keeps f until the rank is active; false when too many are
// held already.
func (s *Server) holdLocked(f func()) bool {
	if len(s.pending) >= maxPending {
		return false
	}
	s.pending = append(s.pending, f)
	return true
}

// handleSession handles a session message.
func (s *Server) handleSession(from msgr.Peer, m wire.ClientSession) {
	switch m.Op {
	case wire.SessionRequestOpen:
		s.openSession(from, m)
	case wire.SessionRequestRenew:
		c, ok := s.clientOf(from.Session)
		if !ok {
			sendSession(from.Session, wire.ClientSession{Op: wire.SessionClose, Seq: m.Seq, Reason: "no session: open one"})
			return
		}
		s.mu.Lock()
		ok, _ = s.sessions.Renew(c, s.cfg.Clock.Now())
		s.mu.Unlock()
		if ok {
			sendSession(from.Session, wire.ClientSession{Op: wire.SessionRenew, Seq: m.Seq})
		}
	case wire.SessionRequestClose:
		s.closeSession(from.Session, m)
	case wire.SessionFlushMsgAck:
	default:
		s.log.Warn("unexpected session op from a client", "peer", from.Name.String(), "op", m.Op)
	}
}

// openSession opens (or, on a new messenger session, re-binds) a
// client's session: refused for a fenced client or a root its key may
// not reach, held until the rank is active (or, in reconnect, taken from
// the clients the previous holder had), recorded in the session map,
// then answered.
func (s *Server) openSession(from msgr.Peer, m wire.ClientSession) {
	c := ClientID(m.ClientID)
	reject := func(why string) {
		s.mu.Lock()
		s.metrics.rejected++
		s.mu.Unlock()
		s.log.Info("session refused", "client", c, "peer", from.Name.String(), "why", why)
		sendSession(from.Session, wire.ClientSession{Op: wire.SessionReject, Reason: why})
	}
	if c == 0 {
		reject("no client id: the client must send its global id (EINVAL)")
		return
	}
	if err := checkRoot(from.Caps, m.Root); err != nil {
		reject(err.Error())
		return
	}
	if err := checkInstance(from.Name.String(), m.Instance); err != nil {
		reject(err.Error())
		return
	}
	s.mu.Lock()
	if s.fenced[c] {
		s.mu.Unlock()
		reject(fmt.Sprintf("client %d is blocklisted: it was evicted; remount with a new client (EPERM)", c))
		return
	}
	reconnecting := false
	switch {
	case s.phase == phaseStopping:
		s.mu.Unlock()
		return // the next holder answers
	case s.phase == phaseReconnect && s.recon != nil && s.recon.Expected(c):
		// A client of the previous holder comes back: its session goes
		// on (it is in the session map), and its report follows on this
		// messenger session; the engine hears of it with the report.
		reconnecting = true
	case s.phase != phaseActive:
		if !s.holdLocked(func() { s.openSession(from, m) }) {
			s.mu.Unlock()
			reject("the rank is not active yet and holds too many waiting clients; retry (EAGAIN)")
		} else {
			s.mu.Unlock()
		}
		return
	}
	now := s.cfg.Clock.Now()
	isNew := s.sessions.Open(c, from.Name.String(), m.Root, now)
	s.bindLocked(c, from.Session)
	if m.Instance != "" {
		s.instances[c] = m.Instance
	}
	if isNew {
		s.metrics.opened++
	}
	eng, store, rank, timeout := s.engine, s.store, s.rank, s.sessions.Timeout()
	s.mu.Unlock()
	if isNew && !reconnecting {
		if err := store.Save(s.runCtx, int(rank), sessionRecord{Client: c, Name: from.Name.String(), Root: m.Root, Instance: m.Instance}); err != nil {
			s.log.Warn("cannot record a session; refusing it", "client", c, "err", err)
			s.mu.Lock()
			s.unbindLocked(c)
			s.mu.Unlock()
			sendSession(from.Session, wire.ClientSession{Op: wire.SessionReject, Reason: "the MDS cannot record the session: " + err.Error() + "; retry (EAGAIN)"})
			return
		}
		eng.SessionOpened(c)
		s.log.Debug("session opened", "client", c, "peer", from.Name.String(), "root", m.Root)
	}
	sendSession(from.Session, wire.ClientSession{Op: wire.SessionOpen, TimeoutSec: uint32(timeout.Seconds())})
}

// checkRoot refuses a mount root the client key's mds caps do not reach
// (with auth none there are no caps, and every root is allowed).
func checkRoot(caps auth.Caps, root string) error {
	if caps == nil {
		return nil
	}
	if root == "" {
		root = "/"
	}
	g, err := auth.ParseCaps("mds", caps["mds"])
	if err != nil {
		return fmt.Errorf("the client key's mds caps do not parse (%v): fix them with cuttle auth caps (EACCES)", err)
	}
	if !g.Allows(auth.Request{Service: "mds", Access: auth.AccessRead, Path: root}) {
		return fmt.Errorf("the client key's mds caps do not allow mounting %s (EACCES)", root)
	}
	return nil
}

// closeSession ends a client's session at its request.
func (s *Server) closeSession(conn *msgr.Session, m wire.ClientSession) {
	c, ok := s.clientOf(conn)
	if !ok {
		sendSession(conn, wire.ClientSession{Op: wire.SessionClose, Seq: m.Seq})
		return
	}
	s.mu.Lock()
	s.unbindLocked(c)
	s.metrics.closed++
	eng := s.engine
	s.mu.Unlock()
	if eng != nil {
		eng.SessionEnded(c, endClosed)
	}
	s.forget(s.runCtx, c)
	sendSession(conn, wire.ClientSession{Op: wire.SessionClose, Seq: m.Seq})
}

// ownerOf is the rank that owns req's path: with one active rank, this
// one. (Several ranks will look the path up in the subtree map; a
// request for another rank is answered with a ClientRequestForward.)
func (s *Server) ownerOf(req *wire.ClientRequest) mdsmap.Rank {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rank
}

// handleRequest hands a metadata request to the engine, on a goroutine
// of its own; held until the rank is active.
func (s *Server) handleRequest(conn *msgr.Session, req *wire.ClientRequest) {
	c, ok := s.clientOf(conn)
	if !ok {
		sendReply(conn, &wire.ClientReply{Tid: req.Tid, Op: req.Op, Result: -errnoNOTCONN, Safe: true})
		return
	}
	s.mu.Lock()
	switch s.phase {
	case phaseActive:
	case phaseStopping:
		s.mu.Unlock()
		return // the client resends to the next holder
	default:
		if !s.holdLocked(func() { s.handleRequest(conn, req) }) {
			s.mu.Unlock()
			sendReply(conn, &wire.ClientReply{Tid: req.Tid, Op: req.Op, Result: -errnoAGAIN, Safe: true})
			return
		}
		s.mu.Unlock()
		return
	}
	eng, ctx, pools := s.engine, s.runCtx, s.pools
	s.metrics.requests++
	s.inflight.Add(1)
	s.mu.Unlock()
	if takesSpace(req) {
		if pool, full := s.cfg.cluster.Full(pools); full {
			s.inflight.Done()
			s.log.Debug("refusing a space-taking request: a pool of the file system is full", "op", req.Op, "pool", pool)
			sendReply(conn, &wire.ClientReply{Tid: req.Tid, Op: req.Op, Result: -errnoNOSPC, Safe: true})
			return
		}
	}
	if owner := s.ownerOf(req); owner != s.rankNow() {
		defer s.inflight.Done()
		sendForward(conn, wire.ClientRequestForward{Tid: req.Tid, Dest: int32(owner), NumFwd: req.NumFwd + 1, MustResend: true})
		return
	}
	s.mu.Lock()
	s.ops.start(c, req.Tid, s.cfg.Clock.Now())
	s.mu.Unlock()
	go func() {
		defer s.inflight.Done()
		eng.Handle(ctx, c, req, func(r *wire.ClientReply) {
			if r.Safe {
				s.mu.Lock()
				s.ops.done(c, r.Tid)
				s.mu.Unlock()
			}
			s.replyTo(c, conn, r)
		})
	}()
}

func (s *Server) rankNow() mdsmap.Rank {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rank
}

// replyTo sends a reply to client c: on the messenger session the
// request came on, or the one the client is bound to now.
func (s *Server) replyTo(c ClientID, conn *msgr.Session, r *wire.ClientReply) {
	s.mu.Lock()
	if cur := s.conns[c]; cur != nil {
		conn = cur
	}
	s.mu.Unlock()
	sendReply(conn, r)
}

// handleCaps hands a cap message to the engine, in order with the
// client's other cap messages.
func (s *Server) handleCaps(conn *msgr.Session, m *wire.ClientCaps) {
	c, ok := s.clientOf(conn)
	if !ok {
		return
	}
	s.mu.Lock()
	if s.phase != phaseActive {
		if !s.holdLocked(func() { s.handleCaps(conn, m) }) {
			s.log.Warn("dropping a cap message while the rank is not active", "client", c)
		}
		s.mu.Unlock()
		return
	}
	eng, ctx := s.engine, s.runCtx
	s.mu.Unlock()
	eng.HandleCaps(ctx, c, m)
}

// handleLease hands a client's lease ack or release to an engine that
// grants leases (LeaseEngine); while the rank is not active it is
// dropped: the engine that takes the rank starts without leases.
func (s *Server) handleLease(conn *msgr.Session, m wire.ClientLease) {
	c, ok := s.clientOf(conn)
	if !ok {
		return
	}
	s.mu.Lock()
	eng, ctx, active := s.engine, s.runCtx, s.phase == phaseActive
	s.mu.Unlock()
	if le, ok := eng.(LeaseEngine); ok && active {
		le.HandleLease(ctx, c, m)
	}
}

// handleReconnect takes a client's report in the reconnect phase.
func (s *Server) handleReconnect(conn *msgr.Session, m *wire.ClientReconnect) {
	c, ok := s.clientOf(conn)
	s.mu.Lock()
	if !ok || s.phase != phaseReconnect || s.recon == nil || !s.recon.Expected(c) {
		s.mu.Unlock()
		s.log.Info("ignoring a reconnect outside the reconnect phase or from an unknown client", "client", c)
		sendSession(conn, wire.ClientSession{Op: wire.SessionClose, Reason: "reconnect refused: the rank is not in reconnect or the client had no session; open a new session"})
		return
	}
	eng := s.engine
	s.mu.Unlock()
	if err := eng.Reconnect(c, m); err != nil {
		s.log.Warn("reconnect report refused by the engine", "client", c, "err", err)
	}
	if !m.More {
		s.mu.Lock()
		s.recon.Reported(c)
		s.metrics.reconnected++
		s.mu.Unlock()
		eng.SessionOpened(c)
		select {
		case s.reconCh <- struct{}{}:
		default:
		}
	}
}

// SendCaps implements Outbox.
func (s *Server) SendCaps(c ClientID, m *wire.ClientCaps) {
	s.sendTo(c, msgr.Message{Type: wire.TypeClientCaps, Version: 1, Payload: m.Encode()})
}

// SendLease implements Outbox.
func (s *Server) SendLease(c ClientID, m wire.ClientLease) {
	s.sendTo(c, msgr.Message{Type: wire.TypeClientLease, Version: 1, Payload: m.Encode()})
}

func (s *Server) sendTo(c ClientID, msg msgr.Message) {
	s.mu.Lock()
	conn := s.conns[c]
	s.mu.Unlock()
	if conn == nil {
		s.log.Debug("dropping a message for a client without a session", "client", c, "type", msg.Type)
		return
	}
	trySend(conn, msg)
}

// Fence implements Outbox: client c is blocklisted (in the background)
// and its session ended.
func (s *Server) Fence(c ClientID, reason string) {
	s.mu.Lock()
	if s.fenced[c] {
		s.mu.Unlock()
		return
	}
	s.fenced[c] = true
	s.metrics.fenced++
	conn := s.conns[c]
	instance := s.instances[c]
	_, had := s.sessions.Get(c)
	s.unbindLocked(c)
	eng, ctx := s.engine, s.runCtx
	s.inflight.Add(1)
	s.mu.Unlock()
	s.log.Warn("fencing a client", "client", c, "reason", reason)
	if conn != nil {
		sendSession(conn, wire.ClientSession{Op: wire.SessionClose, Reason: "evicted: " + reason})
	}
	// The engine may be asking from inside its own calls: it is called
	// back on another goroutine.
	go func() {
		defer s.inflight.Done()
		if had && eng != nil {
			eng.SessionEnded(c, endEvicted)
		}
		if instance == "" {
			s.log.Warn("an older client told no RADOS instance: it loses its session but the OSDs cannot refuse its writes", "client", c)
		}
		if err := s.cfg.cluster.Fence(ctx, ClientFenceAddr(c, instance), ClientFenceExpire); err != nil {
			if ctx.Err() == nil {
				s.log.Error("cannot blocklist a client; its caps keep blocking others", "client", c, "err", err)
			}
		} else if eng != nil {
			eng.Fenced(c)
		}
		s.forget(ctx, c)
	}()
}

func sendSession(conn *msgr.Session, m wire.ClientSession) {
	trySend(conn, msgr.Message{Type: wire.TypeClientSession, Version: 1, Payload: m.Encode()})
}

func sendReply(conn *msgr.Session, r *wire.ClientReply) {
	trySend(conn, msgr.Message{Type: wire.TypeClientReply, Version: 1, Payload: r.Encode()})
}

func sendForward(conn *msgr.Session, f wire.ClientRequestForward) {
	trySend(conn, msgr.Message{Type: wire.TypeClientRequestForward, Version: 1, Payload: f.Encode()})
}

// trySend queues msg without blocking; a full or closed session drops
// it (the client resends, or its session times out).
func trySend(conn *msgr.Session, msg msgr.Message) bool {
	if conn == nil {
		return false
	}
	ok, err := conn.TrySend(msg)
	return ok && err == nil
}

// checkInstance checks the RADOS instance a client names at session
// open: its own entity's ("ENTITY/HEX"), or none (an older client). The
// MDS blocklists it on eviction, so a client must not name someone
// else's address or host.
func checkInstance(entity, instance string) error {
	if instance == "" {
		return nil
	}
	inc, ok := strings.CutPrefix(instance, entity+"/")
	if !ok || inc == "" || len(inc) > 16 || strings.Trim(inc, "0123456789abcdef") != "" {
		return fmt.Errorf("session instance %q is not %s/INCARNATION (hex): a client names its own RADOS instance (EINVAL)", instance, entity)
	}
	return nil
}

// takesSpace reports whether req is a metadata update a full file system
// refuses (ENOSPC, as Ceph's MDS): every update but deletes, truncates
// and locks, so that a user can still free space.
func takesSpace(req *wire.ClientRequest) bool {
	switch req.Op {
	case wire.MetaUnlink, wire.MetaRmdir, wire.MetaSetFileLock:
		return false
	case wire.MetaSetattr:
		const truncate = wire.AttrSize | wire.AttrMtime | wire.AttrCtime | wire.AttrMtimeNow | wire.AttrKillSguid
		return req.Mask&wire.AttrSize == 0 || req.Mask&^truncate != 0
	}
	return req.Op.IsWrite()
}

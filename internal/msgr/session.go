package msgr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/cuttlestore/cuttle/internal/auth"
)

// Session is the ordered message stream between this entity and one peer,
// over a succession of connections. The side that opened it (Connect)
// reconnects it; the accepting side waits for the peer to come back.
// A Session is safe for concurrent use.
type Session struct {
	m        *Messenger
	peer     auth.EntityName
	policy   Policy
	outgoing bool
	log      *slog.Logger
	send     *throttle       // per-session in-flight budget
	ctx      context.Context // cancelled by close, with the reason
	cancel   context.CancelCauseFunc
	done     <-chan struct{} // ctx.Done()
	dqWake   chan struct{}   // wakes dispatchLoop

	mu         sync.Mutex
	addr       string // where to dial; "" on the accepting side
	id         uint64 // chosen by the connecting side
	connectSeq uint64 // connections completed so far
	peerNonce  uint64 // the peer's incarnation, 0 until known (accepted: set at creation)
	caps       auth.Caps
	peerAddr   string   // accepted: the peer's instance address (PeerAddr)
	outSeq     uint64   // last sequence number assigned
	inSeq      uint64   // last sequence number received
	ackSent    uint64   // last inSeq the peer was told
	inUnacked  int64    // payload bytes received since ackSent
	out        []outMsg // not yet acknowledged, in sequence order
	sent       int      // out[:sent] were written on cur
	cur        *conn    // the connection, nil between connections
	closed     bool     // set once, by close
	closeErr   error    // why
	dq         []dqItem // received, waiting for dispatchLoop
	dqDone     bool     // no more dq items will come
	dqScratch  []dqItem // dispatchLoop's spare slice
}

type outMsg struct {
	seq uint64
	crc uint32 // of the payload on the wire, computed by Send
	msg Message
}

// dqItem is a message or an event waiting for the Dispatcher.
type dqItem struct {
	msg Message
	ev  *Event
}

func (m *Messenger) newSession(peer auth.EntityName, addr string, id uint64) *Session {
	ctx, cancel := context.WithCancelCause(m.ctx)
	s := &Session{
		ctx:      ctx,
		cancel:   cancel,
		done:     ctx.Done(),
		m:        m,
		peer:     peer,
		policy:   m.cfg.Policy(peer),
		outgoing: addr != "",
		send:     newThrottle(m.cfg.SendBytes, m.cfg.SendMessages),
		dqWake:   make(chan struct{}, 1),
		addr:     addr,
		id:       id,
	}
	s.log = m.log.With("peer", peer.String(), "session", id)
	return s
}

// Peer returns the entity at the other end.
func (s *Session) Peer() auth.EntityName { return s.peer }

// PeerAddr returns the peer's instance address, HOST:PORT/NONCE, as the
// blocklist spells it (osdmap's blocklist.go): on the accepting side the
// host its connection came from, the port it says it listens on (0 for a
// client, which does not) and its nonce; on the connecting side the
// address dialed and the nonce the peer sent ("" before it answered).
func (s *Session) PeerAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.outgoing {
		return s.peerAddr
	}
	if s.peerNonce == 0 {
		return ""
	}
	return s.addr + "/" + strconv.FormatUint(s.peerNonce, 10)
}

// Policy returns the session's policy.
func (s *Session) Policy() Policy { return s.policy }

// Done is closed when the session closes; Err then says why.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session closed, or nil while it is open.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeErr
}

// Send queues msg for the peer and returns; it blocks only while the
// session's in-flight budget (Config.SendBytes, SendMessages) is used up,
// until ctx is done. A nil error means queued, not delivered: a lossless
// session delivers it exactly once unless the peer restarts (EventReset);
// a lossy one may drop it on a fault (EventFailed).
func (s *Session) Send(ctx context.Context, msg Message) error {
	n, err := s.checkSize(msg)
	if err != nil {
		return err
	}
	crc := msg.checksum()
	if err := s.send.acquire(ctx, s.done, n); err != nil {
		if errors.Is(err, errStopped) {
			err = context.Cause(s.ctx)
		}
		return fmt.Errorf("msgr: send to %s: %w", s.peer, err)
	}
	return s.enqueue(msg, n, crc)
}

// TrySend queues msg as Send does if the in-flight budget has room for
// it now; otherwise it queues nothing and reports false. It never blocks,
// so code that must not wait (a store's completion callback) can answer
// at once and leave only a full session to a goroutine.
func (s *Session) TrySend(msg Message) (bool, error) {
	n, err := s.checkSize(msg)
	if err != nil {
		return false, err
	}
	if !s.send.tryAcquire(n) {
		return false, nil
	}
	return true, s.enqueue(msg, n, msg.checksum())
}

func (s *Session) checkSize(msg Message) (int, error) {
	n := msg.Len()
	if uint64(n) > uint64(s.m.cfg.MaxFrame) {
		return 0, fmt.Errorf("msgr: send to %s: %w: %d-byte payload, limit %d", s.peer, ErrFrameTooLarge, n, s.m.cfg.MaxFrame)
	}
	return n, nil
}

// enqueue appends msg, whose n bytes the budget holds, to the outgoing
// queue and wakes the writer.
func (s *Session) enqueue(msg Message, n int, crc uint32) error {
	s.mu.Lock()
	if s.closed {
		err := s.closeErr
		s.mu.Unlock()
		s.send.release(int64(n), 1)
		return fmt.Errorf("msgr: send to %s: %w", s.peer, err)
	}
	s.outSeq++
	s.out = append(s.out, outMsg{s.outSeq, crc, msg})
	c := s.cur
	s.mu.Unlock()
	if c != nil {
		c.kick()
	}
	return nil
}

// Close closes the session: its connection is dropped and its pending
// messages with it (EventFailed). A later Connect opens a new session.
func (s *Session) Close() {
	s.close(EventFailed, fmt.Errorf("%w: closed locally", ErrSessionClosed))
}

func (s *Session) setAddr(addr string) {
	if addr == "" {
		return
	}
	s.mu.Lock()
	s.addr = addr
	s.mu.Unlock()
}

func (s *Session) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// close ends the session once: it fails what is pending, queues the event
// for the Dispatcher and drops the connection.
func (s *Session) close(kind EventKind, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.closeErr = err
	dropped := s.dropOutLocked()
	c := s.cur
	s.cur = nil
	s.pushLocked(dqItem{ev: &Event{Kind: kind, Peer: s.peer, Session: s, Dropped: dropped, Err: err}})
	s.dqDone = true
	s.cancel(err)
	nonce := s.peerNonce // an outgoing session's dialer may still set it
	s.mu.Unlock()
	s.log.Info("msgr: session closed", "dropped", dropped, "err", err)
	if c != nil {
		c.fault(err)
	}
	s.m.forget(s, nonce)
}

// dropOutLocked discards every unacknowledged message and returns how many
// there were.
func (s *Session) dropOutLocked() int {
	n := len(s.out)
	var bytes int64
	for i := range s.out {
		bytes += int64(s.out[i].msg.Len())
		s.out[i].msg.done()
	}
	s.send.release(bytes, int64(n))
	clear(s.out)
	s.out = s.out[:0]
	s.sent = 0
	return n
}

// resetLocked starts the session over after the peer lost it: pending
// messages are dropped and sequence numbers restart.
func (s *Session) resetLocked(err error) {
	dropped := s.dropOutLocked()
	s.outSeq, s.inSeq, s.ackSent, s.inUnacked = 0, 0, 0, 0
	s.pushLocked(dqItem{ev: &Event{Kind: EventReset, Peer: s.peer, Session: s, Dropped: dropped, Err: err}})
	s.log.Warn("msgr: session reset", "dropped", dropped, "err", err)
}

// ackLocked drops the messages the peer acknowledged, up to ack.
func (s *Session) ackLocked(ack uint64) error {
	if ack > s.outSeq {
		return fmt.Errorf("%w: ack %d beyond last sent %d", ErrProtocol, ack, s.outSeq)
	}
	k := 0
	var bytes int64
	for k < len(s.out) && s.out[k].seq <= ack {
		bytes += int64(s.out[k].msg.Len())
		s.out[k].msg.done()
		k++
	}
	if k == 0 {
		return nil
	}
	s.send.release(bytes, int64(k))
	clear(s.out[:k])
	s.out = s.out[k:]
	s.sent = max(0, s.sent-k)
	return nil
}

// attachLocked makes c the session's connection, the peer having
// received up to peerIn; it returns the connection it replaces.
func (s *Session) attachLocked(c *conn, peerIn uint64) (*conn, error) {
	if s.closed {
		return nil, fmt.Errorf("msgr: attach to %s: %w", s.peer, s.closeErr)
	}
	if err := s.ackLocked(peerIn); err != nil {
		return nil, err
	}
	old := s.cur
	s.cur = c
	s.sent = 0
	s.connectSeq++
	s.pushLocked(dqItem{ev: &Event{Kind: EventConnected, Peer: s.peer, Session: s}})
	return old, nil
}

// connLost handles the end of connection c: a lossy session closes, a
// lossless one waits for the next connection.
func (s *Session) connLost(c *conn, err error) {
	s.mu.Lock()
	current := s.cur == c
	if current {
		s.cur = nil
	}
	s.mu.Unlock()
	if current && s.policy == Lossy {
		s.close(EventFailed, fmt.Errorf("%w: lossy connection lost: %w", ErrSessionClosed, err))
	}
}

// receive takes message frame f from c: duplicates (retransmissions of
// what already arrived) are dropped, the next in sequence is queued for
// dispatch, anything else is a protocol error.
func (s *Session) receive(c *conn, f *frame) error {
	n := int64(len(f.payload))
	if !s.m.dispatch.tryAcquire(int(n)) {
		// About to wait for the Dispatcher: acknowledge what arrived so
		// far first, so the peer's send budget is not held up with it.
		if s.policy == Lossless {
			c.ackSoon()
		}
		if err := s.m.dispatch.acquire(context.Background(), c.done, int(n)); err != nil {
			return c.errOr(err)
		}
	}
	s.mu.Lock()
	queued, err := s.receiveLocked(c, f)
	s.mu.Unlock()
	if !queued {
		s.m.dispatch.release(n, 1)
	}
	return err
}

func (s *Session) receiveLocked(c *conn, f *frame) (queued bool, err error) {
	if s.cur != c {
		return false, errReplaced
	}
	if err := s.ackLocked(f.ack); err != nil {
		return false, err
	}
	switch {
	case f.seq <= s.inSeq:
		return false, nil // a retransmission of what already arrived
	case f.seq != s.inSeq+1:
		return false, fmt.Errorf("%w: message seq %d after %d", ErrProtocol, f.seq, s.inSeq)
	}
	s.inSeq = f.seq
	s.inUnacked += int64(len(f.payload))
	s.pushLocked(dqItem{msg: Message{Type: f.typ, Version: f.version, Payload: f.payload, PieceCRCs: f.pieces}})
	return true, nil
}

// acked handles an explicit ack frame.
func (s *Session) acked(c *conn, ack uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != c {
		return errReplaced
	}
	return s.ackLocked(ack)
}

// unacked returns how many messages, and payload bytes, arrived since
// the peer was last told.
func (s *Session) unacked() (msgs uint64, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inSeq - s.ackSent, s.inUnacked
}

// takeBatch moves up to len(buf) unsent messages into buf for c's writer
// and says what to acknowledge: ack is the last sequence received, and
// needAck is set if a bare ack frame must tell the peer (forceAck, and
// something arrived since the last ack). Messages in the batch carry the
// ack anyway. ok is false once c is no longer the session's connection.
// A lossy session forgets the batch: it is never retransmitted, and the
// writer releases its send budget once it is written.
func (s *Session) takeBatch(c *conn, buf []outMsg, forceAck bool) (batch []outMsg, ack uint64, needAck, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != c {
		return nil, 0, false, false
	}
	n := copy(buf[:cap(buf)], s.out[s.sent:])
	if s.policy == Lossy {
		clear(s.out[:n])
		s.out = s.out[n:]
		return buf[:n], s.inSeq, false, true
	}
	s.sent += n
	needAck = forceAck && n == 0 && s.inSeq > s.ackSent
	if n > 0 || needAck {
		s.ackSent, s.inUnacked = s.inSeq, 0
	}
	return buf[:n], s.inSeq, needAck, true
}

// unsent returns how many queued messages are not yet written.
func (s *Session) unsent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.out) - s.sent
}

// pushLocked queues an item for dispatchLoop.
func (s *Session) pushLocked(it dqItem) {
	s.dq = append(s.dq, it)
	select {
	case s.dqWake <- struct{}{}:
	default:
	}
}

// dispatchLoop hands queued messages and events to the Dispatcher, in
// order, until the session is closed and drained or the messenger closes.
func (s *Session) dispatchLoop() {
	defer s.m.wg.Done()
	d := s.m.cfg.Dispatcher
	for {
		s.mu.Lock()
		if len(s.dq) == 0 {
			finished := s.dqDone
			s.mu.Unlock()
			if finished {
				return
			}
			select {
			case <-s.dqWake:
			case <-s.m.done:
				s.drainUndispatched()
				return
			}
			continue
		}
		// Swap in the spare slice, so pushes go on while we dispatch.
		items := s.dq
		s.dq, s.dqScratch = s.dqScratch[:0], nil
		peer := Peer{Name: s.peer, Caps: s.caps, Session: s}
		s.mu.Unlock()
		s.dispatchItems(d, peer, items)
		clear(items)
		s.mu.Lock()
		s.dqScratch = items[:0]
		s.mu.Unlock()
	}
}

// dispatchItems delivers items, stopping early if the messenger closes.
func (s *Session) dispatchItems(d Dispatcher, peer Peer, items []dqItem) {
	for i := range items {
		it := &items[i]
		if s.messengerClosed() {
			s.releaseItems(items[i:])
			return
		}
		if it.ev != nil {
			d.HandleEvent(*it.ev)
			continue
		}
		d.Dispatch(peer, it.msg)
		s.m.dispatch.release(int64(len(it.msg.Payload)), 1)
	}
}

func (s *Session) messengerClosed() bool {
	select {
	case <-s.m.done:
		return true
	default:
		return false
	}
}

// drainUndispatched drops what is queued once the messenger is closed.
func (s *Session) drainUndispatched() {
	s.mu.Lock()
	items := s.dq
	s.dq = nil
	s.mu.Unlock()
	s.releaseItems(items)
}

func (s *Session) releaseItems(items []dqItem) {
	for i := range items {
		if items[i].ev == nil {
			s.m.dispatch.release(int64(len(items[i].msg.Payload)), 1)
		}
	}
}

// run keeps an outgoing session connected: it dials, serves the
// connection until it fails, and for a lossless session dials again after
// a backoff. A lossy session, or a refusal, closes the session.
func (s *Session) run() {
	defer s.m.wg.Done()
	for attempt := 0; ; {
		c, err := s.dial()
		if err == nil {
			attempt = 0
			err = c.serve()
			s.connLost(c, err)
			s.m.dropConn(c)
		}
		if s.isClosed() {
			return
		}
		if s.policy == Lossy || permanent(err) {
			s.close(EventFailed, fmt.Errorf("%w: %w", ErrSessionClosed, err))
			return
		}
		if ConnRefused(err) {
			s.mu.Lock()
			if !s.closed {
				s.pushLocked(dqItem{ev: &Event{Kind: EventDialRefused, Peer: s.peer, Session: s, Err: err, Addr: s.addr}})
			}
			s.mu.Unlock()
		}
		d := s.m.backoff(attempt)
		attempt++
		s.log.Info("msgr: reconnecting", "after", d, "attempt", attempt, "err", err)
		if !s.m.sleep(d, s.done) {
			return
		}
	}
}

// permanent reports whether a connection error will not go away by
// retrying: the peer refused us, is someone else, or auth denied.
func permanent(err error) bool {
	return errors.Is(err, ErrRefused) || errors.Is(err, ErrWrongPeer) || errors.Is(err, auth.ErrDenied)
}

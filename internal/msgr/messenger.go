package msgr

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
)

// Messenger owns the sessions and connections of one entity.
type Messenger struct {
	cfg      Config
	log      *slog.Logger
	nonce    uint64
	dispatch *throttle       // messages received, not yet dispatched
	ctx      context.Context // cancelled by Close, with ErrClosed
	cancel   context.CancelCauseFunc
	done     <-chan struct{} // ctx.Done()
	wg       sync.WaitGroup

	bufs bufPool // large received payloads

	rngMu sync.Mutex
	rng   *rand.Rand

	mu        sync.Mutex
	closed    bool
	nextID    uint64
	outgoing  map[auth.EntityName]*Session
	accepted  map[acceptKey]*Session
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	port      uint16 // the first listener's port, told to peers in hello
}

// New returns a Messenger for cfg. It starts nothing until Listen or
// Connect.
func New(cfg Config) (*Messenger, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	nonce := cfg.Nonce
	for nonce == 0 {
		var b [8]byte
		_, _ = crand.Read(b[:]) // never fails (crypto/rand doc)
		nonce = binary.LittleEndian.Uint64(b[:])
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Messenger{
		ctx:       ctx,
		cancel:    cancel,
		done:      ctx.Done(),
		cfg:       cfg,
		log:       cfg.Logger.With("msgr", cfg.Name.String()),
		nonce:     nonce,
		dispatch:  newThrottle(cfg.DispatchBytes, cfg.DispatchMessages),
		rng:       rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		outgoing:  make(map[auth.EntityName]*Session),
		accepted:  make(map[acceptKey]*Session),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
		bufs:      bufPool{huge: cfg.HugePayloads},
	}, nil
}

// Name returns this entity's name.
func (m *Messenger) Name() auth.EntityName { return m.cfg.Name }

// Listen accepts connections on addr until ctx is done or Close, and
// returns the address it listens on (useful with port 0).
func (m *Messenger) Listen(ctx context.Context, addr string) (net.Addr, error) {
	if m.cfg.ServerAuth == nil {
		return nil, fmt.Errorf("msgr: listen %s: Config.ServerAuth is required", addr)
	}
	ln, err := m.cfg.Network.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("msgr: listen %s: %w", addr, err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		ln.Close()
		return nil, ErrClosed
	}
	m.listeners[ln] = struct{}{}
	if m.port == 0 {
		m.port = portOf(ln.Addr().String())
	}
	m.wg.Add(1)
	m.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	go m.acceptLoop(ln, stop)
	return ln.Addr(), nil
}

func (m *Messenger) acceptLoop(ln net.Listener, stop func() bool) {
	defer m.wg.Done()
	defer stop()
	for {
		nc, err := ln.Accept()
		if err != nil {
			m.log.Debug("msgr: listener closed", "addr", ln.Addr(), "err", err)
			m.mu.Lock()
			delete(m.listeners, ln)
			m.mu.Unlock()
			ln.Close()
			return
		}
		c := m.newConn(nc)
		if c == nil {
			continue
		}
		go m.serveAccepted(c)
	}
}

// serveAccepted runs an accepted connection to its end.
func (m *Messenger) serveAccepted(c *conn) {
	defer m.dropConn(c)
	s, err := c.accept()
	if err != nil {
		c.fault(err)
		if c.s != nil {
			c.s.connLost(c, err)
		}
		return
	}
	err = c.serve()
	s.connLost(c, err)
}

// Release hands the payload of a received message back for reuse. It is
// optional (an unreleased payload is garbage collected), and msg.Payload
// must not be used after it; it pays off for large payloads, whose fresh
// allocation costs more than receiving them.
func (m *Messenger) Release(msg Message) {
	if m.bufs.put(msg.Payload) {
		m.startTrimmer()
	}
}

// startTrimmer trims the buffer pool every poolTrimInterval until it is
// empty or the messenger closes.
func (m *Messenger) startTrimmer() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.wg.Go(func() {
		for m.sleep(poolTrimInterval, nil) && m.bufs.trim() {
		}
	})
}

// Connect returns the session to peer, creating it (and its first
// connection, made in the background) if there is none. addr is where
// the peer listens; a live session adopts a new non-empty addr for its
// next reconnect.
func (m *Messenger) Connect(peer auth.EntityName, addr string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if s := m.outgoing[peer]; s != nil {
		s.setAddr(addr)
		return s, nil
	}
	m.nextID++
	s := m.newSession(peer, addr, m.nextID)
	m.outgoing[peer] = s
	m.wg.Add(2)
	go s.dispatchLoop()
	go s.run()
	return s, nil
}

// MarkDown closes the sessions to and from peer, dropping what they hold
// (EventFailed), as when the peer is known to have died or restarted: the
// next Send opens a new session, so nothing meant for the new incarnation
// rides on a session that will be reset.
func (m *Messenger) MarkDown(peer auth.EntityName) {
	m.mu.Lock()
	var sessions []*Session
	if s := m.outgoing[peer]; s != nil {
		sessions = append(sessions, s)
	}
	for k, s := range m.accepted {
		if k.peer == peer {
			sessions = append(sessions, s)
		}
	}
	m.mu.Unlock()
	for _, s := range sessions {
		s.close(EventFailed, fmt.Errorf("%w: %s marked down", ErrSessionClosed, peer))
	}
}

// Send queues msg on the session to peer (see Connect and Session.Send).
func (m *Messenger) Send(ctx context.Context, peer auth.EntityName, addr string, msg Message) error {
	s, err := m.Connect(peer, addr)
	if err != nil {
		return err
	}
	return s.Send(ctx, msg)
}

// Close closes every listener, session and connection and waits for the
// messenger's goroutines to exit. Undispatched messages are dropped.
func (m *Messenger) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.cancel(ErrClosed)
	var sessions []*Session
	for _, s := range m.outgoing {
		sessions = append(sessions, s)
	}
	for _, s := range m.accepted {
		sessions = append(sessions, s)
	}
	lns := make([]net.Listener, 0, len(m.listeners))
	for ln := range m.listeners {
		lns = append(lns, ln)
	}
	conns := make([]*conn, 0, len(m.conns))
	for c := range m.conns {
		conns = append(conns, c)
	}
	m.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, s := range sessions {
		s.close(EventFailed, ErrClosed)
	}
	for _, c := range conns {
		c.fault(ErrClosed)
	}
	m.wg.Wait()
	return nil
}

// newConn registers nc, or closes it and returns nil if the messenger is
// closed. A registered conn holds a wg count until dropConn.
func (m *Messenger) newConn(nc net.Conn) *conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		nc.Close()
		return nil
	}
	c := newConn(m, nc)
	m.conns[c] = struct{}{}
	m.wg.Add(1)
	return c
}

// dropConn unregisters c once its goroutines are done.
func (m *Messenger) dropConn(c *conn) {
	m.mu.Lock()
	delete(m.conns, c)
	m.mu.Unlock()
	m.wg.Done()
}

// forget removes s, whose peer incarnation was nonce when it closed,
// from the session maps if it is still there.
func (m *Messenger) forget(s *Session, nonce uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.outgoing[s.peer] == s {
		delete(m.outgoing, s.peer)
	}
	if k := m.acceptKey(s.peer, nonce); m.accepted[k] == s {
		delete(m.accepted, k)
	}
}

// acceptKey keys the accepted sessions. A daemon (a lossless peer) has
// one session per name, so a new incarnation (nonce) replaces the old
// one: that is how its restart is seen. Clients (lossy peers) are keyed
// by incarnation too: many processes may run as one entity (several
// `cuttle` commands and an application as client.admin), and one must
// not reset another's session.
type acceptKey struct {
	peer  auth.EntityName
	nonce uint64
}

func (m *Messenger) acceptKey(peer auth.EntityName, nonce uint64) acceptKey {
	if m.cfg.Policy(peer) == Lossless {
		nonce = 0
	}
	return acceptKey{peer, nonce}
}

// backoff returns the delay before reconnect attempt n (0-based):
// BackoffMin doubled n times, capped at BackoffMax, minus a random part of
// up to half so that peers cut off together do not return together.
func (m *Messenger) backoff(n int) time.Duration {
	d := m.cfg.BackoffMax
	if n < 32 && m.cfg.BackoffMin<<n < m.cfg.BackoffMax && m.cfg.BackoffMin<<n > 0 {
		d = m.cfg.BackoffMin << n
	}
	m.rngMu.Lock()
	j := time.Duration(m.rng.Int64N(int64(d/2) + 1))
	m.rngMu.Unlock()
	return d - j
}

// sleep waits d on the messenger's clock; it returns false if stop or the
// messenger closed first.
func (m *Messenger) sleep(d time.Duration, stop <-chan struct{}) bool {
	t := m.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-stop:
	case <-m.done:
	}
	return false
}

// listenPort is the port this messenger listens on (its first listener),
// 0 if none: peers learn it from hello.
func (m *Messenger) listenPort() uint16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.port == 0 {
		return m.cfg.Port
	}
	return m.port
}

// portOf is the port of "host:port", 0 if addr has none.
func portOf(addr string) uint16 {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}

// hostOf is the host of "host:port", or addr itself when it has no port
// (memnet's host names).
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// InstanceAddr formats an instance address as the blocklist spells it:
// HOST:PORT/NONCE (IPv6 hosts bracketed).
func InstanceAddr(host string, port uint16, nonce uint64) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port))) + "/" + strconv.FormatUint(nonce, 10)
}

// Nonce returns this messenger's incarnation, new on every process start
// unless Config.Nonce fixes it.
func (m *Messenger) Nonce() uint64 { return m.nonce }

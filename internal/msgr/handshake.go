package msgr

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/cuttlestore/cuttle/internal/auth"
)

// The connection handshake (MESSENGER.md has the byte layout):
//
//	connector                            acceptor
//	preamble, hello{name, nonce, target} ->
//	                                     <- preamble, hello{name, nonce}
//	auth(step payload)                   ->
//	                                     <- auth(step payload) ... until the
//	                                        acceptor flags its last one done
//	-- frames are signed from here when auth gave a session key --
//	session{id, connect seq, in seq}     ->
//	                                     <- session_ok{in seq, reset}
//	messages and acks, both ways
//
// The acceptor may send an error frame with a reason instead of its next
// frame, then closes: the connector reports ErrRefused with that reason.

// dial opens a connection for outgoing session s and runs the handshake;
// it returns the connection, attached to s.
func (s *Session) dial() (*conn, error) {
	m := s.m
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	ctx, cancel := context.WithCancelCause(s.ctx)
	defer cancel(nil)
	t := m.cfg.Clock.AfterFunc(m.cfg.HandshakeTimeout, func() {
		cancel(fmt.Errorf("%w: timed out after %v", ErrHandshake, m.cfg.HandshakeTimeout))
	})
	defer t.Stop()
	nc, err := m.cfg.Network.Dial(ctx, addr)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, fmt.Errorf("msgr: dial %s at %s: %w", s.peer, addr, err)
	}
	c := m.newConn(nc)
	if c == nil {
		return nil, ErrClosed
	}
	c.s = s
	stop := context.AfterFunc(ctx, func() { c.fault(context.Cause(ctx)) })
	err = c.connect()
	stop()
	if err != nil {
		c.fault(fmt.Errorf("msgr: connect to %s at %s: %w", s.peer, addr, err))
		m.dropConn(c)
		return nil, c.err
	}
	return c, nil
}

// connect runs the connector's side of the handshake.
func (c *conn) connect() error {
	s, m := c.s, c.m
	me := hello{Name: m.cfg.Name, Nonce: m.nonce, Target: s.peer, Port: m.listenPort()}
	if err := c.writeFrame(kindHello, 0, me.encode(), preamble()); err != nil {
		return err
	}
	if err := readPreamble(c.fr.r); err != nil {
		return c.errOr(err)
	}
	f, err := c.readFrame(kindHello)
	if err != nil {
		return err
	}
	them, err := decodeHello(f.payload)
	if err != nil {
		return err
	}
	if them.Name != s.peer {
		return fmt.Errorf("%w: dialed %s, reached %s", ErrWrongPeer, s.peer, them.Name)
	}
	key, err := c.clientAuth(s.peer)
	if err != nil {
		return err
	}
	c.setKey(key, true)
	s.mu.Lock()
	req := sessionReq{ID: s.id, ConnectSeq: s.connectSeq, InSeq: s.inSeq, Lossless: s.policy == Lossless}
	s.mu.Unlock()
	if err := c.writeFrame(kindSession, 0, req.encode(), nil); err != nil {
		return err
	}
	if f, err = c.readFrame(kindSessionOK); err != nil {
		return err
	}
	ok, err := decodeSessionOK(f.payload)
	if err != nil {
		return err
	}
	return s.attachOutgoing(c, them.Nonce, req.InSeq, ok)
}

// clientAuth drives the client handshake and returns the session key.
func (c *conn) clientAuth(peer auth.EntityName) ([]byte, error) {
	h := c.m.cfg.ClientAuth(peer)
	out, done, err := h.Step(nil)
	if err == nil && done {
		err = errors.New("client handshake done before the server spoke")
	}
	for step := 1; err == nil; step++ {
		switch {
		case step > maxAuthSteps:
			return nil, fmt.Errorf("%w: more than %d auth steps", ErrHandshake, maxAuthSteps)
		case len(out) > maxHandshakeFrame:
			return nil, fmt.Errorf("%w: %d-byte auth payload", ErrHandshake, len(out))
		}
		if err := c.writeFrame(kindAuth, 0, out, nil); err != nil {
			return nil, err
		}
		f, ferr := c.readFrame(kindAuth)
		if ferr != nil {
			return nil, ferr
		}
		out, done, err = h.Step(f.payload)
		serverDone := f.flags&flagAuthDone != 0
		switch {
		case err == nil && done != serverDone:
			return nil, fmt.Errorf("%w: auth step %d: client done %v, server done %v", ErrProtocol, step, done, serverDone)
		case err == nil && done:
			return h.SessionKey(), nil
		}
	}
	return nil, fmt.Errorf("%w: auth with %s: %w", ErrHandshake, peer, err)
}

// accept runs the acceptor's side of the handshake, bounded by the
// handshake timeout, and returns the session the connection joined.
func (c *conn) accept() (*Session, error) {
	m := c.m
	ctx, cancel := context.WithCancelCause(m.ctx)
	defer cancel(nil)
	t := m.cfg.Clock.AfterFunc(m.cfg.HandshakeTimeout, func() {
		cancel(fmt.Errorf("%w: timed out after %v", ErrHandshake, m.cfg.HandshakeTimeout))
	})
	defer t.Stop()
	stop := context.AfterFunc(ctx, func() { c.fault(context.Cause(ctx)) })
	defer stop()
	s, err := c.acceptHandshake()
	if err != nil {
		return nil, c.errOr(fmt.Errorf("msgr: accept: %w", err))
	}
	return s, nil
}

func (c *conn) acceptHandshake() (*Session, error) {
	m := c.m
	// The preamble goes first, so that a refusal below reaches the peer
	// as a frame it can read.
	if err := c.writev(net.Buffers{preamble()}); err != nil {
		return nil, err
	}
	if err := readPreamble(c.fr.r); err != nil {
		return nil, err
	}
	f, err := c.readFrame(kindHello)
	if err != nil {
		return nil, err
	}
	them, err := decodeHello(f.payload)
	if err != nil {
		return nil, err
	}
	if !them.Target.IsZero() && them.Target != m.cfg.Name {
		return nil, c.refuse(fmt.Errorf("%w: %s dialed %s, this is %s", ErrWrongPeer, them.Name, them.Target, m.cfg.Name))
	}
	me := hello{Name: m.cfg.Name, Nonce: m.nonce, Port: m.listenPort()}
	if err := c.writeFrame(kindHello, 0, me.encode(), nil); err != nil {
		return nil, err
	}
	h, err := c.serverAuth()
	if err != nil {
		return nil, err
	}
	if peer := h.Peer(); peer != them.Name {
		return nil, c.refuse(fmt.Errorf("%w: authenticated as %s, hello says %s", ErrHandshake, peer, them.Name))
	}
	c.setKey(h.SessionKey(), false)
	if f, err = c.readFrame(kindSession); err != nil {
		return nil, err
	}
	req, err := decodeSessionReq(f.payload)
	if err != nil {
		return nil, err
	}
	s, ok, err := m.attachAccepted(c, them.Name, h.Caps(), them.Nonce, them.Port, req)
	if err != nil {
		return nil, err
	}
	return s, c.writeFrame(kindSessionOK, 0, ok.encode(), nil)
}

// serverAuth drives the server handshake to its end.
func (c *conn) serverAuth() (auth.ServerHandshake, error) {
	h := c.m.cfg.ServerAuth()
	for step := 1; ; step++ {
		f, err := c.readFrame(kindAuth)
		if err != nil {
			return nil, err
		}
		out, done, err := h.Step(f.payload)
		switch {
		case err != nil:
			return nil, c.refuse(fmt.Errorf("%w: auth step %d: %w", ErrHandshake, step, err))
		case len(out) > maxHandshakeFrame:
			return nil, c.refuse(fmt.Errorf("%w: %d-byte auth payload", ErrHandshake, len(out)))
		case !done && step >= maxAuthSteps:
			return nil, c.refuse(fmt.Errorf("%w: more than %d auth steps", ErrHandshake, maxAuthSteps))
		}
		var flags uint8
		if done {
			flags = flagAuthDone
		}
		if err := c.writeFrame(kindAuth, flags, out, nil); err != nil {
			return nil, err
		}
		if done {
			return h, nil
		}
	}
}

// refuse tells the peer why it is refused and returns err.
func (c *conn) refuse(err error) error {
	reason := err.Error()
	if len(reason) > maxReasonLen {
		reason = reason[:maxReasonLen]
	}
	_ = c.writeFrame(kindError, 0, []byte(reason), nil) // best effort: closing anyway
	return err
}

// setKey turns on signing with key (nil: unsigned). Reader and writer get
// their own signer, each for its direction.
func (c *conn) setKey(key []byte, dialer bool) {
	send, recv := byte(dirFromAcceptor), byte(dirFromDialer)
	if dialer {
		send, recv = recv, send
	}
	c.wsig = newSigner(key, send)
	c.fr.sig = newSigner(key, recv)
}

// attachOutgoing joins c to outgoing session s after the acceptor's reply.
func (s *Session) attachOutgoing(c *conn, nonce, sentIn uint64, ok sessionOK) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
	case ok.Reset:
		s.resetLocked(fmt.Errorf("%w: %s lost the session", ErrPeerReset, s.peer))
	case s.peerNonce != 0 && s.peerNonce != nonce:
		s.resetLocked(fmt.Errorf("%w: %s restarted", ErrPeerReset, s.peer))
	default:
		s.ackSent, s.inUnacked = sentIn, 0
	}
	s.peerNonce = nonce
	_, err := s.attachLocked(c, ok.InSeq)
	return err
}

// attachAccepted finds or creates the session an accepted connection
// joins and attaches c to it: the same peer incarnation and session id
// resume; anything else replaces the old session, which resets.
func (m *Messenger) attachAccepted(c *conn, peer auth.EntityName, caps auth.Caps, nonce uint64, port uint16, req sessionReq) (*Session, sessionOK, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, sessionOK{}, ErrClosed
	}
	key := m.acceptKey(peer, nonce)
	s := m.accepted[key]
	var old *Session
	if s != nil && (s.peerNonce != nonce || s.id != req.ID) {
		old, s = s, nil
	}
	fresh := s == nil
	if fresh {
		s = m.newSession(peer, "", req.ID)
		s.peerNonce = nonce
		m.accepted[key] = s
		m.wg.Add(1)
		go s.dispatchLoop()
	}
	m.mu.Unlock()
	if old != nil {
		old.close(EventReset, fmt.Errorf("%w: %s restarted or began a new session", ErrPeerReset, peer))
	}
	s.mu.Lock()
	ok := sessionOK{InSeq: s.inSeq, Reset: fresh && req.ConnectSeq > 0}
	s.caps = caps
	s.peerAddr = InstanceAddr(hostOf(c.nc.RemoteAddr().String()), port, nonce)
	// A fresh session has sent nothing: what the dialer says it received
	// was from the session this one replaces (we restarted, or it
	// resumes an id we no longer hold). It learns from Reset to start
	// over; applying its count here would refuse the connection, and the
	// dialer would retry the same forever.
	peerIn := req.InSeq
	if fresh {
		peerIn = 0
	}
	prev, err := s.attachLocked(c, peerIn)
	if err == nil {
		s.ackSent, s.inUnacked = s.inSeq, 0
		c.s = s
	}
	s.mu.Unlock()
	if prev != nil {
		prev.fault(errReplaced)
	}
	return s, ok, err
}

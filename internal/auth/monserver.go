package auth

import (
	"crypto/hmac"
	"errors"
)

// The monitor handshake: an entity proves it knows its secret without
// sending it, and receives a mon session key and service tickets.
//
//	client                                  monitor
//	monHello{name, client nonce}        ->
//	                                    <-  monChallenge{server nonce}
//	monAuth{proof, services}            ->  proof = HMAC(HKDF(secret), name, nonces)
//	                                    <-  monGrant{global id,
//	                                          seal(secret, session key; name, nonces),
//	                                          seal(session key, tickets)}   (done)
//
// Opening the session key proves the monitor knows the secret too.

// MonServer is the monitor's side of one handshake; get one from
// Authority.NewHandshake.
type MonServer struct {
	a           *Authority
	step        int
	hello       monHello
	serverNonce []byte

	peer       EntityName
	caps       Caps
	globalID   uint64
	sessionKey []byte
}

// NewHandshake returns the ServerHandshake for one accepted connection
// (msgr.Config.ServerAuth on a monitor).
func (a *Authority) NewHandshake() ServerHandshake { return &MonServer{a: a} }

// Step implements ServerHandshake.
func (s *MonServer) Step(in []byte) ([]byte, bool, error) {
	s.step++
	switch s.step {
	case 1:
		h, err := decodeMonHello(in)
		if err != nil {
			return nil, false, s.a.cfg.Events.refused(err)
		}
		s.hello, s.serverNonce = h, newNonce()
		return (&monChallenge{nonce: s.serverNonce}).encode(), false, nil
	case 2:
		out, err := s.authenticate(in)
		if err != nil {
			return nil, false, s.a.cfg.Events.refused(err)
		}
		s.a.cfg.Events.authenticated(s.peer)
		return out, true, nil
	}
	return nil, false, errors.New("auth: mon handshake: step after done")
}

// authenticate checks the proof and builds the grant.
func (s *MonServer) authenticate(in []byte) ([]byte, error) {
	m, err := decodeMonAuth(in)
	if err != nil {
		return nil, err
	}
	name := s.hello.name
	secret, caps, err := s.a.cfg.Keys.Secret(name)
	if err != nil {
		return nil, lookupError(name, err)
	}
	transcript := monTranscript(name, s.hello.nonce, s.serverNonce)
	if !hmac.Equal(m.proof, clientProof(secret, transcript)) {
		return nil, &Refusal{Reason: ReasonBadProof, Peer: name, Detail: "proof does not match the entity's key"}
	}
	sessionKey := NewSecret()
	globalID := s.a.cfg.GlobalID()
	tickets, err := s.a.issue(name, globalID, caps, m.services, sessionKey[:], s.a.cfg.Now())
	if err != nil {
		return nil, err
	}
	s.peer, s.caps, s.globalID, s.sessionKey = name, caps, globalID, sessionKey[:]
	return (&monGrant{
		globalID:   globalID,
		sessionBox: seal(secret[:], purposeMonSession, sessionKey[:], transcript),
		ticketsBox: tickets,
	}).encode(), nil
}

// Peer implements ServerHandshake.
func (s *MonServer) Peer() EntityName { return s.peer }

// Caps implements ServerHandshake: the caps the KeyServer gave.
func (s *MonServer) Caps() Caps { return s.caps }

// SessionKey implements ServerHandshake.
func (s *MonServer) SessionKey() []byte { return s.sessionKey }

// GlobalID is the global id assigned to the session, valid once done;
// IssueTickets takes it for renewals.
func (s *MonServer) GlobalID() uint64 { return s.globalID }

package auth

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// VerifierConfig configures a Verifier.
type VerifierConfig struct {
	// Service is the service verified for: osd, mds, mgr or mon.
	Service string
	// Keys are the service's rotating keys from the monitors; SetKeys
	// replaces them. May be nil until the first set arrives.
	Keys *RotatingKeys
	// Now is the clock. Required.
	Now func() time.Time
	// MaxSkew bounds the difference between an authorizer's timestamp
	// and Now, and how early a ticket may be used. Default 5 min.
	MaxSkew time.Duration
	// MaxReplayEntries bounds the replay cache; when it is full of
	// unexpired entries, new authorizers are refused. Default 65536.
	MaxReplayEntries int
	// Events receives refusals and acceptances.
	Events Events
}

// Verifier is a daemon's side of service authentication: it verifies the
// authorizers clients present (a ticket plus proof of its session key)
// with the service's rotating keys, refuses replays, and proves itself to
// the client. It is safe for concurrent use; NewHandshake gives one
// ServerHandshake per connection.
type Verifier struct {
	cfg  VerifierConfig
	keys atomic.Pointer[RotatingKeys]

	mu     sync.Mutex
	replay replayCache
}

// NewVerifier returns a Verifier.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	switch {
	case !isCapService(cfg.Service):
		return nil, fmt.Errorf("auth: verifier: unknown service %q", cfg.Service)
	case cfg.Now == nil:
		return nil, errors.New("auth: VerifierConfig.Now is required")
	case cfg.MaxSkew < 0 || cfg.MaxReplayEntries < 0:
		return nil, errors.New("auth: negative MaxSkew or MaxReplayEntries")
	}
	if cfg.MaxSkew == 0 {
		cfg.MaxSkew = 5 * time.Minute
	}
	if cfg.MaxReplayEntries == 0 {
		cfg.MaxReplayEntries = 1 << 16
	}
	v := &Verifier{cfg: cfg, replay: replayCache{max: cfg.MaxReplayEntries}}
	if cfg.Keys != nil {
		if err := v.SetKeys(cfg.Keys); err != nil {
			return nil, err
		}
	}
	v.cfg.Keys = nil // the atomic pointer holds them
	return v, nil
}

// SetKeys replaces the rotating keys with a copy of k (a new set from the
// monitors).
func (v *Verifier) SetKeys(k *RotatingKeys) error {
	if k.Service() != v.cfg.Service {
		return fmt.Errorf("auth: verifier for %s given keys for %s", v.cfg.Service, k.Service())
	}
	v.keys.Store(k.Clone())
	return nil
}

// verified is what a valid authorizer yields.
type verified struct {
	ticket  ticket
	reply   []byte
	connKey []byte
}

// verify checks an authorizer at now, in the order that names the most
// specific reason: header, key, ticket, validity, proof, freshness,
// replay.
func (v *Verifier) verify(in []byte, now time.Time) (verified, error) {
	a, err := decodeAuthorizer(in)
	if err != nil {
		return verified{}, err
	}
	t, err := v.openTicket(a.ticket, now)
	if err != nil {
		return verified{}, err
	}
	deny := func(r Reason, format string, args ...any) error {
		return &Refusal{Reason: r, Peer: t.entity, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case t.service != v.cfg.Service:
		return verified{}, deny(ReasonWrongService, "ticket is for %s, this is %s", t.service, v.cfg.Service)
	case now.Before(t.validFrom.Add(-v.cfg.MaxSkew)):
		return verified{}, deny(ReasonExpired, "ticket not valid until %v (now %v)", t.validFrom, now)
	case !now.Before(t.validUntil):
		return verified{}, deny(ReasonExpired, "ticket expired at %v (now %v)", t.validUntil, now)
	}
	pt, err := open(t.sessionKey[:], purposeAuthorizer, a.proofBox, a.ticket)
	if err != nil {
		return verified{}, deny(ReasonBadProof, "authorizer not sealed with the ticket's session key")
	}
	p, err := decodeAuthorizerProof(pt)
	if err != nil || p.globalID != t.globalID {
		return verified{}, deny(ReasonBadProof, "authorizer does not match the ticket")
	}
	ts := time.Unix(0, p.timestamp)
	if d := now.Sub(ts).Abs(); d > v.cfg.MaxSkew {
		return verified{}, deny(ReasonStale, "authorizer timestamp %v is %v from now, limit %v", ts, d, v.cfg.MaxSkew)
	}
	k := replayKey{globalID: t.globalID}
	copy(k.nonce[:], p.nonce)
	v.mu.Lock()
	ok, full := v.replay.admit(k, now, ts.Add(v.cfg.MaxSkew))
	v.mu.Unlock()
	switch {
	case full:
		return verified{}, deny(ReasonReplay, "replay cache full (%d authorizers within %v)", v.cfg.MaxReplayEntries, v.cfg.MaxSkew)
	case !ok:
		return verified{}, deny(ReasonReplay, "authorizer nonce seen before")
	}
	serverNonce := newNonce()
	reply := authorizerReply{clientNonce: p.nonce, serverNonce: serverNonce}
	return verified{
		ticket:  t,
		reply:   (&authorizerDone{box: seal(t.sessionKey[:], purposeAuthReply, reply.encode(), a.ticket)}).encode(),
		connKey: connectionKey(t.sessionKey, p.nonce, serverNonce),
	}, nil
}

// openTicket finds the rotating key a ticket names and opens it.
func (v *Verifier) openTicket(blob []byte, now time.Time) (ticket, error) {
	b, err := decodeTicketBlob(blob)
	if err != nil {
		return ticket{}, err
	}
	if b.service != v.cfg.Service {
		return ticket{}, &Refusal{Reason: ReasonWrongService, Detail: fmt.Sprintf("ticket is for %s, this is %s", b.service, v.cfg.Service)}
	}
	keys := v.keys.Load()
	var key ServiceKey
	ok := keys != nil
	if ok {
		key, ok = keys.Lookup(b.keyID)
	}
	switch {
	case !ok:
		return ticket{}, &Refusal{Reason: ReasonUnknownKey, Detail: fmt.Sprintf("no %s key %d (rotated out, or not yet received)", b.service, b.keyID)}
	case !now.Before(key.Expires):
		return ticket{}, &Refusal{Reason: ReasonUnknownKey, Detail: fmt.Sprintf("%s key %d expired at %v", b.service, b.keyID, key.Expires)}
	}
	pt, err := open(key.Secret[:], purposeTicket, b.box, ticketAD(b.service, b.keyID))
	if err != nil {
		return ticket{}, &Refusal{Reason: ReasonBadTicket, Detail: fmt.Sprintf("ticket does not open under %s key %d: forged or tampered", b.service, b.keyID)}
	}
	t, err := decodeTicket(pt)
	if err != nil { // sealed by someone holding the key: not ours
		return ticket{}, &Refusal{Reason: ReasonBadTicket, Detail: err.Error()}
	}
	return t, nil
}

// connectionKey derives a connection's session key from the ticket's and
// both nonces, so every connection signs with its own key.
func connectionKey(ticketKey Secret, clientNonce, serverNonce []byte) []byte {
	salt := append(append([]byte(nil), clientNonce...), serverNonce...)
	return deriveKey(ticketKey[:], salt, purposeConnection)
}

// ServiceServer is a daemon's side of one handshake; get one from
// Verifier.NewHandshake.
type ServiceServer struct {
	v      *Verifier
	done   bool
	result verified
}

// NewHandshake returns the ServerHandshake for one accepted connection
// (msgr.Config.ServerAuth on an osd, mds or mgr).
func (v *Verifier) NewHandshake() ServerHandshake { return &ServiceServer{v: v} }

// Step implements ServerHandshake: one authorizer in, the proof of the
// service out.
func (s *ServiceServer) Step(in []byte) ([]byte, bool, error) {
	if s.done {
		return nil, false, errors.New("auth: service handshake: step after done")
	}
	r, err := s.v.verify(in, s.v.cfg.Now())
	if err != nil {
		return nil, false, s.v.cfg.Events.refused(err)
	}
	s.done, s.result = true, r
	s.v.cfg.Events.authenticated(r.ticket.entity)
	return r.reply, true, nil
}

// Peer implements ServerHandshake: the ticket's entity.
func (s *ServiceServer) Peer() EntityName { return s.result.ticket.entity }

// Caps implements ServerHandshake: the caps sealed in the ticket.
func (s *ServiceServer) Caps() Caps { return s.result.ticket.caps }

// SessionKey implements ServerHandshake: the connection's key.
func (s *ServiceServer) SessionKey() []byte { return s.result.connKey }

// GlobalID is the ticket's global id, valid once done.
func (s *ServiceServer) GlobalID() uint64 { return s.result.ticket.globalID }

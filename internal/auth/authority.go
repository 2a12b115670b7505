package auth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// KeyServer gives the monitor every entity's secret and caps. A Keyring
// is one; the monitor's auth database is another. It must return an error
// wrapping ErrUnknownEntity for an entity it does not know, and be safe
// for concurrent use.
type KeyServer interface {
	Secret(name EntityName) (Secret, Caps, error)
}

// AuthorityConfig configures an Authority.
type AuthorityConfig struct {
	// Keys looks up entities' secrets and caps. Required.
	Keys KeyServer
	// Now is the clock. Required: auth has none of its own.
	Now func() time.Time
	// TicketTTL bounds a service ticket's lifetime; a ticket also ends
	// when its rotating key does. Default 1 h.
	TicketTTL time.Duration
	// RotationPeriod is how long each rotating key seals tickets.
	// Default TicketTTL.
	RotationPeriod time.Duration
	// Services are the services the authority keeps rotating keys for.
	// Default mon, osd, mds, mgr.
	Services []string
	// GlobalID allocates the global id of each authenticated session;
	// monitors should agree on ranges through the cluster map. Default:
	// random, nonzero.
	GlobalID func() uint64
	// Events receives refusals and acceptances.
	Events Events
}

func (c *AuthorityConfig) withDefaults() (AuthorityConfig, error) {
	cfg := *c
	switch {
	case cfg.Keys == nil:
		return cfg, errors.New("auth: AuthorityConfig.Keys is required")
	case cfg.Now == nil:
		return cfg, errors.New("auth: AuthorityConfig.Now is required")
	case cfg.TicketTTL < 0 || cfg.RotationPeriod < 0:
		return cfg, errors.New("auth: negative TicketTTL or RotationPeriod")
	}
	if cfg.TicketTTL == 0 {
		cfg.TicketTTL = time.Hour
	}
	if cfg.RotationPeriod == 0 {
		cfg.RotationPeriod = cfg.TicketTTL
	}
	if cfg.Services == nil {
		cfg.Services = []string{"mon", "osd", "mds", "mgr"}
	}
	if cfg.GlobalID == nil {
		cfg.GlobalID = randomGlobalID
	}
	return cfg, nil
}

func randomGlobalID() uint64 {
	for {
		s := NewSecret()
		if id := binary.LittleEndian.Uint64(s[:8]); id != 0 {
			return id
		}
	}
}

// Authority is the monitor's side of auth: it authenticates entities by
// their secrets (NewHandshake), issues service tickets, and keeps the
// rotating service keys. It is safe for concurrent use.
//
// Rotating keys are cluster state: the monitor that rotates them (the
// leader) must commit the new sets through consensus and the others apply
// them with SetServiceKeys, so every monitor seals with the same keys.
type Authority struct {
	cfg AuthorityConfig

	mu   sync.Mutex
	keys map[string]*RotatingKeys // by service
}

// NewAuthority returns an Authority with empty rotating key sets; call
// Rotate (or SetServiceKeys) before it can issue tickets.
func NewAuthority(cfg AuthorityConfig) (*Authority, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &Authority{cfg: c, keys: make(map[string]*RotatingKeys)}
	for _, s := range c.Services {
		r, err := NewRotatingKeys(s, c.RotationPeriod)
		if err != nil {
			return nil, err
		}
		a.keys[s] = r
	}
	return a, nil
}

// Rotate rotates every service's keys at now and returns the services
// whose set changed, sorted.
func (a *Authority) Rotate(now time.Time) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var changed []string
	for s, r := range a.keys {
		if r.Rotate(now) {
			changed = append(changed, s)
		}
	}
	slices.Sort(changed)
	return changed
}

// ServiceKeys returns a copy of a service's rotating keys, to persist or
// to send (sealed) to the service's daemons.
func (a *Authority) ServiceKeys(service string) (*RotatingKeys, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.keys[service]
	if !ok {
		return nil, false
	}
	return r.Clone(), true
}

// SetServiceKeys replaces the service's rotating keys with a copy of r.
func (a *Authority) SetServiceKeys(r *RotatingKeys) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keys[r.Service()] = r.Clone()
}

// IssueTickets issues tickets for services to peer, with its current caps
// from the KeyServer, and seals them under sealKey (the mon session key)
// for OpenTickets. Clients renew tickets with it over their mon session.
func (a *Authority) IssueTickets(peer EntityName, globalID uint64, services []string, sealKey []byte, now time.Time) ([]byte, error) {
	_, caps, err := a.cfg.Keys.Secret(peer)
	if err != nil {
		return nil, a.cfg.Events.refused(lookupError(peer, err))
	}
	return a.issue(peer, globalID, caps, services, sealKey, now)
}

func (a *Authority) issue(peer EntityName, globalID uint64, caps Caps, services []string, sealKey []byte, now time.Time) ([]byte, error) {
	tickets := make([]ServiceTicket, 0, len(services))
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range slices.Compact(slices.Sorted(slices.Values(services))) {
		r, ok := a.keys[s]
		var key ServiceKey
		if ok {
			key, ok = r.Current(now)
		}
		if !ok {
			return nil, fmt.Errorf("%w for %s at %v", ErrNoServiceKey, s, now)
		}
		t := ticket{entity: peer, globalID: globalID, service: s, caps: caps, sessionKey: NewSecret(),
			validFrom: now, validUntil: minTime(now.Add(a.cfg.TicketTTL), key.Expires)}
		tickets = append(tickets, ServiceTicket{Service: s, GlobalID: globalID, SessionKey: t.sessionKey,
			ValidUntil: t.validUntil, Blob: sealTicket(&t, key)})
	}
	return seal(sealKey, purposeTicketGrant, encodeGrant(tickets), nil), nil
}

// lookupError turns a KeyServer error into a refusal, or passes on a
// failure of the KeyServer itself.
func lookupError(peer EntityName, err error) error {
	if errors.Is(err, ErrUnknownEntity) {
		return &Refusal{Reason: ReasonUnknownEntity, Peer: peer, Detail: "no such entity"}
	}
	return fmt.Errorf("auth: key lookup for %s: %w", peer, err)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

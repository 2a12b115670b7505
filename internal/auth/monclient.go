package auth

import (
	"errors"
	"slices"
)

// MonClientConfig configures a MonClient.
type MonClientConfig struct {
	// Name and Secret are the entity's, from its keyring.
	Name   EntityName
	Secret Secret
	// Services are the services to get tickets for (e.g. osd, mds).
	Services []string
	// Events receives refusals of the monitor (a monitor that cannot
	// prove it knows the secret).
	Events Events
}

// MonClient is an entity's side of the monitor handshake (monserver.go
// has the exchange). After it is done it holds the mon session key, the
// global id and the service tickets.
type MonClient struct {
	cfg         MonClientConfig
	step        int
	clientNonce []byte
	transcript  []byte

	globalID   uint64
	sessionKey []byte
	tickets    []ServiceTicket
}

// NewMonClient returns the handshake for one connection to a monitor.
func NewMonClient(cfg MonClientConfig) *MonClient {
	cfg.Services = slices.Clone(cfg.Services)
	return &MonClient{cfg: cfg}
}

// Step implements ClientHandshake.
func (c *MonClient) Step(in []byte) ([]byte, bool, error) {
	c.step++
	switch c.step {
	case 1:
		c.clientNonce = newNonce()
		return (&monHello{name: c.cfg.Name, nonce: c.clientNonce}).encode(), false, nil
	case 2:
		ch, err := decodeMonChallenge(in)
		if err != nil {
			return nil, false, c.cfg.Events.refused(err)
		}
		c.transcript = monTranscript(c.cfg.Name, c.clientNonce, ch.nonce)
		return (&monAuth{proof: clientProof(c.cfg.Secret, c.transcript), services: c.cfg.Services}).encode(), false, nil
	case 3:
		if err := c.accept(in); err != nil {
			return nil, false, c.cfg.Events.refused(err)
		}
		return nil, true, nil
	}
	return nil, false, errors.New("auth: mon handshake: step after done")
}

// accept opens the monitor's grant.
func (c *MonClient) accept(in []byte) error {
	g, err := decodeMonGrant(in)
	if err != nil {
		return err
	}
	key, err := open(c.cfg.Secret[:], purposeMonSession, g.sessionBox, c.transcript)
	if err != nil || len(key) != SecretSize {
		return &Refusal{Reason: ReasonBadProof, Detail: "the monitor's grant does not open under our key: not a monitor of our cluster"}
	}
	tickets, err := OpenTickets(key, g.ticketsBox)
	if err != nil {
		return err
	}
	c.globalID, c.sessionKey, c.tickets = g.globalID, key, tickets
	return nil
}

// SessionKey implements ClientHandshake: the mon session key.
func (c *MonClient) SessionKey() []byte { return c.sessionKey }

// GlobalID is the global id the monitor assigned, valid once done.
func (c *MonClient) GlobalID() uint64 { return c.globalID }

// Tickets are the service tickets received, valid once done.
func (c *MonClient) Tickets() []ServiceTicket { return slices.Clone(c.tickets) }

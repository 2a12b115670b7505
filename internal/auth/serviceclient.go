package auth

import (
	"bytes"
	"errors"
	"time"
)

// The service handshake: one round trip.
//
//	client                                  service (osd, mds, ...)
//	authorizer{ticket,                  ->  opens the ticket with its rotating key,
//	  seal(ticket session key,              checks service, validity, proof,
//	       {nonce, now, global id})}         timestamp window and replay cache
//	                                    <-  authorizerDone{seal(ticket session key,
//	                                          {client nonce, server nonce})}  (done)
//
// Both then sign frames with HKDF(ticket session key, both nonces).

// ServiceClientConfig configures a ServiceClient.
type ServiceClientConfig struct {
	// Ticket is the ticket for the service, from the monitor.
	Ticket ServiceTicket
	// Now is the clock, for the authorizer's timestamp. Required.
	Now func() time.Time
	// Events receives refusals of the service (one that cannot open the
	// ticket, so is not a daemon of the cluster).
	Events Events
}

// ServiceClient is an entity's side of the handshake with a service
// daemon.
type ServiceClient struct {
	cfg         ServiceClientConfig
	step        int
	clientNonce []byte
	connKey     []byte
}

// NewServiceClient returns the handshake for one connection to a daemon
// of cfg.Ticket.Service.
func NewServiceClient(cfg ServiceClientConfig) *ServiceClient {
	return &ServiceClient{cfg: cfg}
}

// Step implements ClientHandshake.
func (c *ServiceClient) Step(in []byte) ([]byte, bool, error) {
	c.step++
	switch c.step {
	case 1:
		if c.cfg.Now == nil {
			return nil, false, errors.New("auth: ServiceClientConfig.Now is required")
		}
		c.clientNonce = newNonce()
		t := c.cfg.Ticket
		p := authorizerProof{nonce: c.clientNonce, timestamp: c.cfg.Now().UnixNano(), globalID: t.GlobalID}
		return (&authorizer{ticket: t.Blob, proofBox: seal(t.SessionKey[:], purposeAuthorizer, p.encode(), t.Blob)}).encode(), false, nil
	case 2:
		if err := c.accept(in); err != nil {
			return nil, false, c.cfg.Events.refused(err)
		}
		return nil, true, nil
	}
	return nil, false, errors.New("auth: service handshake: step after done")
}

// accept checks the service's proof and derives the connection key.
func (c *ServiceClient) accept(in []byte) error {
	m, err := decodeAuthorizerDone(in)
	if err != nil {
		return err
	}
	t := c.cfg.Ticket
	pt, err := open(t.SessionKey[:], purposeAuthReply, m.box, t.Blob)
	if err != nil {
		return &Refusal{Reason: ReasonBadProof, Detail: "the " + t.Service + " daemon's reply does not open: it could not read our ticket"}
	}
	r, err := decodeAuthorizerReply(pt)
	if err != nil || !bytes.Equal(r.clientNonce, c.clientNonce) {
		return &Refusal{Reason: ReasonBadProof, Detail: "the " + t.Service + " daemon's reply is not for this authorizer"}
	}
	c.connKey = connectionKey(t.SessionKey, c.clientNonce, r.serverNonce)
	return nil
}

// SessionKey implements ClientHandshake: the connection's key.
func (c *ServiceClient) SessionKey() []byte { return c.connKey }

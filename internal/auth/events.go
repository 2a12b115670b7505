package auth

import (
	"errors"
	"maps"
	"sync"
)

// Events are callbacks for what auth decides, so daemons can count
// refusals (Prometheus counters, logs) without auth importing either.
// Nil fields are skipped. Callbacks run synchronously in the handshake's
// goroutine and must be safe for concurrent use.
type Events struct {
	// OnRefusal is called once for every refusal and malformed payload,
	// with the peer when known. err is the error the handshake returns.
	OnRefusal func(reason Reason, peer EntityName, err error)
	// OnAuthenticated is called when a handshake accepts a peer.
	OnAuthenticated func(peer EntityName)
}

// refused reports err to OnRefusal if it carries a Reason, and returns it.
func (ev Events) refused(err error) error {
	if ev.OnRefusal == nil {
		return err
	}
	if reason, ok := ReasonOf(err); ok {
		var peer EntityName
		if r := (*Refusal)(nil); errors.As(err, &r) {
			peer = r.Peer
		}
		ev.OnRefusal(reason, peer, err)
	}
	return err
}

func (ev Events) authenticated(peer EntityName) {
	if ev.OnAuthenticated != nil {
		ev.OnAuthenticated(peer)
	}
}

// Counters counts refusals by reason and acceptances; wire it with
// Events. The zero value is ready; it is safe for concurrent use.
type Counters struct {
	mu            sync.Mutex
	refusals      map[Reason]uint64
	authenticated uint64
}

// Events returns callbacks that count into c.
func (c *Counters) Events() Events {
	return Events{
		OnRefusal: func(r Reason, _ EntityName, _ error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.refusals == nil {
				c.refusals = make(map[Reason]uint64)
			}
			c.refusals[r]++
		},
		OnAuthenticated: func(EntityName) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.authenticated++
		},
	}
}

// Refusals returns a copy of the refusal counts by reason.
func (c *Counters) Refusals() map[Reason]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.refusals)
}

// Authenticated returns how many peers were accepted.
func (c *Counters) Authenticated() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authenticated
}

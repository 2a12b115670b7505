package monc

import (
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
)

// ticketState holds the service tickets of the last handshake that
// issued some, and the timer that renews them.
type ticketState struct {
	list  []auth.ServiceTicket
	mon   auth.EntityName // the monitor that issued them
	gen   uint64          // counts the logins that brought tickets
	renew clock.Timer
}

// minRenew bounds how soon after being issued tickets are renewed;
// renewRetry is how long a renewal may take before the next monitor is
// tried.
const (
	minRenew   = time.Second
	renewRetry = 10 * time.Second
)

// Tickets returns the service tickets the monitors issued at the last
// login (auth.MonClientConfig.Services names the services), or nil in
// the none mode. The client renews them before they expire by logging
// in again; callers should fetch a ticket for every new connection
// rather than keep one.
func (c *Client) Tickets() []auth.ServiceTicket {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tickets.list)
}

// ServiceTicket returns the ticket for service, if the last login got
// one.
func (c *Client) ServiceTicket(service string) (auth.ServiceTicket, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.tickets.list {
		if t.Service == service {
			return t, true
		}
	}
	return auth.ServiceTicket{}, false
}

// wrapAuth wraps every monitor handshake to keep the tickets it yields.
func (c *Client) wrapAuth(f func(auth.EntityName) auth.ClientHandshake) func(auth.EntityName) auth.ClientHandshake {
	return func(peer auth.EntityName) auth.ClientHandshake {
		return &ticketCapture{ClientHandshake: f(peer), c: c, peer: peer}
	}
}

// ticketCapture is a monitor handshake that hands the tickets it got to
// the client when it completes.
type ticketCapture struct {
	auth.ClientHandshake
	c    *Client
	peer auth.EntityName
}

func (h *ticketCapture) Step(in []byte) ([]byte, bool, error) {
	out, done, err := h.ClientHandshake.Step(in)
	if done && err == nil {
		if t, ok := h.ClientHandshake.(interface{ Tickets() []auth.ServiceTicket }); ok {
			if ts := t.Tickets(); len(ts) > 0 {
				h.c.setTickets(h.peer, ts)
			}
		}
	}
	return out, done, err
}

// setTickets keeps new tickets and arms their renewal at three quarters
// of the shortest one's remaining life.
func (c *Client) setTickets(mon auth.EntityName, ts []auth.ServiceTicket) {
	now := c.cfg.Clock.Now()
	life := time.Duration(1<<63 - 1)
	for _, t := range ts {
		life = min(life, t.ValidUntil.Sub(now))
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.tickets.list, c.tickets.mon = slices.Clone(ts), mon
	c.tickets.gen++
	if c.tickets.renew != nil {
		c.tickets.renew.Stop()
	}
	c.tickets.renew = c.cfg.Clock.AfterFunc(max(life*3/4, minRenew), c.renewTickets)
	c.mu.Unlock()
	if c.cfg.OnTickets != nil {
		c.cfg.OnTickets(slices.Clone(ts))
	}
}

// renewTickets logs in again: it closes the session to the monitor that
// issued the tickets and opens a new one, whose handshake brings fresh
// tickets. Commands in flight there move to another monitor; the
// subscription follows (subscriptionLost).
func (c *Client) renewTickets() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	mon, gen := c.tickets.mon, c.tickets.gen
	c.tickets.renew = c.cfg.Clock.AfterFunc(renewRetry, func() { c.renewRetry(gen) })
	c.mu.Unlock()
	var addr string
	for _, m := range c.cfg.Mons {
		if m.Name == mon.ID {
			addr = m.Addr
		}
	}
	if s, err := c.ms.Connect(mon, addr); err == nil {
		s.Close()
	}
	if _, err := c.ms.Connect(mon, addr); err != nil && c.cfg.Logger != nil {
		c.cfg.Logger.Warn("monc: renew tickets", "mon", mon.String(), "err", err)
	}
}

// renewRetry tries the next monitor when the renewal of generation gen
// brought no tickets.
func (c *Client) renewRetry(gen uint64) {
	c.mu.Lock()
	if c.closed || c.tickets.gen != gen {
		c.mu.Unlock()
		return
	}
	for i, m := range c.cfg.Mons {
		if m.Name == c.tickets.mon.ID {
			c.tickets.mon.ID = c.cfg.Mons[(i+1)%len(c.cfg.Mons)].Name
			break
		}
	}
	c.mu.Unlock()
	c.renewTickets()
}

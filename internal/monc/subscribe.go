package monc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Backoff of resubscriptions after a monitor session fails.
const (
	resubMin = 50 * time.Millisecond
	resubMax = 5 * time.Second
)

// subState is the OSD map subscription: once Subscribe is called the
// client keeps one alive, moving it to another monitor when the
// session it lives on fails.
type subState struct {
	active bool
	mon    string // the monitor subscribed at
	next   uint64 // first epoch not yet received (0: the full map)
	// lost is why the last monitor session the subscription was on
	// failed, until a map arrives.
	lost    error
	backoff time.Duration
	retry   clock.Timer
}

// Subscribe asks the monitors for the OSD map from epoch start on (0:
// the newest full map); every update goes to OnOSDMap. The client keeps
// the subscription: when the monitor's session fails it subscribes at
// the next monitor, from the epoch after the newest it has received.
// Calling Subscribe again asks for epochs from a new start (to fill a
// gap, or to be sure of the newest epoch).
func (c *Client) Subscribe(ctx context.Context, start uint64) error {
	c.armUnreachable()
	c.mu.Lock()
	c.sub.active = true
	c.sub.next = start
	c.mu.Unlock()
	err := c.subscribe(ctx, start)
	if err != nil && ctx.Err() == nil && !errors.Is(err, msgr.ErrRefused) {
		// The monitor's session failed before the request left (nobody
		// listens there yet): the subscription stays active and moves
		// on after a backoff (subscriptionLost), as when a session fails
		// later. Failing here made a client give up at once, racing the
		// dial, instead of retrying until its context ends.
		return nil
	}
	return err
}

func (c *Client) subscribe(ctx context.Context, start uint64) error {
	s := wire.MonSubscribe{What: "osdmap", Start: start}
	var err error
	for attempt := range c.cfg.Mons {
		mon := c.pick(attempt)
		c.mu.Lock()
		c.sub.mon = mon.Name
		c.mu.Unlock()
		err = c.ms.Send(ctx, auth.EntityName{Type: "mon", ID: mon.Name}, mon.Addr, msgr.Message{Type: wire.TypeMonSubscribe, Version: 1, Payload: s.Encode()})
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("monc: subscribe: %w", err)
}

// gotMaps records the epochs an update brought.
func (c *Client) gotMaps(u wire.OSDMapUpdate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u.Newest+1 > c.sub.next {
		c.sub.next = u.Newest + 1
	}
	c.sub.backoff, c.sub.lost = 0, nil
}

// subscriptionLost moves the subscription to the next monitor, after a
// backoff, when the session to the monitor holding it fails.
func (c *Client) subscriptionLost(peer auth.EntityName, err error) {
	if peer.Type != "mon" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || !c.sub.active || peer.ID != c.sub.mon {
		return
	}
	for i, m := range c.cfg.Mons {
		if m.Name == peer.ID {
			c.cur = (i + 1) % len(c.cfg.Mons)
			c.sub.lost = &monitorError{m.Name, m.Addr, err}
		}
	}
	c.sub.mon = ""
	d := c.sub.backoff
	c.sub.backoff = min(max(2*d, resubMin), resubMax)
	if c.sub.retry != nil {
		c.sub.retry.Stop()
	}
	c.sub.retry = c.cfg.Clock.AfterFunc(d, c.resubscribe)
}

// SubscriptionLost returns why the last monitor session the OSD map
// subscription was on failed, or nil once a map has arrived since: what
// a client that waited in vain for a map can tell its user.
func (c *Client) SubscriptionLost() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sub.lost
}

func (c *Client) resubscribe() {
	c.mu.Lock()
	if c.closed || !c.sub.active || c.sub.mon != "" {
		c.mu.Unlock()
		return
	}
	next := c.sub.next
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Attempt)
	defer cancel()
	if err := c.subscribe(ctx, next); err != nil && c.cfg.Logger != nil {
		c.cfg.Logger.Warn("monc: resubscribe", "err", err)
	}
}

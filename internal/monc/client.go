package monc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Addr names a monitor and where it listens.
type Addr struct {
	Name string // "a" for mon.a
	Addr string // host:port
}

// ParseHosts parses "a=host:port,b=host:port".
func ParseHosts(s string) ([]Addr, error) {
	var out []Addr
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, addr, ok := strings.Cut(part, "=")
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("monc: bad monitor %q in %q (want NAME=HOST:PORT)", part, s)
		}
		out = append(out, Addr{Name: name, Addr: addr})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("monc: no monitors given (want NAME=HOST:PORT,...)")
	}
	return out, nil
}

// Config configures a Client.
type Config struct {
	// Name is the client's entity (default client.admin).
	Name auth.EntityName
	// Mons are the monitors to try. Required.
	Mons []Addr
	// Network dials monitors (default msgr.TCP).
	Network msgr.Network
	// ClientAuth returns the handshake for a connection to a monitor
	// (default: the none mode).
	ClientAuth func(peer auth.EntityName) auth.ClientHandshake
	// Attempt bounds one try at one monitor before the command is sent
	// to the next (default 5 s).
	Attempt time.Duration
	// OnOSDMap receives OSD map updates of Subscribe (on the messenger's
	// goroutine; do not block).
	OnOSDMap func(wire.OSDMapUpdate)
	// OnTickets receives the service tickets of every completed
	// handshake that issued some (a login, or a renewal), from the
	// messenger's goroutine; do not block. Tickets also returns them.
	OnTickets func([]auth.ServiceTicket)
	// Unreachable, if set, is called once (on a timer's goroutine) when
	// the client has been trying for UnreachableAfter since its first
	// command or subscription and no monitor has answered yet, so that
	// a command-line tool can say it is retrying rather than stay
	// silent until its timeout. The library itself never prints.
	Unreachable func(mons []Addr, waited time.Duration)
	// UnreachableAfter is how long before Unreachable is called
	// (default 2 s).
	UnreachableAfter time.Duration
	Logger           *slog.Logger
	Clock            clock.Clock
	Seed             uint64
}

// Client sends commands to the monitors. It is safe for concurrent
// use.
type Client struct {
	cfg  Config
	ms   *msgr.Messenger
	rand *rand.Rand

	// nonce tells this client's numbered commands from other clients'
	// (see wire.MonCommand).
	nonce uint64

	mu      sync.Mutex
	tid     uint64
	seq     uint64              // last command number given out
	running map[uint64]struct{} // numbers of the commands not yet answered
	waiting map[uint64]*pending
	cur     int // index of the monitor tried first
	closed  bool
	sub     subState
	tickets ticketState
	// heard says a monitor has sent something; unreachable is the timer
	// that calls Config.Unreachable, armed at first use.
	heard       bool
	unreachable clock.Timer
	// hookMu is held while Config.Unreachable runs, so that Close
	// returns only after it (what it wrote is then the caller's to
	// read).
	hookMu     sync.Mutex
	hookClosed bool // under hookMu: Close ran, no more calls
}

// ErrNoMonitor means no monitor answered before the context ended.
var ErrNoMonitor = errors.New("monc: no monitor answered")

// noMonitorError is ErrNoMonitor for one command, with why the last
// monitor tried did not answer.
type noMonitorError struct {
	command string
	last    error
}

func (e *noMonitorError) Error() string {
	return fmt.Sprintf("%s: no monitor answered (last: %v)", e.command, e.last)
}

func (e *noMonitorError) Is(target error) bool { return target == ErrNoMonitor }
func (e *noMonitorError) Unwrap() error        { return e.last }

// monitorError is why one monitor did not answer. A connection that
// could not be made says only the network's reason ("connection
// refused"): the layers it passed through add nothing a person needs.
type monitorError struct {
	mon, addr string
	err       error
}

func (e *monitorError) Error() string {
	var ne *net.OpError
	if errors.As(e.err, &ne) && ne.Op == "dial" {
		return fmt.Sprintf("mon.%s at %s: %v", e.mon, e.addr, ne.Err)
	}
	return fmt.Sprintf("mon.%s at %s: %v", e.mon, e.addr, e.err)
}

func (e *monitorError) Unwrap() error { return e.err }

// pending is a command sent to one monitor, waiting for its reply or
// for the session to fail.
type pending struct {
	mon   string
	reply chan wire.Reply
	fail  chan error
}

// New makes a client; it connects on first use.
func New(cfg Config) (*Client, error) {
	if len(cfg.Mons) == 0 {
		return nil, fmt.Errorf("monc: no monitors configured")
	}
	if cfg.Name.IsZero() {
		cfg.Name = auth.EntityName{Type: "client", ID: "admin"}
	}
	if cfg.Network == nil {
		cfg.Network = &msgr.TCP{}
	}
	if cfg.ClientAuth == nil {
		self := cfg.Name
		cfg.ClientAuth = func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: self} }
	}
	if cfg.Attempt == 0 {
		cfg.Attempt = 5 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.UnreachableAfter <= 0 {
		cfg.UnreachableAfter = 2 * time.Second
	}
	c := &Client{cfg: cfg, nonce: newNonce(), running: make(map[uint64]struct{}),
		waiting: make(map[uint64]*pending), rand: rand.New(rand.NewPCG(cfg.Seed, uint64(len(cfg.Mons))))}
	c.cur = c.rand.IntN(len(cfg.Mons))
	ms, err := msgr.New(msgr.Config{Name: cfg.Name, Network: cfg.Network, Dispatcher: monDispatcher{c},
		ClientAuth: c.wrapAuth(cfg.ClientAuth), Logger: cfg.Logger, Clock: cfg.Clock, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	c.ms = ms
	return c, nil
}

// Close closes the client's connections and stops its timers.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	if c.sub.retry != nil {
		c.sub.retry.Stop()
	}
	if c.tickets.renew != nil {
		c.tickets.renew.Stop()
	}
	if c.unreachable != nil {
		c.unreachable.Stop()
	}
	c.mu.Unlock()
	// Wait for a call of Unreachable under way, and let none start.
	c.hookMu.Lock()
	c.hookClosed = true
	c.hookMu.Unlock()
	return c.ms.Close()
}

// armUnreachable starts, at the client's first use, the timer that calls
// Config.Unreachable if no monitor has answered by then.
func (c *Client) armUnreachable() {
	if c.cfg.Unreachable == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.heard || c.closed || c.unreachable != nil {
		return
	}
	c.unreachable = c.cfg.Clock.AfterFunc(c.cfg.UnreachableAfter, func() {
		c.hookMu.Lock()
		defer c.hookMu.Unlock()
		if c.hookClosed {
			return
		}
		c.mu.Lock()
		silent := !c.heard && !c.closed
		c.mu.Unlock()
		if silent {
			c.cfg.Unreachable(c.cfg.Mons, c.cfg.UnreachableAfter)
		}
	})
}

// heardFrom records that a monitor answered.
func (c *Client) heardFrom() {
	c.mu.Lock()
	c.heard = true
	c.mu.Unlock()
}

// newNonce returns a random non-zero number. It comes from the runtime's
// randomly seeded generator, never from Config.Seed, so that two clients
// started alike (two runs of one CLI command) still differ.
func newNonce() uint64 {
	for {
		if n := rand.Uint64(); n != 0 {
			return n
		}
	}
}

// Run sends cmd to a monitor and returns its reply. A monitor that does
// not answer within an attempt is given up for the next one; the same
// command may then reach two monitors, which apply it once: every attempt
// carries the command's number (wire.MonCommand). A reply with a
// non-zero code is returned as is, with a nil error. A monitor refusing
// the client's authentication ends the command at once: the others would
// refuse it too.
func (c *Client) Run(ctx context.Context, cmd wire.Command) (wire.Reply, error) {
	c.armUnreachable()
	p := &pending{reply: make(chan wire.Reply, 1), fail: make(chan error, 1)}
	seq := c.begin()
	defer c.finish(seq)
	var lastErr error
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			if lastErr == nil {
				lastErr = err
			}
			return wire.Reply{}, &noMonitorError{cmd.Prefix, lastErr}
		}
		mon := c.pick(attempt)
		r, err := c.try(ctx, mon, cmd, seq, p)
		if errors.Is(err, msgr.ErrRefused) {
			return wire.Reply{}, fmt.Errorf("monc: mon.%s refused %s: %w", mon.Name, c.cfg.Name, err)
		}
		switch {
		case err == nil && r.Code == wire.EAGAIN && strings.Contains(r.Status, "not ready"):
			// Not ready (no quorum yet, or a command only the leader
			// serves): try the next monitor, without making this one
			// the first to ask.
			lastErr = fmt.Errorf("mon.%s: %s", mon.Name, r.Status)
		case err == nil:
			c.answered(mon)
			return r, nil
		default:
			lastErr = &monitorError{mon.Name, mon.Addr, err}
		}
		// A monitor nobody listens at fails at once, and one not ready
		// answers at once: after every monitor failed, pause before the
		// next round rather than spin until the context ends.
		if (attempt+1)%len(c.cfg.Mons) == 0 {
			if err := c.pause(ctx, roundPause((attempt+1)/len(c.cfg.Mons)-1)); err != nil {
				return wire.Reply{}, &noMonitorError{cmd.Prefix, lastErr}
			}
		}
	}
}

// Pauses between rounds of attempts at every monitor.
const (
	roundPauseMin = 50 * time.Millisecond
	roundPauseMax = time.Second
)

// roundPause is the pause after round n (0-based) of failed attempts:
// roundPauseMin doubled n times, at most roundPauseMax.
func roundPause(n int) time.Duration {
	return min(roundPauseMin<<min(n, 16), roundPauseMax)
}

// pause waits d on the client's clock, or until ctx ends (its error).
func (c *Client) pause(ctx context.Context, d time.Duration) error {
	t := c.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pick returns the monitor for an attempt: the last one that answered
// first, then the others in turn.
func (c *Client) pick(attempt int) Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Mons[(c.cur+attempt)%len(c.cfg.Mons)]
}

// answered makes mon, which answered, the first monitor to ask next.
func (c *Client) answered(mon Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range c.cfg.Mons {
		if m == mon {
			c.cur = i
		}
	}
}

// begin numbers a new command and records it as running.
func (c *Client) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.running[c.seq] = struct{}{}
	return c.seq
}

// finish records that the client no longer waits for command seq.
func (c *Client) finish(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, seq)
}

// oldestLocked is the lowest number of a running command.
func (c *Client) oldestLocked() uint64 {
	oldest := c.seq
	for s := range c.running {
		oldest = min(oldest, s)
	}
	return oldest
}

func (c *Client) try(ctx context.Context, mon Addr, cmd wire.Command, seq uint64, p *pending) (wire.Reply, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Attempt)
	defer cancel()
	c.mu.Lock()
	c.tid++
	tid := c.tid
	p.mon = mon.Name
	c.waiting[tid] = p
	oldest := c.oldestLocked()
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, tid)
		c.mu.Unlock()
	}()
	msg := wire.MonCommand{Tid: tid, Cmd: cmd, Client: c.nonce, Seq: seq, Oldest: oldest}
	peer := auth.EntityName{Type: "mon", ID: mon.Name}
	if err := c.ms.Send(actx, peer, mon.Addr, msgr.Message{Type: wire.TypeMonCommand, Version: 1, Payload: msg.Encode()}); err != nil {
		return wire.Reply{}, err
	}
	select {
	case err := <-p.fail:
		return wire.Reply{}, err
	case r := <-p.reply:
		return r, nil
	case <-actx.Done():
		return wire.Reply{}, actx.Err()
	}
}

type monDispatcher struct{ c *Client }

func (d monDispatcher) Dispatch(_ msgr.Peer, msg msgr.Message) {
	c := d.c
	c.heardFrom()
	switch msg.Type {
	case wire.TypeMonCommandReply:
		r, err := wire.DecodeMonCommandReply(msg.Payload)
		if err != nil {
			return
		}
		c.mu.Lock()
		p := c.waiting[r.Tid]
		delete(c.waiting, r.Tid)
		c.mu.Unlock()
		if p != nil {
			select {
			case p.reply <- r.Reply:
			default:
			}
		}
	case wire.TypeOSDMapUpdate:
		u, err := wire.DecodeOSDMapUpdate(msg.Payload)
		if err != nil {
			return
		}
		c.gotMaps(u)
		if c.cfg.OnOSDMap != nil {
			c.cfg.OnOSDMap(u)
		}
	}
}

// HandleEvent fails the commands waiting on a monitor whose session
// failed, so that they move on at once instead of timing out.
func (d monDispatcher) HandleEvent(ev msgr.Event) {
	if ev.Kind != msgr.EventFailed && ev.Kind != msgr.EventReset {
		return
	}
	err := ev.Err
	if err == nil {
		err = msgr.ErrSessionClosed
	}
	c := d.c
	c.subscriptionLost(ev.Peer, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.waiting {
		if ev.Peer.Type == "mon" && ev.Peer.ID == p.mon {
			select {
			case p.fail <- err:
			default:
			}
		}
	}
}

package rados

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Conn is a connection to a cluster: a session with the monitors, which
// keeps the client's OSD map current, and sessions with the OSDs its
// operations reach. It is safe for concurrent use; open one per process
// and share it.
type Conn struct {
	cfg settings
	log *slog.Logger
	mc  *monc.Client
	ms  *msgr.Messenger
	obj *objecter
}

// errNoTicket fails an OSD handshake before the monitors issued a ticket.
var errNoTicket = errors.New("rados: no osd ticket from the monitors yet")

// Connect connects to the cluster cfg names: it logs in to a monitor,
// subscribes to the OSD map and returns once it has a map, or the
// context's error.
func Connect(ctx context.Context, cfg Config) (*Conn, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	c := &Conn{cfg: s, log: s.logger.With("client", s.name.String())}
	c.obj = newObjecter(nil, c.log, s.clock, s.name.String(), randomIncarnation())
	c.obj.reads = readRouting{policy: s.readPolicy, policySet: s.readPolicySet, loc: s.location, weights: s.weights,
		rnd: rand.New(rand.NewPCG(s.Seed, c.obj.incarnation))}
	monAuth, osdAuth := c.handshakes()
	ms, err := msgr.New(msgr.Config{Name: s.name, Network: s.netw, Dispatcher: c.obj, ClientAuth: osdAuth,
		Logger: s.logger, Clock: s.clock, Seed: s.Seed, Nonce: s.Nonce, Port: s.Port})
	if err != nil {
		return nil, fmt.Errorf("rados: %w", err)
	}
	c.ms, c.obj.ms = ms, ms
	mc, err := monc.New(monc.Config{Name: s.name, Mons: s.mons, Network: s.netw, ClientAuth: monAuth,
		Attempt: s.monTimeout, OnOSDMap: c.obj.handleMap, Unreachable: unreachableHook(s.MonitorsUnreachable),
		Logger: s.logger, Clock: s.clock, Seed: s.Seed})
	if err != nil {
		ms.Close()
		return nil, fmt.Errorf("rados: %w", err)
	}
	c.mc = mc
	c.obj.requestMap = c.requestMap
	c.obj.pgState = c.pgState
	if err := mc.Subscribe(ctx, 0); err != nil {
		c.Close()
		return nil, fmt.Errorf("rados: connect: %w", err)
	}
	if err := c.obj.waitMap(ctx, func(*osdmap.Map) bool { return true }); err != nil {
		c.Close()
		if lost := mc.SubscriptionLost(); lost != nil {
			return nil, fmt.Errorf("rados: connect: no monitor answered (last: %v): %w", lost, err)
		}
		return nil, fmt.Errorf("rados: connect: no OSD map from the monitors: %w", err)
	}
	return c, nil
}

// unreachableHook adapts Config.MonitorsUnreachable to the monitor
// client's hook (nil stays nil).
func unreachableHook(f func([]string, time.Duration)) func([]monc.Addr, time.Duration) {
	if f == nil {
		return nil
	}
	return func(mons []monc.Addr, waited time.Duration) {
		addrs := make([]string, len(mons))
		for i, m := range mons {
			addrs[i] = m.Addr
		}
		f(addrs, waited)
	}
}

// ConnectConf connects as client.admin to the cluster the configuration
// file at path describes (see LoadConfig).
func ConnectConf(ctx context.Context, path string) (*Conn, error) {
	cfg, err := LoadConfig(path, "")
	if err != nil {
		return nil, err
	}
	return Connect(ctx, cfg)
}

// handshakes returns the handshakes with monitors and with OSDs: in the
// cephx mode the login asks for an osd ticket, which every new OSD
// connection presents (the monitor client renews it before it expires).
func (c *Conn) handshakes() (mon, osd func(auth.EntityName) auth.ClientHandshake) {
	s := c.cfg
	if !s.cephx {
		none := func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: s.name} }
		return none, none
	}
	mon = func(auth.EntityName) auth.ClientHandshake {
		return auth.NewMonClient(auth.MonClientConfig{Name: s.name, Secret: s.secret, Services: []string{"osd", "mds"}})
	}
	osd = func(auth.EntityName) auth.ClientHandshake {
		t, ok := c.mc.ServiceTicket("osd")
		if !ok {
			return failedHandshake{errNoTicket}
		}
		return auth.NewServiceClient(auth.ServiceClientConfig{Ticket: t, Now: s.clock.Now})
	}
	return mon, osd
}

// failedHandshake is a handshake that fails at once.
type failedHandshake struct{ err error }

func (h failedHandshake) Step([]byte) ([]byte, bool, error) { return nil, false, h.err }
func (h failedHandshake) SessionKey() []byte                { return nil }

// requestMap asks the monitors for maps from epoch start, in the
// background.
func (c *Conn) requestMap(start uint64) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.monTimeout)
		defer cancel()
		if err := c.mc.Subscribe(ctx, start); err != nil {
			c.log.Debug("rados: request map", "start", start, "err", err)
		}
	}()
}

// pgState asks the monitors for pg's state ("pg query"), for the error
// of an op that timed out; "" if they do not answer within ctx or
// refuse.
func (c *Conn) pgState(ctx context.Context, pg osdmap.PG) string {
	r, err := c.mc.Run(ctx, wire.NewCommand("pg query", "pgid", pg.String()))
	if err != nil || r.Code != 0 {
		return ""
	}
	var v struct {
		State string `json:"state"`
	}
	if json.Unmarshal(r.Data, &v) != nil {
		return ""
	}
	return v.State
}

func randomIncarnation() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:]) // never fails (crypto/rand doc)
	return binary.LittleEndian.Uint64(b[:])
}

// Close fails the operations in flight with ErrClosed and closes the
// connections.
func (c *Conn) Close() error {
	c.obj.watches.closeAll()
	c.obj.close()
	err := c.ms.Close()
	if c.mc != nil {
		err = errors.Join(err, c.mc.Close())
	}
	return err
}

// Nonce returns this client's instance nonce, new for every Conn unless
// Config.Nonce sets it. The OSDs know the client as HOST:0/NONCE (HOST:
// the address its connections come from; 0: a client listens on no port,
// unless Config.Port names one), the address that "cuttle osd blocklist
// add" fences one client instance by; HOST:0 fences every client on
// HOST.
func (c *Conn) Nonce() uint64 { return c.ms.Nonce() }

// Epoch returns the epoch of the client's newest OSD map.
func (c *Conn) Epoch() uint64 { return uint64(c.obj.currentMap().Epoch()) }

// FSID returns the cluster's fsid.
func (c *Conn) FSID() string { return c.obj.currentMap().FSID().String() }

// WaitForEpoch asks the monitors for newer maps and waits until the
// client's map reaches epoch.
func (c *Conn) WaitForEpoch(ctx context.Context, epoch uint64) error {
	if c.Epoch() < epoch {
		c.requestMap(c.Epoch() + 1)
	}
	return c.obj.waitMap(ctx, func(m *osdmap.Map) bool { return uint64(m.Epoch()) >= epoch })
}

// MonReply is a monitor's answer to a command.
type MonReply struct {
	// Status is a one-line message for people.
	Status string
	// Data is the result as a JSON document, for tools (may be empty).
	Data []byte
	// Text is the result formatted for people.
	Text string
}

// MonCommand sends a command to the monitors (its prefix, such as "osd
// pool ls", and its named arguments) and returns the reply. A refusal is
// an *OpError with the monitor's errno and status; a command no monitor
// answered in time is ErrTimedOut.
func (c *Conn) MonCommand(ctx context.Context, prefix string, args map[string]string) (MonReply, error) {
	cmd := wire.Command{Prefix: prefix, Args: args}
	if cmd.Args == nil {
		cmd.Args = map[string]string{}
	}
	r, err := c.mc.Run(ctx, cmd)
	if err != nil {
		if ctx.Err() != nil {
			return MonReply{}, fmt.Errorf("rados: %s: %w", prefix, ctxError(ctx))
		}
		return MonReply{}, fmt.Errorf("rados: %s: %w", prefix, err)
	}
	out := MonReply{Status: r.Status, Data: r.Data, Text: r.Text}
	if r.Code != 0 {
		return out, &OpError{Op: prefix, Index: -1, Errno: int(r.Code), Status: r.Status}
	}
	return out, nil
}

// opTimeout is how long an op under ctx may take before it fails:
// Config.OpTimeout if ctx has no deadline, else 0 (ctx's deadline
// decides).
func (c *Conn) opTimeout(ctx context.Context) time.Duration {
	if _, ok := ctx.Deadline(); ok {
		return 0
	}
	return c.cfg.OpTimeout
}

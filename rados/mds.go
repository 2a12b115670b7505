package rados

import (
	"fmt"
	"log/slog"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr"
)

// errNoMDSTicket fails an MDS handshake before the monitors issued a
// ticket for the mds service.
var errNoMDSTicket = fmt.Errorf("rados: no mds ticket from the monitors yet")

// MDSMessenger returns a new messenger through which a file-system
// client (package fsclient) talks to MDS daemons: named as the
// connection's entity, on its network and clock, authenticating (with
// cephx) with the connection's mds ticket, and delivering what the
// daemons send to d. The caller closes it before the connection.
func (c *Conn) MDSMessenger(d msgr.Dispatcher) (*msgr.Messenger, error) {
	s := c.cfg
	hs := func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: s.name} }
	if s.cephx {
		hs = func(auth.EntityName) auth.ClientHandshake {
			t, ok := c.mc.ServiceTicket("mds")
			if !ok {
				return failedHandshake{errNoMDSTicket}
			}
			return auth.NewServiceClient(auth.ServiceClientConfig{Ticket: t, Now: s.clock.Now})
		}
	}
	ms, err := msgr.New(msgr.Config{Name: s.name, Network: s.netw, Dispatcher: d, ClientAuth: hs,
		Logger: s.logger, Clock: s.clock, Seed: s.Seed + 1})
	if err != nil {
		return nil, fmt.Errorf("rados: mds messenger: %w", err)
	}
	return ms, nil
}

// GlobalID returns the id the monitors gave this client's login (cephx),
// which the MDS keeps its session, caps and locks under; 0 with auth
// none.
func (c *Conn) GlobalID() uint64 {
	if t, ok := c.mc.ServiceTicket("osd"); ok {
		return t.GlobalID
	}
	return 0
}

// EntityName returns the connection's entity name ("client.admin").
func (c *Conn) EntityName() string { return c.cfg.name.String() }

// Clock returns the clock the connection times with.
func (c *Conn) Clock() clock.Clock { return c.cfg.clock }

// Logger returns the connection's logger.
func (c *Conn) Logger() *slog.Logger { return c.log }

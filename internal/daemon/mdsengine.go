//go:build mdcache

package daemon

import (
	"context"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdcache"
	"github.com/cuttlestore/cuttle/internal/mds/server"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// MDSEngine opens the real MDS engine (internal/mds/mdcache) for the
// server: the seam of docs/MDS.md, with the client ids converted.
func MDSEngine() server.Opener {
	return func(ctx context.Context, oc server.OpenConfig) (server.Engine, error) {
		c, err := mdcache.Open(ctx, mdcache.Config{Meta: oc.Meta, Conn: oc.Conn, DataPool: oc.DataPool, Rank: oc.Rank,
			Incarnation: oc.Incarnation, Clock: oc.Clock, Logger: oc.Logger, Outbox: outbox{oc.Outbox}})
		if err != nil {
			return nil, err
		}
		return cacheEngine{c}, nil
	}
}

// outbox is the server's Outbox as the engine's.
type outbox struct{ o server.Outbox }

func (o outbox) SendCaps(c mdcache.ClientID, m *wire.ClientCaps) { o.o.SendCaps(server.ClientID(c), m) }
func (o outbox) SendLease(c mdcache.ClientID, m wire.ClientLease) {
	o.o.SendLease(server.ClientID(c), m)
}
func (o outbox) Fence(c mdcache.ClientID, reason string) { o.o.Fence(server.ClientID(c), reason) }

// cacheEngine is the engine as the server's Engine.
type cacheEngine struct{ c *mdcache.Cache }

func (e cacheEngine) Reconnect(c server.ClientID, m *wire.ClientReconnect) error {
	return e.c.Reconnect(mdcache.ClientID(c), m)
}
func (e cacheEngine) Resume() { e.c.Resume() }
func (e cacheEngine) Handle(ctx context.Context, c server.ClientID, req *wire.ClientRequest, reply func(*wire.ClientReply)) {
	e.c.Handle(ctx, mdcache.ClientID(c), req, reply)
}
func (e cacheEngine) HandleCaps(ctx context.Context, c server.ClientID, m *wire.ClientCaps) {
	e.c.HandleCaps(ctx, mdcache.ClientID(c), m)
}
func (e cacheEngine) SessionOpened(c server.ClientID) { e.c.SessionOpened(mdcache.ClientID(c)) }
func (e cacheEngine) SessionEnded(c server.ClientID, r locker.EndReason) {
	e.c.SessionEnded(mdcache.ClientID(c), r)
}
func (e cacheEngine) Tick(now time.Time)              { e.c.Tick(now) }
func (e cacheEngine) Close(ctx context.Context) error { return e.c.Close(ctx) }

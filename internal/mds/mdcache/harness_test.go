package mdcache

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// fsCluster is a simulated cluster with a metadata and a data pool, in
// a synctest bubble (virtual time).
type fsCluster struct {
	c      *sim.Cluster
	meta   *rados.IOContext
	data   int64
	dataIO *rados.IOContext
	inc    uint64 // the incarnation of the last Open
	opened int
	// events are the callbacks the next open gives the engine.
	events Events
	// cacheInodes is the next open's CacheInodes (0: the default).
	cacheInodes int
}

func newFS(t *testing.T, seed uint64) *fsCluster {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: seed, MinDelay: 100 * time.Microsecond, MaxDelay: time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "cephfs.meta", "pg_num", "8", "size", "3")
	c.Run("osd pool create", "pool", "cephfs.data", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	fs := &fsCluster{c: c}
	conn := c.Client("client.test")
	var err error
	if fs.meta, err = conn.OpenIOContext("cephfs.meta"); err != nil {
		t.Fatal(err)
	}
	if fs.dataIO, err = conn.OpenIOContext("cephfs.data"); err != nil {
		t.Fatal(err)
	}
	fs.data = fs.dataIO.PoolID()
	return fs
}

// open opens the rank as a new MDS (a new connection and a later
// incarnation), as a standby taking over does.
func (fs *fsCluster) open(t *testing.T, ob *outbox) *Cache {
	t.Helper()
	fs.inc++
	fs.opened++
	conn := fs.c.Client("client.mds" + string(rune('a'+fs.opened%26)))
	meta, err := conn.OpenIOContext("cephfs.meta")
	if err != nil {
		t.Fatal(err)
	}
	if ob == nil {
		ob = &outbox{autoAck: true}
	}
	c, err := Open(context.Background(), Config{Meta: meta, Conn: conn, DataPool: fs.data, Incarnation: fs.inc,
		Clock: clock.Real(), Logger: sim.Logger("mds"), Outbox: ob, JournalObjectSize: 1 << 20, Events: fs.events,
		CacheInodes: fs.cacheInodes})
	if err != nil {
		t.Fatal(err)
	}
	ob.mu.Lock()
	ob.c = c
	ob.mu.Unlock()
	return c
}

// outbox records what the engine sends, as the daemon would queue it.
// With autoAck its clients behave as well-behaved clients with nothing
// buffered: each revocation is acked at once (from a goroutine, as a
// message would arrive).
type outbox struct {
	mu      sync.Mutex
	caps    map[ClientID][]*wire.ClientCaps
	fenced  []ClientID
	leases  map[ClientID][]wire.ClientLease
	autoAck bool
	// holdLeases keeps lease revocations for the test to ack.
	holdLeases bool
	c          *Cache
}

func (o *outbox) SendCaps(client ClientID, m *wire.ClientCaps) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.autoAck && m.Op == wire.CapRevoke && o.c != nil {
		c := o.c
		ack := &wire.ClientCaps{Op: wire.CapAck, Ino: m.Ino, CapID: m.CapID, Seq: m.Seq}
		go c.HandleCaps(context.Background(), client, ack)
		return
	}
	if o.caps == nil {
		o.caps = map[ClientID][]*wire.ClientCaps{}
	}
	o.caps[client] = append(o.caps[client], m)
}

// SendLease acks a lease revocation at once (as a client does that
// finds nothing to drop), or with holdLeases records it.
func (o *outbox) SendLease(client ClientID, m wire.ClientLease) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.holdLeases && m.Op == wire.LeaseRevoke && o.c != nil {
		ack := wire.ClientLease{Op: wire.LeaseRevokeAck, Ino: m.Ino, Name: m.Name, Seq: m.Seq}
		go o.c.HandleLease(context.Background(), client, ack)
		return
	}
	if o.leases == nil {
		o.leases = map[ClientID][]wire.ClientLease{}
	}
	o.leases[client] = append(o.leases[client], m)
}

func (o *outbox) takeLeases(client ClientID) []wire.ClientLease {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.leases[client]
	delete(o.leases, client)
	return m
}

func (o *outbox) Fence(client ClientID, _ string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fenced = append(o.fenced, client)
}

func (o *outbox) take(client ClientID) []*wire.ClientCaps {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.caps[client]
	delete(o.caps, client)
	return m
}

// tclient issues requests as one client with one identity.
type tclient struct {
	c        *Cache
	id       ClientID
	uid, gid uint32
	groups   []uint32
	tid      uint64
}

// replies collects a request's replies; safe is closed at the safe one.
type replies struct {
	mu     sync.Mutex
	unsafe *wire.ClientReply
	last   *wire.ClientReply
	n      int
	safe   chan struct{}
}

// send sends req and returns its replies without waiting.
func (tc *tclient) send(req *wire.ClientRequest) *replies {
	if req.Tid == 0 {
		tc.tid++
		req.Tid = tc.tid
	}
	req.UID, req.GID, req.Groups = tc.uid, tc.gid, tc.groups
	rs := &replies{safe: make(chan struct{})}
	tc.c.Handle(context.Background(), tc.id, req, func(rep *wire.ClientReply) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rs.n++
		if !rep.Safe {
			rs.unsafe = rep
			return
		}
		rs.last = rep
		close(rs.safe)
	})
	return rs
}

// do sends req and waits for its safe reply.
func (tc *tclient) do(req *wire.ClientRequest) *wire.ClientReply {
	rs := tc.send(req)
	<-rs.safe
	return rs.last
}

func p(path string) wire.FilePath { return wire.FilePath{Ino: 1, Path: path} }

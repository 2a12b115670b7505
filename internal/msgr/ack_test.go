package msgr_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
)

// countingNet counts the writes on the connections a host accepts.
type countingNet struct {
	msgr.Network
	writes atomic.Int64
}

func (n *countingNet) Listen(addr string) (net.Listener, error) {
	l, err := n.Network.Listen(addr)
	if err != nil {
		return nil, err
	}
	return countingListener{l, n}, nil
}

type countingListener struct {
	net.Listener
	n *countingNet
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: l.n}, nil
}

type countingConn struct {
	net.Conn
	n *countingNet
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.n.writes.Add(1)
	return c.Conn.Write(b)
}

// pingPong sends n requests from client to server one at a time, each
// after the echo of the last, and returns how many writes the server's
// connection made for them (the handshake's excluded).
func pingPong(t *testing.T, client, server string, n int) int64 {
	mn := memnet.New(memnet.Config{Seed: 21})
	defer mn.Close()
	cn := &countingNet{Network: mn.Host("srv")}
	srv := newNode(t, mn, server, "srv", 1, func(c *msgr.Config) { c.Network = cn })
	defer srv.m.Close()
	srv.rec.onMsg = func(from msgr.Peer, msg msgr.Message) { from.Session.Send(context.Background(), msg) }
	cl := newNode(t, mn, client, "cl", 2, nil)
	defer cl.m.Close()
	s, err := cl.m.Connect(srv.name, "srv")
	if err != nil {
		t.Fatal(err)
	}
	cl.rec.waitEvent(t, msgr.EventConnected, 1, time.Minute)
	synctest.Wait()
	handshake := cn.writes.Load()
	for i := range n {
		if err := s.Send(t.Context(), numbered(i, 100)); err != nil {
			t.Fatal(err)
		}
		cl.rec.waitMsgs(t, srv.name, i+1, time.Minute)
	}
	synctest.Wait()
	return cn.writes.Load() - handshake
}

// A lossy session (a client's) sends no acks: a request and its answer
// cost one write each way, not two.
func TestLossySendsNoAcks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 50
		if got := pingPong(t, "client.x", "osd.1", n); got != n {
			t.Fatalf("server wrote %d times for %d requests, want %d (no ack frames)", got, n, n)
		}
	})
}

// A lossless session (between daemons) acknowledges a request on its
// answer: no bare ack frame goes out while answers follow at once.
func TestLosslessAckRidesOnTheAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 50
		// The last request's ack may go out bare after the delay; every
		// other one rides on an answer.
		if got := pingPong(t, "osd.2", "osd.1", n); got > n+1 {
			t.Fatalf("server wrote %d times for %d requests, want at most %d", got, n, n+1)
		}
	})
}

// A lossless peer that never answers still acknowledges, after the ack
// delay, so a sender whose budget is one message keeps going.
func TestLosslessDelayedAckFreesTheSender(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 22})
		defer net.Close()
		one := func(c *msgr.Config) { c.SendMessages = 1 }
		a := newNode(t, net, "osd.1", "a", 1, one)
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, nil)
		defer b.m.Close()
		s, _ := a.m.Connect(b.name, "b")
		start := time.Now()
		for i := range 5 {
			if err := s.Send(t.Context(), numbered(i, 10)); err != nil {
				t.Fatal(err)
			}
		}
		checkInOrder(t, b.rec.waitMsgs(t, a.name, 5, time.Minute), 5)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("5 messages with a budget of one took %v of virtual time", took)
		}
	})
}

// A lossy sender whose budget is one message is not held up waiting for
// acks that never come: the budget frees once a message is written.
func TestLossyBudgetFreesOnWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 23})
		defer net.Close()
		osd := newNode(t, net, "osd.1", "osd", 1, nil)
		defer osd.m.Close()
		cl := newNode(t, net, "client.x", "cl", 2, func(c *msgr.Config) { c.SendMessages = 1 })
		defer cl.m.Close()
		s, _ := cl.m.Connect(osd.name, "osd")
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range 20 {
				if err := s.Send(t.Context(), numbered(i, 10)); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Wait()
		checkInOrder(t, osd.rec.waitMsgs(t, cl.name, 20, time.Minute), 20)
	})
}

// Done runs once per accepted message: after the write on a lossy session,
// after the peer's acknowledgement on a lossless one, and for messages
// still queued when the session closes.
func TestDoneOncePerMessage(t *testing.T) {
	for _, tc := range []struct{ client, server string }{{"client.x", "osd.1"}, {"osd.2", "osd.1"}} {
		t.Run(tc.client, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mn := memnet.New(memnet.Config{Seed: 23})
				defer mn.Close()
				srv := newNode(t, mn, tc.server, "srv", 1, nil)
				defer srv.m.Close()
				cl := newNode(t, mn, tc.client, "cl", 2, nil)
				s, err := cl.m.Connect(srv.name, "srv")
				if err != nil {
					t.Fatal(err)
				}
				cl.rec.waitEvent(t, msgr.EventConnected, 1, time.Minute)
				const n = 20
				var done [n]atomic.Int32
				for i := range n {
					msg := numbered(i, 100<<10) // large: written from the caller's slice
					msg.Done = func() { done[i].Add(1) }
					if err := s.Send(t.Context(), msg); err != nil {
						t.Fatal(err)
					}
				}
				srv.rec.waitMsgs(t, cl.name, n, time.Minute)
				time.Sleep(time.Second) // virtual: past the ack delay
				synctest.Wait()
				for i := range n {
					if got := done[i].Load(); got != 1 {
						t.Fatalf("message %d: Done ran %d times once delivered, want 1", i, got)
					}
				}
				// Queued behind a closed connection: dropped at close.
				srv.m.Close()
				synctest.Wait()
				var late atomic.Int32
				msg := numbered(n, 10)
				msg.Done = func() { late.Add(1) }
				if err := s.Send(t.Context(), msg); err == nil {
					cl.m.Close()
					synctest.Wait()
					if got := late.Load(); got != 1 {
						t.Fatalf("message sent to a closed peer: Done ran %d times after close, want 1", got)
					}
				} else {
					cl.m.Close()
				}
			})
		})
	}
}

// gatedNet holds the writes of the connections a host dials once closed
// is set, until open is called: a peer that stops reading, as far as the
// writer can tell.
type gatedNet struct {
	msgr.Network
	mu     sync.Mutex
	closed bool
	gate   chan struct{}
}

func (n *gatedNet) Dial(ctx context.Context, addr string) (net.Conn, error) {
	c, err := n.Network.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, n: n}, nil
}

func (n *gatedNet) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed, n.gate = true, make(chan struct{})
}

func (n *gatedNet) open() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = false
	close(n.gate)
}

type gatedConn struct {
	net.Conn
	n *gatedNet
}

func (c *gatedConn) Write(b []byte) (int, error) {
	c.n.mu.Lock()
	closed, gate := c.n.closed, c.n.gate
	c.n.mu.Unlock()
	if closed {
		<-gate
	}
	return c.Conn.Write(b)
}

// Done does not run while the message is still being written: the
// sender's buffers stay untouched until the bytes are out (a reader's
// buffer reused too soon would send another object's bytes).
func TestDoneWaitsForTheWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mn := memnet.New(memnet.Config{Seed: 24})
		defer mn.Close()
		srv := newNode(t, mn, "osd.1", "srv", 1, nil)
		defer srv.m.Close()
		gn := &gatedNet{Network: mn.Host("cl")}
		cl := newNode(t, mn, "client.x", "cl", 2, func(c *msgr.Config) { c.Network = gn })
		defer cl.m.Close()
		s, err := cl.m.Connect(srv.name, "srv")
		if err != nil {
			t.Fatal(err)
		}
		cl.rec.waitEvent(t, msgr.EventConnected, 1, time.Minute)
		synctest.Wait()
		gn.close()
		var done atomic.Int32
		msg := numbered(1, 100<<10)
		msg.Done = func() { done.Add(1) }
		if err := s.Send(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := done.Load(); got != 0 {
			t.Fatalf("Done ran %d times while the write was held", got)
		}
		gn.open()
		srv.rec.waitMsgs(t, cl.name, 1, time.Minute)
		synctest.Wait()
		if got := done.Load(); got != 1 {
			t.Fatalf("Done ran %d times once written, want 1", got)
		}
	})
}

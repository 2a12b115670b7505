package msgr_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
)

// Lossless sessions deliver every message exactly once and in order,
// both ways, while the network breaks connections at random.
func TestLosslessExactlyOnceAcrossBreaks(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { losslessUnderDrops(t, seed) })
		})
	}
}

func losslessUnderDrops(t *testing.T, seed uint64) {
	const n = 2000
	net := memnet.New(memnet.Config{Seed: seed, DropRate: 0.03, MaxDelay: 3 * time.Millisecond})
	defer net.Close()
	fast := func(c *msgr.Config) { c.BackoffMin, c.BackoffMax = 10*time.Millisecond, 100*time.Millisecond }
	a := newNode(t, net, "osd.1", "a", seed, fast)
	defer a.m.Close()
	b := newNode(t, net, "osd.2", "b", seed+100, fast)
	defer b.m.Close()
	// b echoes every message back on the session it came in on.
	b.rec.onMsg = func(from msgr.Peer, msg msgr.Message) {
		if err := from.Session.Send(context.Background(), msg); err != nil {
			t.Errorf("echo: %v", err)
		}
	}
	s, err := a.m.Connect(b.name, "b")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		size := 64
		if i%50 == 0 {
			size = 40 << 10 // over the batching threshold: written by reference
		}
		if err := s.Send(t.Context(), numbered(i, size)); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 {
			time.Sleep(time.Millisecond) // pace the load so it spans many writes
		}
	}
	checkInOrder(t, b.rec.waitMsgs(t, a.name, n, time.Hour), n)
	checkInOrder(t, a.rec.waitMsgs(t, b.name, n, time.Hour), n)
	c := a.rec.countEvents(msgr.EventConnected)
	t.Logf("%d connections", c)
	if c < 5 {
		t.Errorf("only %d connections over the run: the drops did not exercise reconnects", c)
	}
	if r := a.rec.countEvents(msgr.EventReset) + b.rec.countEvents(msgr.EventReset); r != 0 {
		t.Errorf("%d resets without a restart", r)
	}
}

// A lossy session fails on the first fault, with its pending messages;
// the client opens a new one.
func TestLossyFailsOnFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 3})
		defer net.Close()
		osd := newNode(t, net, "osd.1", "osd", 1, nil)
		defer osd.m.Close()
		cl := newNode(t, net, "client.admin", "cl", 2, nil)
		defer cl.m.Close()

		s, err := cl.m.Connect(osd.name, "osd")
		if err != nil {
			t.Fatal(err)
		}
		if s.Policy() != msgr.Lossy {
			t.Fatalf("client session policy %v, want lossy", s.Policy())
		}
		for i := range 5 {
			if err := s.Send(t.Context(), numbered(i, 10)); err != nil {
				t.Fatal(err)
			}
		}
		checkInOrder(t, osd.rec.waitMsgs(t, cl.name, 5, time.Minute), 5)

		net.Partition("cl", "osd")
		ev := cl.rec.waitEvent(t, msgr.EventFailed, 1, time.Minute)
		if ev.Session != s || !errors.Is(ev.Err, msgr.ErrSessionClosed) {
			t.Fatalf("client event %+v, want the session failed", ev)
		}
		osd.rec.waitEvent(t, msgr.EventFailed, 1, time.Minute)
		if err := s.Send(t.Context(), numbered(5, 10)); !errors.Is(err, msgr.ErrSessionClosed) {
			t.Fatalf("Send on a failed lossy session: %v, want ErrSessionClosed", err)
		}
		<-s.Done()

		// The client reconnects itself, on a new session.
		net.Heal()
		s2, err := cl.m.Connect(osd.name, "osd")
		if err != nil {
			t.Fatal(err)
		}
		if s2 == s {
			t.Fatal("Connect returned the failed session")
		}
		if err := s2.Send(t.Context(), numbered(100, 10)); err != nil {
			t.Fatal(err)
		}
		got := osd.rec.waitMsgs(t, cl.name, 6, time.Minute)
		if number(got[5]) != 100 {
			t.Fatalf("after reconnect got message %d, want 100", number(got[5]))
		}
	})
}

// Pending messages of a lossy session that faults are reported dropped,
// not retransmitted.
func TestLossyDropsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 4})
		defer net.Close()
		osd := newNode(t, net, "osd.1", "osd", 1, nil)
		defer osd.m.Close()
		cl := newNode(t, net, "client.x", "cl", 2, nil)
		defer cl.m.Close()
		s, _ := cl.m.Connect(osd.name, "osd")
		cl.rec.waitEvent(t, msgr.EventConnected, 1, time.Minute)
		synctest.Wait()
		net.Partition("cl", "osd") // connection broken before the sends below
		for i := range 3 {
			if err := s.Send(t.Context(), numbered(i, 10)); err != nil && !errors.Is(err, msgr.ErrSessionClosed) {
				t.Fatal(err)
			}
		}
		ev := cl.rec.waitEvent(t, msgr.EventFailed, 1, time.Minute)
		synctest.Wait()
		osd.rec.mu.Lock()
		got := len(osd.rec.msgs[cl.name])
		osd.rec.mu.Unlock()
		if got != 0 {
			t.Fatalf("osd got %d messages sent after the partition", got)
		}
		if ev.Dropped > 3 {
			t.Fatalf("dropped %d, sent 3", ev.Dropped)
		}
	})
}

// A peer that restarts (a new process, so a new nonce) resets the
// session: what was queued for the old incarnation is dropped and the
// application told; later messages reach the new one.
func TestPeerRestartResetsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 5})
		defer net.Close()
		fast := func(c *msgr.Config) { c.BackoffMin, c.BackoffMax = 10*time.Millisecond, 50*time.Millisecond }
		a := newNode(t, net, "osd.1", "a", 1, fast)
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, fast)
		s, _ := a.m.Connect(b.name, "b")
		for i := range 3 {
			s.Send(t.Context(), numbered(i, 10))
		}
		checkInOrder(t, b.rec.waitMsgs(t, a.name, 3, time.Minute), 3)
		time.Sleep(time.Second) // virtual: b's delayed ack goes out
		synctest.Wait()         // and reaches a

		// b dies while a keeps sending; the messages queue.
		b.m.Close()
		for i := 3; i < 8; i++ {
			if err := s.Send(t.Context(), numbered(i, 10)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		b2 := newNode(t, net, "osd.2", "b", 3, fast) // restarted: new nonce
		defer b2.m.Close()

		ev := a.rec.waitEvent(t, msgr.EventReset, 1, time.Minute)
		if ev.Session != s || ev.Dropped != 5 || !errors.Is(ev.Err, msgr.ErrPeerReset) {
			t.Fatalf("reset event %+v, want 5 dropped on the session", ev)
		}
		if err := s.Send(t.Context(), numbered(0, 10)); err != nil {
			t.Fatal(err)
		}
		checkInOrder(t, b2.rec.waitMsgs(t, a.name, 1, time.Minute), 1)
	})
}

// A peer that restarts after replying on the session (so the dialer has
// received from it) still resets it: the new incarnation ignores the
// count of what the old one sent, instead of refusing every reconnect.
func TestPeerRestartAfterRepliesResetsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 8})
		defer net.Close()
		fast := func(c *msgr.Config) { c.BackoffMin, c.BackoffMax = 10*time.Millisecond, 50*time.Millisecond }
		a := newNode(t, net, "osd.1", "a", 1, fast)
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, fast)
		s, _ := a.m.Connect(b.name, "b")
		s.Send(t.Context(), numbered(0, 10))
		b.rec.waitMsgs(t, a.name, 1, time.Minute)
		b.rec.mu.Lock()
		back := b.rec.peers[a.name].Session
		b.rec.mu.Unlock()
		for i := range 4 {
			if err := back.Send(t.Context(), numbered(i, 10)); err != nil {
				t.Fatal(err)
			}
		}
		a.rec.waitMsgs(t, b.name, 4, time.Minute)
		synctest.Wait()

		b.m.Close()
		synctest.Wait()
		b2 := newNode(t, net, "osd.2", "b", 3, fast) // restarted: new nonce
		defer b2.m.Close()
		ev := a.rec.waitEvent(t, msgr.EventReset, 1, time.Minute)
		if ev.Session != s || !errors.Is(ev.Err, msgr.ErrPeerReset) {
			t.Fatalf("reset event %+v, want a reset of the session", ev)
		}
		if err := s.Send(t.Context(), numbered(0, 10)); err != nil {
			t.Fatal(err)
		}
		checkInOrder(t, b2.rec.waitMsgs(t, a.name, 1, time.Minute), 1)
	})
}

// MarkDown closes the sessions to a peer; the next Send opens a new one,
// which the peer takes as a new session.
func TestMarkDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 9})
		defer net.Close()
		a := newNode(t, net, "osd.1", "a", 1, nil)
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, nil)
		defer b.m.Close()
		s, _ := a.m.Connect(b.name, "b")
		s.Send(t.Context(), numbered(0, 10))
		b.rec.waitMsgs(t, a.name, 1, time.Minute)
		a.m.MarkDown(b.name)
		<-s.Done()
		if !errors.Is(s.Err(), msgr.ErrSessionClosed) {
			t.Fatalf("session after MarkDown: %v", s.Err())
		}
		s2, _ := a.m.Connect(b.name, "b")
		if s2 == s {
			t.Fatal("Connect after MarkDown returned the closed session")
		}
		if err := s2.Send(t.Context(), numbered(0, 10)); err != nil {
			t.Fatal(err)
		}
		got := b.rec.waitMsgs(t, a.name, 2, time.Minute)
		checkInOrder(t, got[1:], 1)
	})
}

// The accepting side sees the connecting peer restart: the old session
// resets (its queued replies dropped) and a new one starts.
func TestConnectorRestartResetsAcceptedSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 6})
		defer net.Close()
		a := newNode(t, net, "osd.1", "a", 1, nil)
		b := newNode(t, net, "osd.2", "b", 2, nil)
		defer b.m.Close()
		a.m.Send(t.Context(), b.name, "b", numbered(0, 10))
		b.rec.waitMsgs(t, a.name, 1, time.Minute)
		b.rec.mu.Lock()
		old := b.rec.peers[a.name].Session
		b.rec.mu.Unlock()
		a.m.Close()
		synctest.Wait()
		// b replies into the session while a is down: kept for a resume.
		if err := old.Send(t.Context(), numbered(1, 10)); err != nil {
			t.Fatal(err)
		}

		a2 := newNode(t, net, "osd.1", "a", 3, nil)
		defer a2.m.Close()
		a2.m.Send(t.Context(), b.name, "b", numbered(0, 10))
		ev := b.rec.waitEvent(t, msgr.EventReset, 1, time.Minute)
		if ev.Session != old || ev.Dropped != 1 {
			t.Fatalf("reset event %+v, want the old session with 1 dropped", ev)
		}
		got := b.rec.waitMsgs(t, a.name, 2, time.Minute)
		checkInOrder(t, got[1:], 1)
		if err := old.Send(t.Context(), numbered(2, 10)); !errors.Is(err, msgr.ErrPeerReset) {
			t.Fatalf("Send on the reset session: %v, want ErrPeerReset", err)
		}
	})
}

// Messages sent during a partition are delivered, once and in order,
// after it heals; the connector retried with growing backoff meanwhile.
func TestPartitionHeal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 7})
		defer net.Close()
		a := newNode(t, net, "osd.1", "a", 1, nil)
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, nil)
		defer b.m.Close()
		s, _ := a.m.Connect(b.name, "b")
		for i := range 10 {
			s.Send(t.Context(), numbered(i, 10))
		}
		b.rec.waitMsgs(t, a.name, 10, time.Minute)
		net.Partition("a", "b")
		for i := 10; i < 30; i++ {
			s.Send(t.Context(), numbered(i, 10))
		}
		time.Sleep(time.Minute) // virtual: a minute of failed reconnects
		synctest.Wait()
		b.rec.mu.Lock()
		during := len(b.rec.msgs[a.name])
		b.rec.mu.Unlock()
		if during != 10 {
			t.Fatalf("%d messages crossed the partition", during-10)
		}
		start := time.Now()
		net.Heal()
		checkInOrder(t, b.rec.waitMsgs(t, a.name, 30, time.Minute), 30)
		// Backoff reached its 15 s cap during the minute, so the heal is
		// noticed within one capped period.
		if d := time.Since(start); d > 15*time.Second {
			t.Fatalf("delivery took %v after the heal, more than BackoffMax", d)
		}
	})
}

// Send blocks while the session's in-flight budget is used up and
// resumes when acks free it; ctx bounds the wait. TrySend refuses
// instead of waiting.
func TestSendThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 8})
		defer net.Close()
		a := newNode(t, net, "osd.1", "a", 1, func(c *msgr.Config) { c.SendMessages = 4 })
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, nil)
		defer b.m.Close()
		net.Partition("a", "b") // nothing is acknowledged
		s, _ := a.m.Connect(b.name, "b")
		for i := range 4 {
			if err := s.Send(t.Context(), numbered(i, 10)); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := s.TrySend(numbered(4, 10)); ok || err != nil {
			t.Fatalf("TrySend with the budget used up: %v, %v; want false, nil", ok, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := s.Send(ctx, numbered(4, 10)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("fifth Send: %v, want it to block until the deadline", err)
		}
		done := make(chan error)
		go func() { done <- s.Send(t.Context(), numbered(4, 10)) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Send returned %v with the budget used up", err)
		default:
		}
		net.Heal()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		checkInOrder(t, b.rec.waitMsgs(t, a.name, 5, time.Minute), 5)
		time.Sleep(10 * time.Millisecond) // virtual time: the delayed ack goes out
		synctest.Wait()
		if ok, err := s.TrySend(numbered(5, 10)); !ok || err != nil {
			t.Fatalf("TrySend once acked: %v, %v", ok, err)
		}
		checkInOrder(t, b.rec.waitMsgs(t, a.name, 6, time.Minute), 6)
	})
}

// A slow Dispatcher holds the receiver's dispatch budget; the connection
// stops reading, acks stop, and the sender blocks. Releasing the
// Dispatcher lets everything through.
func TestDispatchThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 9})
		defer net.Close()
		const sendBudget, dispatchBudget = 5, 3
		a := newNode(t, net, "osd.1", "a", 1, func(c *msgr.Config) { c.SendMessages = sendBudget })
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, func(c *msgr.Config) { c.DispatchMessages = dispatchBudget })
		defer b.m.Close()
		gate := make(chan struct{})
		b.rec.onMsg = func(msgr.Peer, msgr.Message) { <-gate }

		s, _ := a.m.Connect(b.name, "b")
		var sent atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 20 {
				if err := s.Send(t.Context(), numbered(i, 10)); err != nil {
					t.Error(err)
					return
				}
				sent.Add(1)
			}
		}()
		synctest.Wait()
		// b accepted dispatchBudget messages (one in Dispatch) and acked
		// them; a has sendBudget more in flight.
		if got := sent.Load(); got != dispatchBudget+sendBudget {
			t.Fatalf("sender got %d messages out, want %d", got, dispatchBudget+sendBudget)
		}
		close(gate)
		<-done
		checkInOrder(t, b.rec.waitMsgs(t, a.name, 20, time.Minute), 20)
	})
}

// refuser is a ServerHandshake that refuses everyone.
type refuser struct{}

func (refuser) Step([]byte) ([]byte, bool, error) {
	return nil, false, fmt.Errorf("%w: no key for this entity", auth.ErrDenied)
}
func (refuser) Peer() auth.EntityName { return auth.EntityName{} }
func (refuser) Caps() auth.Caps       { return nil }
func (refuser) SessionKey() []byte    { return nil }

// A refused handshake closes the connection and fails the session with
// an error that carries the server's reason.
func TestHandshakeRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 10})
		defer net.Close()
		srv := newNode(t, net, "osd.1", "srv", 1, func(c *msgr.Config) {
			c.ServerAuth = func() auth.ServerHandshake { return refuser{} }
		})
		defer srv.m.Close()
		cl := newNode(t, net, "osd.2", "cl", 2, nil)
		defer cl.m.Close()
		// Queue the message before the handshake can run: on a busy
		// machine the refusal could otherwise close the session before
		// Send, which then drops nothing.
		net.Partition("cl", "srv")
		s, _ := cl.m.Connect(srv.name, "srv")
		if err := s.Send(t.Context(), numbered(0, 10)); err != nil {
			t.Fatal(err)
		}
		net.Heal()
		ev := cl.rec.waitEvent(t, msgr.EventFailed, 1, time.Minute)
		if !errors.Is(ev.Err, msgr.ErrRefused) || !strings.Contains(ev.Err.Error(), "no key for this entity") {
			t.Fatalf("failure %v, want ErrRefused naming the reason", ev.Err)
		}
		if ev.Dropped != 1 {
			t.Fatalf("dropped %d, want 1", ev.Dropped)
		}
		if srv.rec.countEvents(msgr.EventConnected) != 0 {
			t.Fatal("the refusing side reports a connected session")
		}
	})
}

// Dialing an address where another entity listens fails the session
// with ErrWrongPeer (connector side) or a refusal.
func TestWrongPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 11})
		defer net.Close()
		srv := newNode(t, net, "osd.1", "srv", 1, nil)
		defer srv.m.Close()
		cl := newNode(t, net, "osd.2", "cl", 2, nil)
		defer cl.m.Close()
		cl.m.Connect(name("osd.9"), "srv")
		ev := cl.rec.waitEvent(t, msgr.EventFailed, 1, time.Minute)
		if !errors.Is(ev.Err, msgr.ErrRefused) || !strings.Contains(ev.Err.Error(), "osd.9") {
			t.Fatalf("failure %v, want a refusal naming osd.9", ev.Err)
		}
	})
}

// keyed is a handshake pair that agrees on a session key, so frames are
// signed; the server grants caps naming the client.
type keyedClient struct {
	name auth.EntityName
	key  []byte
}

func (c *keyedClient) Step(in []byte) ([]byte, bool, error) {
	if in == nil {
		return []byte(c.name.String()), false, nil
	}
	return nil, true, nil
}
func (c *keyedClient) SessionKey() []byte { return c.key }

type keyedServer struct {
	key  []byte
	peer auth.EntityName
}

func (s *keyedServer) Step(in []byte) ([]byte, bool, error) {
	n, err := auth.ParseEntityName(string(in))
	s.peer = n
	return []byte("ok"), true, err
}
func (s *keyedServer) Peer() auth.EntityName { return s.peer }
func (s *keyedServer) Caps() auth.Caps       { return auth.Caps{"osd": "allow r " + s.peer.String()} }
func (s *keyedServer) SessionKey() []byte    { return s.key }

func keyed(self string, key []byte) func(*msgr.Config) {
	return func(c *msgr.Config) {
		c.ClientAuth = func(auth.EntityName) auth.ClientHandshake { return &keyedClient{name(self), key} }
		c.ServerAuth = func() auth.ServerHandshake { return &keyedServer{key: key} }
	}
}

// Signed sessions deliver with the caps auth granted; a key mismatch
// (the two sides disagree) is caught by the first signature.
func TestSignedSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 12})
		defer net.Close()
		a := newNode(t, net, "osd.1", "a", 1, keyed("osd.1", []byte("key-one")))
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, keyed("osd.2", []byte("key-one")))
		defer b.m.Close()
		for i := range 20 {
			a.m.Send(t.Context(), b.name, "b", numbered(i, 100+i*1000))
		}
		checkInOrder(t, b.rec.waitMsgs(t, a.name, 20, time.Minute), 20)
		b.rec.mu.Lock()
		caps := b.rec.peers[a.name].Caps
		b.rec.mu.Unlock()
		if caps["osd"] != "allow r osd.1" {
			t.Fatalf("caps %v, want those auth granted", caps)
		}

		c := newNode(t, net, "osd.3", "c", 3, keyed("osd.3", []byte("key-two")))
		defer c.m.Close()
		c.m.Send(t.Context(), b.name, "b", numbered(0, 10))
		time.Sleep(time.Second)
		synctest.Wait()
		b.rec.mu.Lock()
		got := len(b.rec.msgs[c.name])
		b.rec.mu.Unlock()
		if got != 0 {
			t.Fatalf("%d messages passed with mismatched keys", got)
		}
		if !strings.Contains(b.logs.String(), "bad frame signature") {
			t.Fatalf("b did not log the bad signature; its log:\n%s", b.logs.String())
		}
	})
}

// Two processes running as one client entity (an application and a
// `cuttle` command, both client.admin) keep a session each at the
// acceptor: the second does not reset the first's, as it would for a
// restarted daemon.
func TestSameClientNameTwoProcesses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 10})
		defer net.Close()
		osd := newNode(t, net, "osd.1", "o", 1, nil)
		defer osd.m.Close()
		c1 := newNode(t, net, "client.admin", "c1", 2, func(c *msgr.Config) { c.Nonce = 101 })
		defer c1.m.Close()
		c2 := newNode(t, net, "client.admin", "c2", 3, func(c *msgr.Config) { c.Nonce = 102 })
		defer c2.m.Close()
		s1, _ := c1.m.Connect(osd.name, "o")
		if err := s1.Send(t.Context(), numbered(0, 10)); err != nil {
			t.Fatal(err)
		}
		osd.rec.waitMsgs(t, c1.name, 1, time.Minute)
		s2, _ := c2.m.Connect(osd.name, "o")
		if err := s2.Send(t.Context(), numbered(0, 10)); err != nil {
			t.Fatal(err)
		}
		osd.rec.waitMsgs(t, c1.name, 2, time.Minute)
		synctest.Wait()
		if err := s1.Send(t.Context(), numbered(1, 10)); err != nil {
			t.Fatalf("the first process's session after the second connected: %v", err)
		}
		osd.rec.waitMsgs(t, c1.name, 3, time.Minute)
		for _, kind := range []msgr.EventKind{msgr.EventReset, msgr.EventFailed} {
			if ev, ok := c1.rec.lastEvent(kind); ok {
				t.Fatalf("the first process saw %v: %+v", kind, ev)
			}
			if ev, ok := osd.rec.lastEvent(kind); ok {
				t.Fatalf("the acceptor saw %v: %+v", kind, ev)
			}
		}
	})
}

// A peer whose process dies with a session connected is found gone at the
// first redial, within the first backoff: the dial is refused, and the
// application hears EventDialRefused (the session keeps trying). A peer
// cut off by a partition is only silent: no refusal.
func TestDialRefusedWhenPeerDies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 9})
		defer net.Close()
		a := newNode(t, net, "osd.1", "a", 1, nil)
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, nil)
		c := newNode(t, net, "osd.3", "c", 3, nil)
		defer c.m.Close()
		for _, peer := range []*node{b, c} {
			s, _ := a.m.Connect(peer.name, peer.addr)
			s.Send(t.Context(), numbered(0, 10))
			peer.rec.waitMsgs(t, a.name, 1, time.Minute)
		}
		net.Partition("a", "c")
		start := time.Now()
		b.m.Close()
		ev := a.rec.waitEvent(t, msgr.EventDialRefused, 1, time.Minute)
		if took := time.Since(start); took > 200*time.Millisecond { // BackoffMin
			t.Errorf("refusal seen after %v, want within the first backoff", took)
		}
		if ev.Peer != b.name || ev.Addr != "b" || !msgr.ConnRefused(ev.Err) {
			t.Fatalf("event %+v, want a refusal of osd.2 at b", ev)
		}
		time.Sleep(time.Minute) // virtual: a minute of redials
		synctest.Wait()
		a.rec.mu.Lock()
		events := slices.Clone(a.rec.events)
		a.rec.mu.Unlock()
		for _, ev := range events {
			if ev.Kind == msgr.EventDialRefused && ev.Peer != b.name {
				t.Fatalf("a refusal from %s, cut off by a partition: %+v", ev.Peer, ev)
			}
		}
		if n := a.rec.countEvents(msgr.EventDialRefused); n < 3 {
			t.Errorf("%d refusals in a minute of redials, want one per redial", n)
		}
	})
}

package msgr_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
)

// corruptNet wraps a Network so that the first write of at least minLen
// bytes on a dialed connection arrives with its last byte flipped, as
// from a faulty link. The sender's buffer is left intact, so a
// retransmission is clean.
type corruptNet struct {
	msgr.Network
	minLen int

	mu   sync.Mutex
	done bool
}

func (n *corruptNet) Dial(ctx context.Context, addr string) (net.Conn, error) {
	c, err := n.Network.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &corruptConn{Conn: c, n: n}, nil
}

// take reports whether a write of size bytes is the one to corrupt.
func (n *corruptNet) take(size int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done || size < n.minLen {
		return false
	}
	n.done = true
	return true
}

type corruptConn struct {
	net.Conn
	n *corruptNet
}

func (c *corruptConn) Write(b []byte) (int, error) {
	if !c.n.take(len(b)) {
		return c.Conn.Write(b)
	}
	bad := bytes.Clone(b)
	bad[len(bad)-1] ^= 0x10
	return c.Conn.Write(bad)
}

// A large payload corrupted on the wire fails its crc32c at the
// receiver, which closes the connection with the reason logged and
// delivers nothing of it; the lossless session reconnects and
// retransmits, and every message arrives once, in order, intact. The
// receiver's dispatch budget is a few messages, so budget leaked by the
// frames dropped with the connection would stall the rest.
func TestCorruptPayloadRetransmitted(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprint("signed=", signed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { corruptPayloadRetransmitted(t, signed) })
		})
	}
}

func corruptPayloadRetransmitted(t *testing.T, signed bool) {
	const n, large = 30, 2 << 20
	mn := memnet.New(memnet.Config{Seed: 13})
	defer mn.Close()
	tweak := func(self string, f func(*msgr.Config)) func(*msgr.Config) {
		return func(c *msgr.Config) {
			if signed {
				keyed(self, []byte("corrupt-key"))(c)
			}
			if f != nil {
				f(c)
			}
		}
	}
	a := newNode(t, mn, "osd.1", "a", 1, tweak("osd.1", func(c *msgr.Config) {
		c.Network = &corruptNet{Network: c.Network, minLen: large}
		c.BackoffMin, c.BackoffMax = 10*time.Millisecond, 100*time.Millisecond
	}))
	defer a.m.Close()
	b := newNode(t, mn, "osd.2", "b", 2, tweak("osd.2", func(c *msgr.Config) {
		c.DispatchMessages, c.DispatchBytes = 3, 3*large
	}))
	defer b.m.Close()

	s, err := a.m.Connect(b.name, "b")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		size := 100
		if i%3 == 1 {
			size = large
		}
		if err := s.Send(t.Context(), numbered(i, size)); err != nil {
			t.Fatal(err)
		}
	}
	msgs := b.rec.waitMsgs(t, a.name, n, time.Hour)
	checkInOrder(t, msgs, n)
	for _, m := range msgs {
		if i := slices.IndexFunc(m.Payload[8:], func(c byte) bool { return c != 0 }); i >= 0 {
			t.Fatalf("message %d delivered corrupt at byte %d", number(m), 8+i)
		}
	}
	b.logs.waitFor(t, "payload crc32c", time.Minute)
	if c := a.rec.countEvents(msgr.EventConnected); c < 2 {
		t.Errorf("%d connections: the corruption did not force a reconnect", c)
	}
	if r := a.rec.countEvents(msgr.EventReset) + b.rec.countEvents(msgr.EventReset); r != 0 {
		t.Errorf("%d resets without a restart", r)
	}
}

package memnet

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func pair(t *testing.T, n *Network) (client, server net.Conn) {
	t.Helper()
	ln, err := n.Host("b").Listen("b")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c, err := n.Host("a").Dial(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// Bytes arrive in order, after the configured delay, and Close gives the
// peer EOF once it has read everything.
func TestDelayOrderEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{Seed: 1, MinDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond})
		defer n.Close()
		c, s := pair(t, n)
		start := time.Now()
		for i := range 100 {
			if _, err := c.Write([]byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
		got, err := io.ReadAll(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range got {
			if int(b) != i {
				t.Fatalf("byte %d is %d: reordered", i, b)
			}
		}
		if len(got) != 100 {
			t.Fatalf("read %d bytes, want 100", len(got))
		}
		if d := time.Since(start); d < 10*time.Millisecond || d > 50*time.Millisecond {
			t.Fatalf("delivery took %v, outside the configured delays", d)
		}
		if _, err := s.Write([]byte("x")); err == nil {
			t.Fatal("write to a closed peer succeeded")
		}
	})
}

// A drop breaks both ends; the same seed drops at the same Write.
func TestDropsAreSeeded(t *testing.T) {
	firstDrop := func() int {
		var at int
		synctest.Test(t, func(t *testing.T) {
			n := New(Config{Seed: 42, DropRate: 0.1})
			defer n.Close()
			c, s := pair(t, n)
			go io.Copy(io.Discard, s)
			for i := range 1000 {
				if _, err := c.Write([]byte("x")); err != nil {
					if !errors.Is(err, ErrBroken) {
						t.Fatalf("drop error %v", err)
					}
					if _, err := s.Read(make([]byte, 1)); !errors.Is(err, ErrBroken) {
						t.Fatalf("peer read after a drop: %v", err)
					}
					at = i
					return
				}
			}
			t.Fatal("no drop in 1000 writes at rate 0.1")
		})
		return at
	}
	if a, b := firstDrop(), firstDrop(); a != b {
		t.Fatalf("same seed dropped at write %d and %d", a, b)
	}
}

// A partition breaks live connections and refuses dials until Heal.
func TestPartitionHeal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{})
		defer n.Close()
		c, s := pair(t, n)
		n.Partition("a", "b")
		if _, err := c.Write([]byte("x")); !errors.Is(err, ErrBroken) {
			t.Fatalf("write across a partition: %v", err)
		}
		if _, err := s.Read(make([]byte, 1)); !errors.Is(err, ErrBroken) {
			t.Fatalf("read across a partition: %v", err)
		}
		if _, err := n.Host("a").Dial(context.Background(), "b"); !errors.Is(err, ErrPartitioned) {
			t.Fatalf("dial across a partition: %v", err)
		}
		if _, err := n.Host("c").Dial(context.Background(), "b"); err != nil {
			t.Fatalf("dial from an unpartitioned host: %v", err)
		}
		n.Heal()
		if _, err := n.Host("a").Dial(context.Background(), "b"); err != nil {
			t.Fatalf("dial after Heal: %v", err)
		}
		if _, err := n.Host("a").Dial(context.Background(), "nowhere"); !errors.Is(err, ErrRefused) {
			t.Fatalf("dial to no listener: %v", err)
		}
	})
}

// Writes block when the buffer is full; deadlines end blocked reads and
// writes.
func TestBackpressureAndDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{BufferSize: 10})
		defer n.Close()
		c, s := pair(t, n)
		c.SetWriteDeadline(time.Now().Add(time.Second))
		k, err := c.Write(make([]byte, 25))
		if k != 10 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write into a full buffer: %d, %v; want 10 bytes and a deadline error", k, err)
		}
		c.SetWriteDeadline(time.Time{})
		done := make(chan error)
		go func() { _, err := c.Write(make([]byte, 5)); done <- err }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("write into a full buffer did not block")
		default:
		}
		io.ReadFull(s, make([]byte, 10))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		s.SetReadDeadline(time.Now().Add(time.Second))
		io.ReadFull(s, make([]byte, 5))
		if _, err := s.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read past the deadline: %v", err)
		}
	})
}

// Close breaks everything, so blocked goroutines return and the bubble
// ends.
func TestCloseUnblocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{})
		c, _ := pair(t, n)
		ln, _ := n.Host("x").Listen("x")
		errs := make(chan error, 2)
		go func() { _, err := c.Read(make([]byte, 1)); errs <- err }()
		go func() { _, err := ln.Accept(); errs <- err }()
		synctest.Wait()
		n.Close()
		for range 2 {
			if err := <-errs; err == nil {
				t.Fatal("blocked call returned no error after Close")
			}
		}
		if _, err := n.Host("a").Listen("y"); err == nil {
			t.Fatal("Listen on a closed network succeeded")
		}
	})
}

// A dial to nothing is refused with ECONNREFUSED, as on TCP; a refusing
// link resets its connections and refuses dials both ways, and only
// between its two hosts, until Heal.
func TestRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{})
		defer n.Close()
		if _, err := n.Host("a").Dial(context.Background(), "nowhere"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial to no listener: %v, want ECONNREFUSED", err)
		}
		c, _ := pair(t, n)
		lnA, err := n.Host("a").Listen("a")
		if err != nil {
			t.Fatal(err)
		}
		defer lnA.Close()
		n.Refuse("a", "b")
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, ErrBroken) {
			t.Fatalf("read on a refusing link: %v", err)
		}
		for _, d := range [][2]string{{"a", "b"}, {"b", "a"}} {
			if _, err := n.Host(d[0]).Dial(context.Background(), d[1]); !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("dial %s -> %s on a refusing link: %v", d[0], d[1], err)
			}
		}
		if _, err := n.Host("c").Dial(context.Background(), "b"); err != nil {
			t.Fatalf("dial from another host: %v", err)
		}
		n.Heal()
		if _, err := n.Host("a").Dial(context.Background(), "b"); err != nil {
			t.Fatalf("dial after Heal: %v", err)
		}
	})
}

// A frozen host's connections stay open and deliver nothing either way
// until Thaw, which delivers what was held; dials to it connect; a
// deadline still ends a read, and Close still breaks a frozen
// connection.
func TestFreeze(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{})
		defer n.Close()
		c, s := pair(t, n)
		n.Freeze("b")
		if _, err := c.Write([]byte("to b")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write([]byte("to a")); err != nil {
			t.Fatal(err)
		}
		for _, end := range []net.Conn{c, s} {
			end.SetReadDeadline(time.Now().Add(time.Minute))
			if _, err := end.Read(make([]byte, 4)); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read from a frozen host: %v, want silence until the deadline", err)
			}
			end.SetReadDeadline(time.Time{})
		}
		if _, err := n.Host("c").Dial(context.Background(), "b"); err != nil {
			t.Fatalf("dial to a frozen host: %v", err)
		}
		got := make(chan string, 2)
		for _, end := range []net.Conn{c, s} {
			go func() {
				b := make([]byte, 4)
				io.ReadFull(end, b)
				got <- string(b)
			}()
		}
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("delivered while frozen")
		}
		n.Thaw("b")
		if a, b := <-got, <-got; a+b != "to bto a" && a+b != "to ato b" {
			t.Fatalf("after Thaw: %q %q", a, b)
		}
		n.Freeze("b")
		errs := make(chan error, 1)
		go func() { _, err := c.Read(make([]byte, 1)); errs <- err }()
		synctest.Wait()
		n.Close()
		if err := <-errs; !errors.Is(err, ErrBroken) {
			t.Fatalf("frozen read after Close: %v", err)
		}
	})
}

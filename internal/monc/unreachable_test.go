package monc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// unreachableCalls records the calls of Config.Unreachable.
type unreachableCalls struct {
	mu    sync.Mutex
	calls []time.Duration // when, since the start
}

func (u *unreachableCalls) hook(start time.Time) func([]Addr, time.Duration) {
	return func(_ []Addr, _ time.Duration) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls = append(u.calls, time.Since(start))
	}
}

func (u *unreachableCalls) get() []time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]time.Duration(nil), u.calls...)
}

// A client no monitor answers says so once, UnreachableAfter into its
// first command, and keeps trying (without spinning: virtual time only
// advances while every goroutine waits) until its context ends.
func TestUnreachableCalledOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.Config{Seed: 1, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
		defer n.Close()
		var u unreachableCalls
		start := time.Now()
		c, err := New(Config{Mons: []Addr{{"a", "a:6789"}}, Network: n.Host("client"), Attempt: time.Second,
			Unreachable: u.hook(start)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = c.Run(ctx, wire.NewCommand("status"))
		if !errors.Is(err, ErrNoMonitor) {
			t.Fatalf("Run with no monitor: %v", err)
		}
		if calls := u.get(); len(calls) != 1 || calls[0] != 2*time.Second {
			t.Errorf("Unreachable called at %v, want once at 2s", calls)
		}
	})
}

// A client that hears from a monitor in time is never told it is
// unreachable.
func TestUnreachableNotCalledWhenAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.Config{Seed: 1, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
		defer n.Close()
		startFakeMon(t, n, "a", func(string) bool { return true })
		var u unreachableCalls
		c, err := New(Config{Mons: []Addr{{"a", "a:6789"}}, Network: n.Host("client"), Unreachable: u.hook(time.Now())})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Run(context.Background(), wire.NewCommand("status")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second) // virtual time: past UnreachableAfter
		if calls := u.get(); len(calls) != 0 {
			t.Errorf("Unreachable called at %v after an answer", calls)
		}
	})
}

// A command no monitor answers ends with ErrNoMonitor, naming the command
// and the last monitor's failure; a subscription that got no map says
// why its monitor session failed.
func TestNoMonitorSaysWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.Config{Seed: 1, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
		defer n.Close()
		c, err := New(Config{Mons: []Addr{{"a", "a:6789"}}, Network: n.Host("client"), Attempt: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err = c.Run(ctx, wire.NewCommand("osd pool ls"))
		if !errors.Is(err, ErrNoMonitor) || !strings.HasPrefix(err.Error(), "osd pool ls: no monitor answered (last: mon.a at a:6789: ") {
			t.Errorf("Run with no monitor: %v", err)
		}
		sctx, scancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer scancel()
		// With nobody listening the dial may fail before Send returns:
		// the subscription stays active all the same, and Subscribe
		// does not fail (a client would give up instead of retrying).
		if err := c.Subscribe(sctx, 0); err != nil {
			t.Fatal(err)
		}
		<-sctx.Done()
		if lost := c.SubscriptionLost(); lost == nil || !strings.HasPrefix(lost.Error(), "mon.a at a:6789: ") {
			t.Errorf("SubscriptionLost with no monitor: %v", lost)
		}
	})
}

package monc

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// fakeMon records the commands it receives and answers those whose
// prefix answer allows.
type fakeMon struct {
	ms     *msgr.Messenger
	answer func(prefix string) bool
	// notReady answers every command EAGAIN "not ready", as a follower
	// answers a leader-only command.
	notReady atomic.Bool

	mu   sync.Mutex
	seen []wire.MonCommand
}

func startFakeMon(t *testing.T, n *memnet.Network, name string, answer func(string) bool) *fakeMon {
	t.Helper()
	f := &fakeMon{answer: answer}
	ms, err := msgr.New(msgr.Config{Name: auth.EntityName{Type: "mon", ID: name}, Network: n.Host(name + ":6789"),
		Dispatcher: f, ServerAuth: func() auth.ServerHandshake { return &auth.NoneServer{} },
		ClientAuth: func(auth.EntityName) auth.ClientHandshake {
			return &auth.NoneClient{Name: auth.EntityName{Type: "mon", ID: name}}
		},
		Policy: func(auth.EntityName) msgr.Policy { return msgr.Lossy }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Listen(context.Background(), name+":6789"); err != nil {
		t.Fatal(err)
	}
	f.ms = ms
	t.Cleanup(func() { ms.Close() })
	return f
}

func (f *fakeMon) Dispatch(from msgr.Peer, msg msgr.Message) {
	c, err := wire.DecodeMonCommand(msg.Payload)
	if err != nil {
		return
	}
	f.mu.Lock()
	f.seen = append(f.seen, c)
	f.mu.Unlock()
	go func() {
		if f.answer(c.Cmd.Prefix) {
			r := wire.MonCommandReply{Tid: c.Tid, Reply: wire.Reply{Status: "done"}}
			if f.notReady.Load() {
				r.Reply = wire.Errorf(wire.EAGAIN, "not ready for %q: not the leader", c.Cmd.Prefix)
			}
			_ = from.Session.Send(context.Background(), msgr.Message{Type: wire.TypeMonCommandReply, Version: 1, Payload: r.Encode()})
		}
	}()
}

func (f *fakeMon) HandleEvent(msgr.Event) {}

func (f *fakeMon) commands() []wire.MonCommand {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wire.MonCommand(nil), f.seen...)
}

// Every attempt of one command, on whichever monitor, carries the same
// number, so the monitors can apply it once; Oldest is the lowest number
// the client still waits for.
func TestAttemptsShareTheCommandNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.Config{Seed: 1, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
		defer n.Close()
		release := make(chan struct{})
		mute := startFakeMon(t, n, "a", func(string) bool { return false })
		answering := startFakeMon(t, n, "b", func(prefix string) bool {
			if prefix == "slow" {
				<-release
			}
			return true
		})
		c, err := New(Config{Mons: []Addr{{"a", "a:6789"}, {"b", "b:6789"}}, Network: n.Host("client"), Attempt: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.cur = 0 // try the silent monitor first
		ctx := context.Background()
		if _, err := c.Run(ctx, wire.NewCommand("first")); err != nil {
			t.Fatal(err)
		}
		slow := make(chan error, 1)
		go func() { _, err := c.Run(ctx, wire.NewCommand("slow")); slow <- err }()
		synctest.Wait()
		if _, err := c.Run(ctx, wire.NewCommand("third")); err != nil {
			t.Fatal(err)
		}
		close(release)
		if err := <-slow; err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(ctx, wire.NewCommand("fourth")); err != nil {
			t.Fatal(err)
		}
		want := map[string][2]uint64{"first": {1, 1}, "slow": {2, 2}, "third": {3, 2}, "fourth": {4, 4}}
		got := append(mute.commands(), answering.commands()...)
		for _, cmd := range got {
			w, ok := want[cmd.Cmd.Prefix]
			if !ok || cmd.Client == 0 || cmd.Client != got[0].Client || cmd.Seq != w[0] || cmd.Oldest != w[1] {
				t.Errorf("%s sent as client %x, number %d, oldest %d; want client %x, number %d, oldest %d",
					cmd.Cmd.Prefix, cmd.Client, cmd.Seq, cmd.Oldest, got[0].Client, w[0], w[1])
			}
		}
		if len(mute.commands()) == 0 {
			t.Errorf("no attempt reached the silent monitor; the test shows nothing about resends")
		}
	})
}

// Regression: two monitors answering "not ready" (followers, for a
// leader-only command such as an MDS beacon) each became the first to
// ask, so the attempts cycled between them, in no time at all, and never
// reached the third. Now every monitor is tried in turn, and a round of
// such answers pauses like a round of failures.
func TestNotReadyAnswersDoNotHideTheLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.Config{Seed: 1})
		defer n.Close()
		all := func(string) bool { return true }
		a, b := startFakeMon(t, n, "a", all), startFakeMon(t, n, "b", all)
		a.notReady.Store(true)
		b.notReady.Store(true)
		leader := startFakeMon(t, n, "c", all)
		c, err := New(Config{Mons: []Addr{{"a", "a:6789"}, {"b", "b:6789"}, {"c", "c:6789"}}, Network: n.Host("client"), Attempt: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for start := range 3 {
			c.cur = start
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r, err := c.Run(ctx, wire.NewCommand("leader only"))
			cancel()
			if err != nil || r.Status != "done" {
				t.Fatalf("starting at monitor %d: %+v, %v", start, r, err)
			}
		}
		if n := len(leader.commands()); n != 3 {
			t.Fatalf("the leader got %d commands, want 3", n)
		}
		if n := len(a.commands()) + len(b.commands()); n > 6 {
			t.Fatalf("the followers got %d attempts for 3 commands", n)
		}
		// With no monitor ready, rounds pause: a second of trying makes
		// a handful of attempts, not thousands.
		leader.notReady.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		before := len(a.commands()) + len(b.commands()) + len(leader.commands())
		if _, err := c.Run(ctx, wire.NewCommand("nobody")); err == nil {
			t.Fatal("a command no monitor is ready for succeeded")
		}
		if n := len(a.commands()) + len(b.commands()) + len(leader.commands()) - before; n > 30 {
			t.Fatalf("%d attempts in one second with no monitor ready", n)
		}
	})
}

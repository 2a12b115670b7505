package monc

import (
	"context"
	"sync"
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

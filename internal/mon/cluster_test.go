package mon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// testCluster runs monitors on an in-memory network inside a synctest
// bubble: time is virtual, so elections and timeouts take no real time.
type testCluster struct {
	t         *testing.T
	net       *memnet.Network
	monmap    MonMap
	fs        map[string]vfs.FS
	mons      map[string]*runningMon
	keep      uint64
	every     uint64
	bootstrap []moncmd.Command
	// extra returns more services for each monitor started, if set.
	extra func() []moncmd.Service
}

type runningMon struct {
	m      *Monitor
	st     *monstore.Store
	kv     *kvService
	cancel context.CancelFunc
	done   chan error
}

func newTestCluster(t *testing.T, n int) *testCluster {
	return newTestClusterNet(t, n, memnet.Config{Seed: 1, MinDelay: time.Millisecond, MaxDelay: 3 * time.Millisecond})
}

func newTestClusterNet(t *testing.T, n int, nc memnet.Config) *testCluster {
	c := &testCluster{t: t, net: memnet.New(nc),
		fs: map[string]vfs.FS{}, mons: map[string]*runningMon{}}
	c.monmap.FSID = "test-fsid"
	for i := range n {
		name := string(rune('a' + i))
		c.monmap.Mons = append(c.monmap.Mons, MonInfo{Name: name, Addr: name + ":6789"})
		c.fs[name] = vfs.NewMem()
	}
	return c
}

func testLogger(name string) *slog.Logger {
	if os.Getenv("CUTTLE_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test_mon", name)
}

func (c *testCluster) start(name string) {
	c.t.Helper()
	st, err := monstore.Open(monstore.Options{FS: c.fs[name], Dir: "/mon"})
	if err != nil {
		c.t.Fatalf("mon.%s: open store: %v", name, err)
	}
	kv := &kvService{keep: c.keep}
	services := []moncmd.Service{kv}
	if c.extra != nil {
		services = append(services, c.extra()...)
	}
	m, err := New(Config{Name: name, MonMap: c.monmap, Store: st, Services: services,
		Network: c.net.Host(name + ":6789"), Logger: testLogger(name), CompactEvery: c.every, Bootstrap: c.bootstrap})
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rm := &runningMon{m: m, st: st, kv: kv, cancel: cancel, done: make(chan error, 1)}
	go func() { rm.done <- m.Run(ctx) }()
	c.mons[name] = rm
}

func (c *testCluster) stop(name string) {
	c.t.Helper()
	rm := c.mons[name]
	rm.cancel()
	if err := <-rm.done; err != nil {
		c.t.Errorf("mon.%s: run: %v", name, err)
	}
	if err := rm.st.Close(); err != nil {
		c.t.Errorf("mon.%s: close store: %v", name, err)
	}
	delete(c.mons, name)
}

func (c *testCluster) stopAll() {
	for name := range c.mons {
		c.stop(name)
	}
	c.net.Close()
}

// testClient sends commands to monitors over the same network.
type testClient struct {
	ms      *msgr.Messenger
	nonce   uint64
	mu      sync.Mutex
	tid     uint64
	seq     uint64 // number of the last command
	waiting map[uint64]chan wire.Reply
	maps    chan wire.OSDMapUpdate
}

func (c *testCluster) client(name string) *testClient {
	c.t.Helper()
	tc := &testClient{nonce: uint64(len(name))<<32 | 0xc0ffee, waiting: map[uint64]chan wire.Reply{}, maps: make(chan wire.OSDMapUpdate, 100)}
	self := auth.EntityName{Type: "client", ID: name}
	ms, err := msgr.New(msgr.Config{Name: self, Network: c.net.Host("client-" + name), Dispatcher: tc,
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: self} }})
	if err != nil {
		c.t.Fatal(err)
	}
	tc.ms = ms
	c.t.Cleanup(func() { ms.Close() })
	return tc
}

func (tc *testClient) Dispatch(_ msgr.Peer, msg msgr.Message) {
	switch msg.Type {
	case wire.TypeMonCommandReply:
		r, err := wire.DecodeMonCommandReply(msg.Payload)
		if err != nil {
			return
		}
		tc.mu.Lock()
		ch := tc.waiting[r.Tid]
		delete(tc.waiting, r.Tid)
		tc.mu.Unlock()
		if ch != nil {
			select {
			case ch <- r.Reply:
			default: // a reply to an earlier send of the same command
			}
		}
	case wire.TypeOSDMapUpdate:
		u, err := wire.DecodeOSDMapUpdate(msg.Payload)
		if err == nil {
			tc.maps <- u
		}
	}
}

func (tc *testClient) HandleEvent(msgr.Event) {}

// run sends cmd to one monitor and waits for the reply, resending every
// few seconds (a lossy session drops what it had queued when its
// connection fails, as the real client's does), until timeout.
// Every send of one command carries the same number, as monc's do.
func (tc *testClient) run(mon string, timeout time.Duration, prefix string, kv ...string) (wire.Reply, error) {
	tc.mu.Lock()
	tc.seq++
	seq := tc.seq
	tc.mu.Unlock()
	return tc.runNumbered(mon, timeout, seq, seq, moncmd.New(prefix, kv...))
}

// runNumbered sends a command under the given number and oldest awaited
// number until one of its sends is answered.
func (tc *testClient) runNumbered(mon string, timeout time.Duration, seq, oldest uint64, cmd moncmd.Command) (wire.Reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ch := make(chan wire.Reply, 1)
	for {
		tc.mu.Lock()
		tc.tid++
		tid := tc.tid
		tc.waiting[tid] = ch
		tc.mu.Unlock()
		msg := wire.MonCommand{Tid: tid, Cmd: cmd, Client: tc.nonce, Seq: seq, Oldest: oldest}
		_ = tc.ms.Send(ctx, auth.EntityName{Type: "mon", ID: mon}, mon+":6789", msgr.Message{Type: wire.TypeMonCommand, Version: 1, Payload: msg.Encode()})
		t := time.NewTimer(5 * time.Second)
		select {
		case r := <-ch:
			t.Stop()
			return r, nil
		case <-ctx.Done():
			t.Stop()
			return wire.Reply{}, ctx.Err()
		case <-t.C:
		}
	}
}

func (tc *testClient) mustRun(t *testing.T, mon, prefix string, kv ...string) wire.Reply {
	t.Helper()
	r, err := tc.run(mon, time.Minute, prefix, kv...)
	if err != nil {
		t.Fatalf("%s on mon.%s: %v", prefix, mon, err)
	}
	if r.Code != 0 {
		t.Fatalf("%s on mon.%s: code %d: %s", prefix, mon, r.Code, r.Status)
	}
	return r
}

func (tc *testClient) subscribe(t *testing.T, mon string, start uint64) {
	t.Helper()
	s := wire.MonSubscribe{What: osdmapService, Start: start}
	if err := tc.ms.Send(context.Background(), auth.EntityName{Type: "mon", ID: mon}, mon+":6789", msgr.Message{Type: wire.TypeMonSubscribe, Version: 1, Payload: s.Encode()}); err != nil {
		t.Fatal(err)
	}
}

func set(t *testing.T, tc *testClient, mon, k, v string) {
	t.Helper()
	tc.mustRun(t, mon, "kv set", "key", k, "value", v)
}

func get(t *testing.T, tc *testClient, mon, k string) string {
	t.Helper()
	return tc.mustRun(t, mon, "kv get", "key", k).Text
}

func bubble(t *testing.T, f func(t *testing.T)) {
	synctest.Test(t, f)
}

var _ = fmt.Sprint

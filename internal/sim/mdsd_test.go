package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/server"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// recordingEngine stands in for the MDS engine in the daemon's own
// tests (the daemon's end-to-end tests run the real one): it records
// the calls the server makes, in order.
type recordingEngine struct {
	mu    *sync.Mutex
	calls *[]string
	name  string
}

func (e recordingEngine) note(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	*e.calls = append(*e.calls, e.name+": "+fmt.Sprintf(format, args...))
}

func (e recordingEngine) Reconnect(c server.ClientID, m *wire.ClientReconnect) error {
	e.note("reconnect %d", c)
	return nil
}
func (e recordingEngine) Resume() { e.note("resume") }
func (e recordingEngine) Handle(_ context.Context, c server.ClientID, req *wire.ClientRequest, reply func(*wire.ClientReply)) {
	e.note("handle %d %s", c, req.Op)
	reply(&wire.ClientReply{Tid: req.Tid, Op: req.Op, Safe: true})
}
func (e recordingEngine) HandleCaps(context.Context, server.ClientID, *wire.ClientCaps) {}
func (e recordingEngine) SessionOpened(c server.ClientID)                               { e.note("opened %d", c) }
func (e recordingEngine) SessionEnded(c server.ClientID, r locker.EndReason)            { e.note("ended %d", c) }
func (e recordingEngine) Fenced(c server.ClientID)                                      { e.note("fenced %d", c) }
func (e recordingEngine) Tick(time.Time)                                                {}
func (e recordingEngine) Health(time.Time) server.EngineHealth                          { return server.EngineHealth{} }
func (e recordingEngine) Close(context.Context) error                                   { e.note("close"); return nil }

// fsClient speaks the file-system client protocol over memnet.
type fsClient struct {
	t  *testing.T
	ms *msgr.Messenger
	in chan msgr.Message
}

// newFSClient is client.admin's messenger on host client-1 of c, closed
// when the test ends.
func newFSClient(t *testing.T, c *Cluster) *fsClient {
	t.Helper()
	in := make(chan msgr.Message, 16)
	name := auth.EntityName{Type: "client", ID: "admin"}
	ms, err := msgr.New(msgr.Config{Name: name, Network: c.Net.Host("client-1"), Dispatcher: chanDispatcher(in),
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	return &fsClient{t: t, ms: ms, in: in}
}

type chanDispatcher chan msgr.Message

func (d chanDispatcher) Dispatch(_ msgr.Peer, m msgr.Message) { d <- m }
func (d chanDispatcher) HandleEvent(msgr.Event)               {}

func (c *fsClient) session(to string) *msgr.Session {
	s, err := c.ms.Connect(auth.EntityName{Type: "mds", ID: to}, "mds-"+to+":6800")
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

func (c *fsClient) send(s *msgr.Session, typ uint16, payload []byte) {
	if err := s.Send(context.Background(), msgr.Message{Type: typ, Version: 1, Payload: payload}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *fsClient) session1(want wire.SessionOp) wire.ClientSession {
	c.t.Helper()
	for m := range c.in {
		if m.Type != wire.TypeClientSession {
			continue
		}
		s, err := wire.DecodeClientSession(m.Payload)
		if err != nil {
			c.t.Fatal(err)
		}
		if s.Op == want {
			return s
		}
	}
	c.t.Fatal("client closed")
	return wire.ClientSession{}
}

// The MDS daemon as the simulator runs it (real monitors, OSDs, beacons,
// messenger, session map in RADOS; a recording engine): mds.a takes the
// new file system's rank (creating, active); a client opens a session;
// mds.a dies; mds.b, the standby, is given the rank, fences a's
// incarnation in the OSD map before it opens the engine, waits in
// reconnect for the client the session map names, and is active within
// 10 s of a's death, in virtual time.
func TestMDSDaemonTakesOverFromDeadHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{})
		for i := range 3 {
			c.AddOSD(fmt.Sprintf("host%d", i))
		}
		c.Run("osd pool create", "pool", "cephfs_metadata", "pg_num", "8")
		c.Run("osd pool create", "pool", "cephfs_data", "pg_num", "8")
		c.Run("fs new", "fs_name", "cephfs", "metadata", "cephfs_metadata", "data", "cephfs_data")
		var mons []monc.Addr
		for _, mi := range c.monmap.Mons {
			mons = append(mons, monc.Addr{Name: mi.Name, Addr: mi.Addr})
		}
		var mu sync.Mutex
		var calls []string
		start := func(name string, nonce uint64) (stop func()) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			cfg := daemon.MDSConfig{Name: name, Listen: "mds-" + name + ":6800", Mons: mons, Nonce: nonce,
				Network: c.Net.Host("mds-" + name + ":6800"), Logger: Logger("mds." + name),
				Overrides: map[string]string{"mds_reconnect_timeout": "5s"},
				Open: func(_ context.Context, oc server.OpenConfig) (server.Engine, error) {
					e := recordingEngine{mu: &mu, calls: &calls, name: name}
					e.note("open rank %d", oc.Rank)
					return e, nil
				}}
			go func() { done <- daemon.RunMDS(ctx, cfg) }()
			return func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("mds.%s: %v", name, err)
				}
			}
		}
		waitStat := func(want string) {
			t.Helper()
			for i := 0; ; i++ {
				if got := c.Run("mds stat").Text; got == want {
					return
				} else if i == 600 {
					t.Fatalf("mds stat %q, want %q", got, want)
				}
				time.Sleep(100 * time.Millisecond) // virtual time: the beacons' pace
			}
		}
		stopA := start("a", 1)
		waitStat("cephfs:1 {0=a=up:active}\n")
		stopB := start("b", 2)
		defer stopB()
		waitStat("cephfs:1 {0=a=up:active} 1 up:standby\n")

		cl := newFSClient(t, c)
		sa := cl.session("a")
		cl.send(sa, wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestOpen, Client: "client.admin", ClientID: 4123, Root: "/"}.Encode())
		cl.session1(wire.SessionOpen)

		stopA() // its beacons stop; the monitors fail it after the grace
		died := time.Now()
		waitStat("cephfs:1 {0=b=up:reconnect}\n")
		sb := cl.session("b")
		cl.send(sb, wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestOpen, Client: "client.admin", ClientID: 4123, Root: "/"}.Encode())
		cl.session1(wire.SessionOpen)
		cl.send(sb, wire.TypeClientReconnect, (&wire.ClientReconnect{}).Encode())
		waitStat("cephfs:1 {0=b=up:active}\n")
		took := time.Since(died)
		t.Logf("mds.b active %v after mds.a stopped", took)
		if took > 10*time.Second {
			t.Errorf("failover took %v; want under 10 s", took)
		}
		if !c.Map().IsBlocklisted("mds-a:6800/1", time.Now()) {
			t.Error("mds.a's incarnation is not blocklisted in the OSD map")
		}
		mu.Lock()
		got := strings.Join(calls, "\n")
		mu.Unlock()
		want := []string{"a: open rank 0", "a: opened 4123", "a: close", "b: open rank 0", "b: reconnect 4123", "b: opened 4123", "b: resume"}
		if !slices.Equal(strings.Split(got, "\n"), want) {
			t.Errorf("engine calls:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
	})
}

// fenceProbeEngine is a recordingEngine that keeps the metadata pool the
// daemon opened it with, and whose Close waits until the test lets it:
// the deposed daemon keeps its rados client open while the test writes
// through it.
type fenceProbeEngine struct {
	recordingEngine
	closing chan struct{} // closed by the test: Close may return
}

func (e fenceProbeEngine) Close(ctx context.Context) error {
	e.note("close")
	<-e.closing
	return nil
}

// A deposed MDS cannot write: mds.a hangs (its network frozen, as
// SIGSTOP would), mds.b takes the rank and fences a's incarnation, and
// when a resumes, a write through its own rados client — the one its
// journal goes through — is refused as blocklisted. The fence names the
// address the MDS map shows (listen port and nonce); the OSDs match it
// only because the daemon's rados client presents that same address.
func TestDeposedMDSCannotWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{})
		for i := range 3 {
			c.AddOSD(fmt.Sprintf("host%d", i))
		}
		c.Run("osd pool create", "pool", "cephfs_metadata", "pg_num", "8")
		c.Run("osd pool create", "pool", "cephfs_data", "pg_num", "8")
		c.Run("fs new", "fs_name", "cephfs", "metadata", "cephfs_metadata", "data", "cephfs_data")
		var mons []monc.Addr
		for _, mi := range c.monmap.Mons {
			mons = append(mons, monc.Addr{Name: mi.Name, Addr: mi.Addr})
		}
		var mu sync.Mutex
		var calls []string
		metaOfA := make(chan *rados.IOContext, 1)
		closing := make(chan struct{})
		var release sync.Once
		letClose := func() { release.Do(func() { close(closing) }) }
		start := func(name string, nonce uint64) (done chan error, cancel func()) {
			ctx, cancel := context.WithCancel(context.Background())
			done = make(chan error, 1)
			cfg := daemon.MDSConfig{Name: name, Listen: "mds-" + name + ":6800", Mons: mons, Nonce: nonce,
				Network: c.Net.Host("mds-" + name + ":6800"), Logger: Logger("mds." + name),
				Open: func(_ context.Context, oc server.OpenConfig) (server.Engine, error) {
					e := fenceProbeEngine{recordingEngine{mu: &mu, calls: &calls, name: name}, closing}
					if name == "a" {
						metaOfA <- oc.Meta
					}
					return e, nil
				}}
			go func() { done <- daemon.RunMDS(ctx, cfg) }()
			return done, cancel
		}
		waitStat := func(want string) {
			t.Helper()
			for i := 0; ; i++ {
				if got := c.Run("mds stat").Text; got == want {
					return
				} else if i == 600 {
					t.Fatalf("mds stat %q, want %q", got, want)
				}
				time.Sleep(100 * time.Millisecond) // virtual time: the beacons' pace
			}
		}
		doneA, cancelA := start("a", 7)
		defer func() { letClose(); cancelA(); <-doneA }()
		waitStat("cephfs:1 {0=a=up:active}\n")
		meta := <-metaOfA
		ctx := context.Background()
		if err := meta.WriteFull(ctx, "probe", []byte("before")); err != nil {
			t.Fatalf("mds.a writes while it holds the rank: %v", err)
		}
		doneB, cancelB := start("b", 8)
		defer func() { letClose(); cancelB(); <-doneB }()
		waitStat("cephfs:1 {0=a=up:active} 1 up:standby\n")

		c.Net.Freeze("mds-a:6800")
		waitStat("cephfs:1 {0=b=up:active}\n")
		if !c.Map().IsBlocklisted("mds-a:6800/7", time.Now()) {
			t.Fatal("mds.a's incarnation is not blocklisted in the OSD map")
		}
		c.Net.Thaw("mds-a:6800")
		// a's Close waits for letClose: its rados client stays open.
		err := meta.WriteFull(ctx, "probe", []byte("after the fence"))
		if !errors.Is(err, rados.ErrBlocklisted) {
			t.Fatalf("the deposed mds.a wrote after the fence: %v; want %v", err, rados.ErrBlocklisted)
		}
	})
}

// heldEngine is a recordingEngine whose requests are answered only when
// the test lets them (release closed): they stay in flight.
type heldEngine struct {
	recordingEngine
	release chan struct{}
}

func (e heldEngine) Handle(ctx context.Context, c server.ClientID, req *wire.ClientRequest, reply func(*wire.ClientReply)) {
	<-e.release
	e.recordingEngine.Handle(ctx, c, req, reply)
}

// The MDS daemon reads the central config as it starts: mds_cache_size
// set for every MDS (`config set mds ...`) reaches the engine it opens,
// and mds_op_complaint_time set for mds.a makes a request held 3 s a
// slow one in the monitors' health (MDS_SLOW_REQUEST, "blocked > 2
// secs"), which the default (30 s) would not.
func TestMDSDaemonReadsCentralConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{})
		for i := range 3 {
			c.AddOSD(fmt.Sprintf("host%d", i))
		}
		c.Run("osd pool create", "pool", "cephfs_metadata", "pg_num", "8")
		c.Run("osd pool create", "pool", "cephfs_data", "pg_num", "8")
		c.Run("fs new", "fs_name", "cephfs", "metadata", "cephfs_metadata", "data", "cephfs_data")
		c.Run("config set", "who", "mds", "name", "mds_cache_size", "value", "12345")
		c.Run("config set", "who", "mds.a", "name", "mds_op_complaint_time", "value", "2s")
		var mons []monc.Addr
		for _, mi := range c.monmap.Mons {
			mons = append(mons, monc.Addr{Name: mi.Name, Addr: mi.Addr})
		}
		var mu sync.Mutex
		var calls []string
		release := make(chan struct{})
		cacheInodes := make(chan int, 1)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		cfg := daemon.MDSConfig{Name: "a", Listen: "mds-a:6800", Mons: mons, Nonce: 1,
			Network: c.Net.Host("mds-a:6800"), Logger: Logger("mds.a"),
			Open: func(_ context.Context, oc server.OpenConfig) (server.Engine, error) {
				cacheInodes <- oc.CacheInodes
				return heldEngine{recordingEngine{mu: &mu, calls: &calls, name: "a"}, release}, nil
			}}
		go func() { done <- daemon.RunMDS(ctx, cfg) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("mds.a: %v", err)
			}
		}()
		defer close(release)
		if got := <-cacheInodes; got != 12345 {
			t.Errorf("the engine was opened with mds_cache_size %d, want 12345 (the central config's)", got)
		}
		for i := 0; c.Run("mds stat").Text != "cephfs:1 {0=a=up:active}\n"; i++ {
			if i == 600 {
				t.Fatalf("mds stat %q", c.Run("mds stat").Text)
			}
			time.Sleep(100 * time.Millisecond) // virtual time: the beacons' pace
		}

		cl := newFSClient(t, c)
		s := cl.session("a")
		cl.send(s, wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestOpen, Client: "client.admin", ClientID: 4123, Root: "/"}.Encode())
		cl.session1(wire.SessionOpen)
		cl.send(s, wire.TypeClientRequest, (&wire.ClientRequest{Tid: 1, Op: wire.MetaGetattr, Path: wire.FilePath{Ino: 1}}).Encode())
		sent := time.Now()
		for {
			h := c.Run("health", "detail", "true")
			if strings.Contains(h.Text, "slow requests are blocked > 2 secs") {
				break
			}
			if time.Since(sent) > 10*time.Second {
				t.Fatalf("no slow request reported 10 s after it was sent (mds_op_complaint_time 2s from the central config):\n%s", h.Text)
			}
			time.Sleep(100 * time.Millisecond) // virtual time: the beacons' pace
		}
		t.Logf("the held request was reported slow %v after it was sent", time.Since(sent))
	})
}

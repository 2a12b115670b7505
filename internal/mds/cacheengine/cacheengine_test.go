package cacheengine_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/fsclient"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/mds/cacheengine"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/internal/wire"
)

type chanDispatcher chan msgr.Message

func (d chanDispatcher) Dispatch(_ msgr.Peer, m msgr.Message) { d <- m }
func (d chanDispatcher) HandleEvent(msgr.Event)               {}

// client speaks the file-system protocol over the simulator's network.
type client struct {
	t   *testing.T
	ms  *msgr.Messenger
	in  chan msgr.Message
	s   *msgr.Session
	tid uint64
}

func (c *client) open(mds string) {
	c.t.Helper()
	s, err := c.ms.Connect(auth.EntityName{Type: "mds", ID: mds}, "mds-"+mds+":6800")
	if err != nil {
		c.t.Fatal(err)
	}
	c.s = s
	c.send(wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestOpen, Client: "client.admin", ClientID: 4123, Root: "/"}.Encode())
	for m := range c.in {
		if ss, err := wire.DecodeClientSession(m.Payload); m.Type == wire.TypeClientSession && err == nil {
			if ss.Op != wire.SessionOpen {
				c.t.Fatalf("session with mds.%s: %+v", mds, ss)
			}
			return
		}
	}
}

func (c *client) send(typ uint16, payload []byte) {
	c.t.Helper()
	if err := c.s.Send(context.Background(), msgr.Message{Type: typ, Version: 1, Payload: payload}); err != nil {
		c.t.Fatal(err)
	}
}

// do sends req and returns its safe reply.
func (c *client) do(req *wire.ClientRequest) *wire.ClientReply {
	c.t.Helper()
	c.tid++
	req.Tid = c.tid
	c.send(wire.TypeClientRequest, req.Encode())
	for m := range c.in {
		if m.Type != wire.TypeClientReply {
			continue
		}
		r, err := wire.DecodeClientReply(m.Payload)
		if err != nil {
			c.t.Fatal(err)
		}
		if r.Tid == req.Tid && r.Safe {
			return r
		}
	}
	return nil
}

// The daemon with the real engine, in the simulator (virtual time):
// mds.a serves rank 0 with mds.b its standby-replay follower; a client
// creates files; mds.a stops; mds.b takes the rank over (fence, replay
// of the journal, the client's reconnect) and every file is there.
func TestDaemonWithEngineFailsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{})
		for i := range 3 {
			c.AddOSD(fmt.Sprintf("host%d", i))
		}
		c.Run("osd pool create", "pool", "cephfs_metadata", "pg_num", "8")
		c.Run("osd pool create", "pool", "cephfs_data", "pg_num", "8")
		c.Run("fs new", "fs_name", "cephfs", "metadata", "cephfs_metadata", "data", "cephfs_data")
		c.Run("fs set", "fs_name", "cephfs", "var", "allow_standby_replay", "val", "true")
		start := func(name string, nonce uint64) (stop func()) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			cfg := daemon.MDSConfig{Name: name, Listen: "mds-" + name + ":6800", Mons: c.MonAddrs(), Nonce: nonce,
				Network: c.Net.Host("mds-" + name + ":6800"), Logger: sim.Logger("mds." + name),
				Open: cacheengine.Opener(), Follow: cacheengine.Follower()}
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
				got := c.Run("mds stat").Text
				if got == want {
					return
				}
				if i == 600 {
					t.Fatalf("mds stat %q, want %q", got, want)
				}
				// The monitors push no MDS map to an admin client: look
				// again at the beacons' pace (virtual time).
				time.Sleep(100 * time.Millisecond)
			}
		}
		stopA := start("a", 1)
		waitStat("cephfs:1 {0=a=up:active}\n")
		stopB := start("b", 2)
		defer stopB()
		waitStat("cephfs:1 {0=a=up:active} 1 up:standby-replay\n")

		in := make(chan msgr.Message, 64)
		name := auth.EntityName{Type: "client", ID: "admin"}
		ms, err := msgr.New(msgr.Config{Name: name, Network: c.Net.Host("client-1"), Dispatcher: chanDispatcher(in),
			ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name} }})
		if err != nil {
			t.Fatal(err)
		}
		defer ms.Close()
		cl := &client{t: t, ms: ms, in: in}
		cl.open("a")
		const files = 20
		for i := range files {
			r := cl.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: wire.FilePath{Ino: 1, Path: fmt.Sprintf("f%02d", i)},
				Mode: 0o644, OpFlags: uint32(syscall.O_CREAT | syscall.O_EXCL | syscall.O_WRONLY)})
			if r.Result != 0 {
				t.Fatalf("create f%02d: %+v", i, r)
			}
		}

		stopA()
		died := time.Now()
		waitStat("cephfs:1 {0=b=up:reconnect}\n")
		cl.open("b")
		cl.send(wire.TypeClientReconnect, (&wire.ClientReconnect{}).Encode())
		waitStat("cephfs:1 {0=b=up:active}\n")
		t.Logf("mds.b active %v after mds.a stopped", time.Since(died))
		if took := time.Since(died); took > 10*time.Second {
			t.Errorf("failover took %v", took)
		}
		for i := range files {
			r := cl.do(&wire.ClientRequest{Op: wire.MetaLookup, Path: wire.FilePath{Ino: 1, Path: fmt.Sprintf("f%02d", i)}})
			if r.Result != 0 || len(r.Trace) == 0 || r.Trace[len(r.Trace)-1].Inode.Ino == 0 {
				t.Fatalf("f%02d after the failover: %+v", i, r)
			}
		}
		r := cl.do(&wire.ClientRequest{Op: wire.MetaReaddir, Path: wire.FilePath{Ino: 1}, MaxEntries: 100})
		if r.Result != 0 || len(r.Dir.Entries) != files {
			var names []string
			for _, e := range r.Dir.Entries {
				names = append(names, e.Name)
			}
			t.Fatalf("readdir after the failover: result %d, %d entries: %s", r.Result, len(r.Dir.Entries), strings.Join(names, " "))
		}
	})
}

// The file-system client library against the daemon with the real
// engine, in the simulator: files written and synced through mds.a are
// read back, byte for byte, through mds.b after mds.a stops, and the
// client goes on creating: the library follows the MDS map, reconnects
// and resumes by itself.
func TestFSClientAcrossFailover(t *testing.T) {
	// Each fsync waits for the engine's flush ack, which names the
	// flush's tid (captab matches acks by tid): without the ack the
	// first Sync would wait until the 5-minute context ends.
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{})
		for i := range 3 {
			c.AddOSD(fmt.Sprintf("host%d", i))
		}
		c.Run("osd pool create", "pool", "cephfs_metadata", "pg_num", "8")
		c.Run("osd pool create", "pool", "cephfs_data", "pg_num", "8")
		c.Run("fs new", "fs_name", "cephfs", "metadata", "cephfs_metadata", "data", "cephfs_data")
		stops := map[string]func(){}
		start := func(name string, nonce uint64) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			cfg := daemon.MDSConfig{Name: name, Listen: "mds-" + name + ":6800", Mons: c.MonAddrs(), Nonce: nonce,
				Network: c.Net.Host("mds-" + name + ":6800"), Logger: sim.Logger("mds." + name),
				Open: cacheengine.Opener(), Follow: cacheengine.Follower()}
			go func() { done <- daemon.RunMDS(ctx, cfg) }()
			stops[name] = func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("mds.%s: %v", name, err)
				}
			}
		}
		waitStat := func(want string) {
			t.Helper()
			for i := 0; c.Run("mds stat").Text != want; i++ {
				if i == 600 {
					t.Fatalf("mds stat %q, want %q", c.Run("mds stat").Text, want)
				}
				time.Sleep(100 * time.Millisecond) // virtual time: the beacons' pace
			}
		}
		start("a", 1)
		waitStat("cephfs:1 {0=a=up:active}\n")
		start("b", 2)
		defer func() { stops["b"]() }()
		waitStat("cephfs:1 {0=a=up:active} 1 up:standby\n")

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // virtual time
		defer cancel()
		fc, err := fsclient.Mount(ctx, c.Client("client.admin"), "cephfs", fsclient.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer fc.Close(context.Background())
		data := func(i int) []byte { return []byte(strings.Repeat(fmt.Sprintf("file %d ", i), 100)) }
		const files = 10
		if err := fc.Mkdir(ctx, "/d", 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range files {
			f, err := fc.Create(ctx, fmt.Sprintf("/d/f%d", i), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(ctx, data(i)); err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}

		stops["a"]()
		died := time.Now()
		if err := fc.Mkdir(ctx, "/after", 0o755); err != nil {
			t.Fatalf("mkdir across the failover: %v", err)
		}
		t.Logf("a mkdir issued when mds.a stopped returned %v later", time.Since(died))
		if took := time.Since(died); took > 10*time.Second {
			t.Errorf("the client's operation waited %v across the failover; want under 10 s", took)
		}
		ents, err := fc.ReadDir(ctx, "/d")
		if err != nil || len(ents) != files {
			t.Fatalf("readdir after the failover: %d entries, %v", len(ents), err)
		}
		for i := range files {
			f, err := fc.Open(ctx, fmt.Sprintf("/d/f%d", i))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(data(i))+10)
			n, err := f.ReadAt(ctx, got, 0)
			if (err != nil && n != len(data(i))) || string(got[:n]) != string(data(i)) {
				t.Fatalf("f%d after the failover: %d bytes %q, %v", i, n, got[:min(n, 40)], err)
			}
			f.Close(ctx)
		}
		waitStat("cephfs:1 {0=b=up:active}\n")
	})
}

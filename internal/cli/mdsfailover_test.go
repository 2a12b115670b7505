package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// fsWireClient is a file-system client that speaks the wire protocol
// through the messenger (the fsclient library is another helper's):
// sessions, creates, lookups, and the reconnect after a failover.
type fsWireClient struct {
	t   *testing.T
	ms  *msgr.Messenger
	in  chan msgr.Message
	id  uint64
	tid uint64
	s   *msgr.Session
}

type fsWireDispatcher chan msgr.Message

func (d fsWireDispatcher) Dispatch(_ msgr.Peer, m msgr.Message) { d <- m }
func (d fsWireDispatcher) HandleEvent(msgr.Event)               {}

func newFSWireClient(t *testing.T, id uint64) *fsWireClient {
	name := auth.EntityName{Type: "client", ID: "admin"}
	in := make(chan msgr.Message, 1024)
	ms, err := msgr.New(msgr.Config{Name: name, Network: &msgr.TCP{}, Dispatcher: fsWireDispatcher(in),
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	return &fsWireClient{t: t, ms: ms, in: in, id: id}
}

// open opens a session with the MDS mds.NAME at addr.
func (c *fsWireClient) open(name, addr string) {
	c.t.Helper()
	s, err := c.ms.Connect(auth.EntityName{Type: "mds", ID: name}, addr)
	if err != nil {
		c.t.Fatal(err)
	}
	c.s = s
	c.send(wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestOpen, Client: "client.admin", ClientID: c.id, Root: "/"}.Encode())
	for {
		m := c.recv()
		if m.Type != wire.TypeClientSession {
			continue
		}
		ss, err := wire.DecodeClientSession(m.Payload)
		if err != nil {
			c.t.Fatal(err)
		}
		switch ss.Op {
		case wire.SessionOpen:
			return
		case wire.SessionReject, wire.SessionClose:
			c.t.Fatalf("session with mds.%s refused: %s", name, ss.Reason)
		}
	}
}

func (c *fsWireClient) send(typ uint16, payload []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.s.Send(ctx, msgr.Message{Type: typ, Version: 1, Payload: payload}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *fsWireClient) recv() msgr.Message {
	c.t.Helper()
	select {
	case m := <-c.in:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatal("no message from the MDS in 30 s")
	}
	return msgr.Message{}
}

// do sends req and returns its safe reply.
func (c *fsWireClient) do(req *wire.ClientRequest) *wire.ClientReply {
	c.t.Helper()
	c.tid++
	req.Tid = c.tid
	c.send(wire.TypeClientRequest, req.Encode())
	for {
		m := c.recv()
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
}

// fsHolder is rank 0's holder in fs status: its name, address, state.
func fsHolder(t *testing.T, c *localCluster) (name, addr, state string) {
	t.Helper()
	var st struct {
		FileSystems []struct {
			Ranks []struct {
				State  string `json:"state"`
				Holder *struct {
					Name string `json:"name"`
					Addr string `json:"addr"`
				} `json:"mds"`
			} `json:"ranks"`
		} `json:"filesystems"`
	}
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "fs", "status", "cephfs")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.FileSystems) != 1 || len(st.FileSystems[0].Ranks) != 1 || st.FileSystems[0].Ranks[0].Holder == nil {
		return "", "", ""
	}
	r := st.FileSystems[0].Ranks[0]
	return r.Holder.Name, r.Holder.Addr, r.State
}

// Issue 38's failover: a cluster made by cluster up with its file system
// (mds.a and mds.b); a client creates files, each acknowledged safe; the
// active MDS is killed with SIGKILL; the standby takes the rank over
// (fencing, journal replay, the client's reconnect) and is active within
// 10 s; the client's operations resume, and every file it was told is
// safe is there.
func TestMDSFailoverKeepsAcknowledgedCreates(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2", "mds.a", "mds.b")
	out, stderr, err := cuttleProc(t, "cluster", "up", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "256M", "--auth", "none")
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	if !strings.Contains(out, "cuttle mount /mnt/cuttle") && !strings.Contains(out, "mount /mnt/cuttle") {
		t.Errorf("cluster up does not say how to mount:\n%s", out)
	}
	c := &localCluster{t: t, dir: dir, conf: filepath.Join(dir, "cuttle.conf")}
	if st := c.cli("status"); !strings.Contains(st, "cephfs:1 {0=") || !strings.Contains(st, "up:active} 1 up:standby") {
		t.Fatalf("status after cluster up:\n%s", st)
	}
	active, addr, _ := fsHolder(t, c)
	standby := map[string]string{"a": "b", "b": "a"}[active]

	cl := newFSWireClient(t, 4242)
	cl.open(active, addr)
	const before = 50
	for i := range before {
		r := cl.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: wire.FilePath{Ino: 1, Path: fmt.Sprintf("f%03d", i)},
			Mode: 0o644, OpFlags: uint32(syscall.O_CREAT | syscall.O_EXCL | syscall.O_WRONLY)})
		if r.Result != 0 || r.CreatedIno == 0 {
			t.Fatalf("create f%03d: %+v", i, r)
		}
	}

	// The daemon's metrics show the session and the engine's cache.
	metrics := scrape(t, localStatus(t, dir)["mds."+active].MetricsAddr)
	if metricValue(metrics, "cuttle_mds_sessions") != 1 || metricValue(metrics, "cuttle_mds_requests_total") != before ||
		metricValue(metrics, "cuttle_mds_inodes") < before {
		t.Errorf("mds.%s's metrics lack its session, requests or cache:\n%s", active, grepLines(metrics, "cuttle_mds_"))
	}

	pid := localStatus(t, dir)["mds."+active].PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var newAddr string
	c.waitFor("mds."+standby+" to hold rank 0", func() bool {
		name, a, state := fsHolder(t, c)
		newAddr = a
		return name == standby && (state == "reconnect" || state == "rejoin" || state == "active")
	})
	cl.open(standby, newAddr)
	cl.send(wire.TypeClientReconnect, (&wire.ClientReconnect{}).Encode())
	c.waitFor("mds."+standby+" to be active", func() bool {
		name, _, state := fsHolder(t, c)
		return name == standby && state == "active"
	})
	took := time.Since(killed)
	t.Logf("mds.%s active %v after mds.%s was killed", standby, took, active)
	if took > 10*time.Second {
		t.Errorf("failover took %v; the issue asks for under 10 s", took)
	}
	// Operations resume, and nothing acknowledged is lost.
	for i := range before {
		r := cl.do(&wire.ClientRequest{Op: wire.MetaLookup, Path: wire.FilePath{Ino: 1, Path: fmt.Sprintf("f%03d", i)}})
		if r.Result != 0 || len(r.Trace) == 0 || r.Trace[len(r.Trace)-1].Inode.Ino == 0 {
			t.Fatalf("lookup of f%03d after the failover: %+v", i, r)
		}
	}
	r := cl.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: wire.FilePath{Ino: 1, Path: "after"}, Mode: 0o644,
		OpFlags: uint32(syscall.O_CREAT | syscall.O_EXCL | syscall.O_WRONLY)})
	if r.Result != 0 {
		t.Fatalf("create after the failover: %+v", r)
	}
	// The killed daemon, started again, is a new incarnation: a standby.
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--dir", dir); err != nil {
		t.Fatalf("cluster up again: %v\n%s%s", err, out, stderr)
	}
	c.waitFor("mds."+active+" to stand by", func() bool {
		return c.cli("mds", "stat") == fmt.Sprintf("cephfs:1 {0=%s=up:active} 1 up:standby\n", standby)
	})
}

// grepLines returns the lines of s that start with prefix.
func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

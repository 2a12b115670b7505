package msgr_test

import (
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
)

// Each side learns the other's instance address, HOST:PORT/NONCE: the
// acceptor from the connection's host, the port the dialer listens on
// (0 for a client that does not listen) and its nonce; the dialer from
// the address it dialed and the acceptor's nonce.
func TestPeerAddr(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 1})
		defer net.Close()
		osd := newNode(t, net, "osd.1", "10.0.0.1:6801", 1, nil)
		defer osd.m.Close()
		mds := newNode(t, net, "mds.a", "10.0.0.2:6802", 2, nil)
		defer mds.m.Close()
		client, err := msgr.New(msgr.Config{
			Name: name("client.x"), Network: net.Host("10.0.0.3"), Dispatcher: newRecorder(),
			Logger: slog.New(slog.DiscardHandler), Seed: 3, Nonce: 77,
			ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name("client.x")} },
		})
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		// A daemon's client messenger that shares its listening
		// messenger's instance address: no listener, Port and Nonce set.
		daemonClient, err := msgr.New(msgr.Config{
			Name: name("mds.b"), Network: net.Host("10.0.0.4"), Dispatcher: newRecorder(),
			Logger: slog.New(slog.DiscardHandler), Seed: 4, Nonce: 99, Port: 6800,
			ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name("mds.b")} },
		})
		if err != nil {
			t.Fatal(err)
		}
		defer daemonClient.Close()
		for _, m := range []*msgr.Messenger{mds.m, client, daemonClient} {
			if err := m.Send(t.Context(), osd.name, osd.addr, numbered(0, 8)); err != nil {
				t.Fatal(err)
			}
		}
		osd.rec.waitMsgs(t, mds.name, 1, time.Minute)
		osd.rec.waitMsgs(t, name("client.x"), 1, time.Minute)
		osd.rec.mu.Lock()
		fromMDS, fromClient := osd.rec.peers[mds.name], osd.rec.peers[name("client.x")]
		osd.rec.mu.Unlock()
		if got, want := fromMDS.Session.PeerAddr(), fmt.Sprintf("10.0.0.2:6802/%d", mds.m.Nonce()); got != want {
			t.Errorf("an MDS's address at the OSD: %q, want %q", got, want)
		}
		if got := fromClient.Session.PeerAddr(); got != "10.0.0.3:0/77" {
			t.Errorf("a client's address at the OSD: %q, want 10.0.0.3:0/77", got)
		}
		osd.rec.waitMsgs(t, name("mds.b"), 1, time.Minute)
		osd.rec.mu.Lock()
		fromDaemonClient := osd.rec.peers[name("mds.b")]
		osd.rec.mu.Unlock()
		if got := fromDaemonClient.Session.PeerAddr(); got != "10.0.0.4:6800/99" {
			t.Errorf("a daemon's client messenger at the OSD: %q, want 10.0.0.4:6800/99", got)
		}
		s, err := client.Connect(osd.name, osd.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.PeerAddr(), fmt.Sprintf("10.0.0.1:6801/%d", osd.m.Nonce()); got != want {
			t.Errorf("the OSD's address at the client: %q, want %q", got, want)
		}
	})
}

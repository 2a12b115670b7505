package auth

import (
	"testing"
	"time"
)

// TestFullFlow drives client <-> mon <-> osd through the handshake
// interfaces, as the messenger would: the osd gets its rotating keys from
// the monitor over its own mon session, a client logs in, presents its
// osd ticket, both sides sign with the connection key, and the osd
// authorizes requests with the ticket's caps. Keys rotate while the
// ticket is outstanding.
func TestFullFlow(t *testing.T) {
	c := newCluster(t)

	// osd.0 logs in to the monitor with its secret and receives its
	// service's rotating keys, sealed under its mon session key.
	osdMon, osdSession := c.login(t, "osd.0")
	keys, _ := c.mon.ServiceKeys("osd")
	box := keys.Seal(osdSession.SessionKey())
	received, err := OpenRotatingKeys(osdMon.SessionKey(), box)
	if err != nil {
		t.Fatal(err)
	}
	var osdCount Counters
	osd, err := NewVerifier(VerifierConfig{Service: "osd", Keys: received, Now: c.clock.Now, Events: osdCount.Events()})
	if err != nil {
		t.Fatal(err)
	}

	// Late in the first key's turn, client.rbd logs in and asks for an
	// osd ticket.
	c.clock.Advance(50 * time.Minute)
	var cli ClientHandshake = NewMonClient(MonClientConfig{Name: name(t, "client.rbd"),
		Secret: c.keyring[name(t, "client.rbd")].Key, Services: []string{"osd"}})
	var mon ServerHandshake = c.mon.NewHandshake()
	if s, err := handshake(cli, mon); err != nil {
		t.Fatalf("mon login: %s: %v", s, err)
	}
	monChecker, err := NewCapChecker(mon.Peer(), mon.Caps(), Events{})
	if err != nil {
		t.Fatal(err)
	}
	if !monChecker.Allows(Request{Service: "mon", Access: AccessRead}) ||
		monChecker.Allows(Request{Service: "mon", Command: "osd pool create", Access: AccessWrite}) {
		t.Error("mon caps of client.rbd wrong")
	}
	tk := cli.(*MonClient).Tickets()[0]

	// Twenty minutes on, the keys rotate and the osd gets the new set;
	// the outstanding ticket, sealed under the previous key, still works.
	c.clock.Advance(20 * time.Minute)
	if changed := c.mon.Rotate(c.clock.Now()); len(changed) == 0 {
		t.Fatal("no rotation")
	}
	keys, _ = c.mon.ServiceKeys("osd")
	if err := osd.SetKeys(keys); err != nil {
		t.Fatal(err)
	}
	if cur, _ := keys.Current(c.clock.Now()); cur.ID == keyID(t, tk) {
		t.Fatal("ticket is under the current key; want the previous one")
	}
	cli = NewServiceClient(ServiceClientConfig{Ticket: tk, Now: c.clock.Now})
	srv := osd.NewHandshake()
	if s, err := handshake(cli, srv); err != nil {
		t.Fatalf("osd handshake: %s: %v", s, err)
	}
	if srv.Peer() != name(t, "client.rbd") {
		t.Fatalf("osd sees %v", srv.Peer())
	}

	// Frames signed by one side verify on the other, and not if altered.
	frame := []byte("osd_op write rbd/obj")
	sig := Sign(cli.SessionKey(), []byte{1}, frame)
	if !Verify(srv.SessionKey(), sig, []byte{1}, frame) {
		t.Fatal("frame signature does not verify on the osd")
	}
	if Verify(srv.SessionKey(), sig, []byte{1}, []byte("osd_op write rbd/obk")) {
		t.Fatal("altered frame verifies")
	}

	// The osd authorizes with the caps sealed in the ticket.
	checker, err := NewCapChecker(srv.Peer(), srv.Caps(), osdCount.Events())
	if err != nil {
		t.Fatal(err)
	}
	if err := checker.Check(Request{Service: "osd", Access: AccessWrite, Pool: "rbd"}); err != nil {
		t.Errorf("write to rbd: %v", err)
	}
	wantRefusal(t, checker.Check(Request{Service: "osd", Access: AccessWrite, Pool: "data"}), ReasonForbidden, &osdCount)
	if osdCount.Authenticated() != 1 {
		t.Errorf("osd authenticated %d", osdCount.Authenticated())
	}
}
